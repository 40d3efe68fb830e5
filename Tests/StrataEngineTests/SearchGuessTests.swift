// A page is searched with a guess first (Page.swift): in a leaf, the cell as far from the first
// as a dense key (a row id) is from the first key; in a branch, where the key falls between the
// first and last separators. A guess only narrows a binary search, so keys that are not dense
// or not evenly spread must be found exactly as before. Here trees of dense rows, rows with
// gaps of every size, evenly spread and clustered index keys, and keys of many lengths are
// read back, every present key and the absent ones around them, against a model; in a
// committed store (pages read from the file) and in the transaction that wrote them (nodes).
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct SearchGuessTests {
    /// Row sets: dense, every other row, random gaps of 1 to 40, runs with long holes.
    static func rowSets() -> [(String, [RowID])] {
        var g = SeededGenerator(seed: 7)
        var gappy: [RowID] = []
        var row: RowID = 5
        while gappy.count < 2500 { gappy.append(row); row += RowID.random(in: 1...40, using: &g) }
        var runs: [RowID] = []
        row = 1
        while runs.count < 2500 {
            for _ in 0..<Int.random(in: 1...60, using: &g) { runs.append(row); row += 1 }
            row += RowID.random(in: 100...100_000, using: &g)
        }
        return [("dense", Array(1...3000)), ("every other", stride(from: 2, through: 6000, by: 2).map { $0 }),
                ("random gaps", gappy), ("runs and holes", runs)]
    }

    @Test func rowsAreFoundWhateverTheirGaps() throws {
        for (name, rows) in Self.rowSets() {
            let dir = try EngineTestDirectory()
            let store = try Store(path: dir.path(), options: StoreOptions())
            let present = Set(rows)
            var probes = Set<RowID>([0, 1, 2, RowID.max, RowID.max - 1])
            for r in rows { probes.formUnion([r - 1, r, r + 1, r + 2]) }
            func check(_ tx: ReadTransaction, _ c: CollectionID, _ when: String) throws {
                for r in probes.sorted() {
                    let record = try tx.record(r, in: c)
                    #expect((record != nil) == present.contains(r), "\(name), \(when): row \(r)")
                    if let record { #expect(record == Self.record(r), "\(name), \(when): row \(r)") }
                }
            }
            let c = try store.write { tx throws in
                let c = try tx.createCollection(named: "c")
                for r in rows { try tx.put(Self.record(r), row: r, in: c) }
                try check(tx, c, "in the writing transaction")
                return c
            }
            try store.read { tx throws in try check(tx, c, "committed") }
            // Half the rows go (every other one, then a block): the leaves change, some shrink.
            let removed = Set(rows.enumerated().filter { $0.offset % 2 == 0 || ($0.offset > 1000 && $0.offset < 1400) }.map(\.element))
            try store.write { tx throws in
                for r in removed.sorted() { #expect(try tx.delete(r, in: c)) }
            }
            let left = present.subtracting(removed)
            try store.read { tx throws in
                for r in probes.sorted() {
                    #expect(try tx.contains(r, in: c) == left.contains(r), "\(name), after removals: row \(r)")
                }
            }
        }
    }

    /// Index keys: integers dense and sparse (keys of one length), random 16-byte values
    /// (evenly spread), clustered values (a few shared leading bytes), strings of many lengths.
    static func keySets() -> [(String, [[UInt8]])] {
        var g = SeededGenerator(seed: 11)
        let dense = (0..<2000).map { KeyEncoding.encode($0) }
        let sparse = (0..<2000).map { _ in KeyEncoding.encode(Int.random(in: -1_000_000_000...1_000_000_000, using: &g)) }
        let random = (0..<2000).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) } }
        let clustered = (0..<2000).map { i in [UInt8(i % 3), 0, 0, 0, 0, 0, 0] + (0..<6).map { _ in UInt8.random(in: 0...3, using: &g) } }
        let strings = (0..<2000).map { i in KeyEncoding.encode(String(repeating: "k", count: i % 13) + "\(i * 7919 % 2003)") }
        return [("dense ints", dense), ("sparse ints", sparse), ("random bytes", random), ("clustered", clustered), ("strings", strings)]
    }

    @Test func indexKeysAreFoundWhateverTheirSpread() throws {
        for (name, keyList) in Self.keySets() {
            let keys = Array(Set(keyList)).sorted { compareBytes($0, $1) < 0 }
            let dir = try EngineTestDirectory()
            let store = try Store(path: dir.path(), options: StoreOptions())
            var owner: [[UInt8]: RowID] = [:]
            for (i, k) in keys.enumerated() { owner[k] = RowID(i + 1) }
            // Absent keys: each key with a byte added, one shortened, one bumped at its last byte.
            var absent: [[UInt8]] = [[], [0], [255, 255, 255, 255, 255, 255, 255, 255, 255]]
            for k in keys {
                absent.append(k + [0])
                if k.count > 1 { absent.append(Array(k.dropLast())) }
                var bumped = k
                bumped[bumped.count - 1] &+= 1
                absent.append(bumped)
            }
            absent = absent.filter { owner[$0] == nil }
            func check(_ tx: ReadTransaction, _ index: IndexID, _ when: String) throws {
                for (k, row) in owner { #expect(try tx.lookup(k, in: index) == row, "\(name), \(when): \(k)") }
                for k in absent { #expect(try tx.lookup(k, in: index) == nil, "\(name), \(when): absent \(k)") }
            }
            let (c, index) = try store.write { tx throws in
                let c = try tx.createCollection(named: "c")
                let index = try tx.createIndex(named: "k", on: c, unique: true)
                for (k, row) in owner { try tx.put([1], row: row, in: c, indexKeys: [IndexKey(index, k)]) }
                try check(tx, index, "in the writing transaction")
                return (c, index)
            }
            try store.read { tx throws in try check(tx, index, "committed") }
            // Every third key goes: the leaves that keep the rest are searched again.
            let removed = owner.filter { $0.value % 3 == 0 }
            try store.write { tx throws in
                for (k, row) in removed { #expect(try tx.delete(row, in: c, indexKeys: [IndexKey(index, k)])) }
            }
            for (k, _) in removed { owner[k] = nil; absent.append(k) }
            try store.read { tx throws in try check(tx, index, "after removals") }
        }
    }

    /// A branch's guess places keys by their first 8 bytes as one big-endian number, zeros
    /// after a shorter key (read 4, 2 and 1 bytes at a time). A wrong number only misplaces the
    /// guess, which the searches above survive, so it is checked here against a byte loop:
    /// for every length from 0 to 10, and bytes with their high bits set.
    @Test func leadingBytesAreTheKeysFirstEightAsABigEndianNumber() {
        var g = SeededGenerator(seed: 11)
        for length in 0...10 {
            for _ in 0..<50 {
                let key = (0..<length).map { _ in UInt8.random(in: 0...255, using: &g) }
                var expected: UInt64 = 0
                for i in 0..<8 { expected = expected << 8 | (i < key.count ? UInt64(key[i]) : 0) }
                let found = key.withUnsafeBytes { PageView.leadingBytes($0) }
                #expect(found == expected, "\(key)")
            }
        }
        // Order: a key's number never exceeds that of a key above it (up to their first 8 bytes).
        let keys: [[UInt8]] = [[], [0], [0, 0], [0, 1], [1], [1, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0xFF], [0xFF, 0xFF, 0xFF]]
        let numbers = keys.map { k in k.withUnsafeBytes { PageView.leadingBytes($0) } }
        #expect(numbers == numbers.sorted())
    }

    static func record(_ row: RowID) -> [UInt8] {
        (0..<(60 + Int(row % 50))).map { UInt8(truncatingIfNeeded: Int(row) &* 31 &+ $0) }
    }
}
