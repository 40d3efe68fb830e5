// A writer and a reader in two processes on one store (LockTests, StrataTestHelper
// `read-check`): every commit the writer makes leaves the store in a state the reader can
// check on its own, so a reader that ever sees part of a commit, or a blob file that went
// while it could see it, finds out.

import Foundation
import StrataEngine

/// The commits of the side-by-side test. Commit s (1, 2, ...) puts row s, rewrites row 1,
/// deletes row s - 10, replaces the blob, and records s; every 20th is followed by a compaction.
public enum SideBySideWorkload {
    public static let collection = "c"

    /// The record of `row` as commit `s` writes it (row 1 is rewritten by every commit).
    /// Every 7th is longer than a page keeps inline.
    public static func record(row: UInt64, s: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        withUnsafeBytes(of: s.littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: row.littleEndian) { bytes.append(contentsOf: $0) }
        let length = s % 7 == 0 ? 3000 : Int((row &* 37 &+ s) % 300)
        bytes += (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(row) &+ Int(s)) }
        return bytes
    }

    public static func blob(s: UInt64) -> [UInt8] { (0..<(1000 + Int(s % 50) * 10)).map { UInt8(truncatingIfNeeded: $0 ^ Int(s)) } }

    /// The rows after commit s.
    public static func rows(after s: UInt64) -> [UInt64] {
        guard s > 0 else { return [] }
        return Array(Set([1] + (Swift.max(2, s >= 10 ? s - 9 : 2)...Swift.max(s, 2)).filter { $0 <= s })).sorted()
    }

    static func keys(_ row: UInt64, _ key: IndexID, _ parity: IndexID) -> [IndexKey] {
        [IndexKey(key, KeyEncoding.encode(Int(row))), IndexKey(parity, KeyEncoding.encode(Int(row % 2)))]
    }

    /// Makes commit s on the writer's store.
    public static func commit(_ s: UInt64, on store: Store) throws {
        try store.write { tx in
            let c = try tx.createCollection(named: collection)
            let key = try tx.createIndex(named: "key", on: c, unique: true)
            let parity = try tx.createIndex(named: "parity", on: c, unique: false)
            try tx.put(record(row: s, s: s), row: s, in: c, indexKeys: keys(s, key, parity))
            if s > 1 { try tx.put(record(row: 1, s: s), row: 1, in: c, indexKeys: keys(1, key, parity), previousKeys: keys(1, key, parity)) }
            if s > 11 { try tx.delete(s - 10, in: c, indexKeys: keys(s - 10, key, parity)) }
            if let old = try tx.metadata("blob") { try tx.deleteBlob(BlobID(rawValue: old.loadLE64(0))) }
            let blob = try tx.putBlob(blob(s: s))
            try tx.setMetadata("blob", withUnsafeBytes(of: blob.rawValue.littleEndian, Array.init))
            try tx.setMetadata("s", withUnsafeBytes(of: s.littleEndian, Array.init))
        }
        if s % 20 == 0 { try store.compact() }
    }

    /// Checks one snapshot; returns its s (0 before the first commit), or throws a description
    /// of what is wrong.
    public static func check(_ tx: ReadTransaction) throws -> UInt64 {
        guard let sBytes = try tx.metadata("s") else { return 0 }
        let s = sBytes.loadLE64(0)
        guard let c = tx.collection(named: collection), let key = tx.index(named: "key", in: c)?.id,
              let parity = tx.index(named: "parity", in: c)?.id else { throw SideBySideProblem("commit \(s): no collection or index") }
        let expected = rows(after: s)
        var seen: [UInt64] = []
        var cursor = try tx.rows(in: c)
        while let (row, bytes) = try cursor.next() {
            seen.append(row)
            let want = record(row: row, s: row == 1 ? s : row)
            guard bytes == want else { throw SideBySideProblem("commit \(s): row \(row) holds a record of another commit") }
        }
        guard seen == expected, try tx.count(in: c) == expected.count else {
            throw SideBySideProblem("commit \(s): rows \(seen), count \(try tx.count(in: c)), expected \(expected)")
        }
        for row in expected {
            guard try tx.lookup(KeyEncoding.encode(Int(row)), in: key) == row else { throw SideBySideProblem("commit \(s): row \(row) missing from the unique index") }
        }
        var entries = try tx.entries(in: key)
        var keyEntries = 0
        while try entries.advance() { keyEntries += 1 }
        guard keyEntries == expected.count, try tx.countEntries(in: parity, range: .exact(KeyEncoding.encode(0))) == expected.filter({ $0 % 2 == 0 }).count else {
            throw SideBySideProblem("commit \(s): the indexes do not hold the rows")
        }
        guard let blobID = try tx.metadata("blob") else { throw SideBySideProblem("commit \(s): no blob") }
        guard try tx.blob(BlobID(rawValue: blobID.loadLE64(0))) == blob(s: s) else { throw SideBySideProblem("commit \(s): the blob differs") }
        return s
    }
}

public struct SideBySideProblem: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
