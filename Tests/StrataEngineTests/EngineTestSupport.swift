// Small helpers shared by the engine's functional tests: a temporary directory per test,
// a seeded random number generator, and a dump of a store's whole contents for comparisons.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

/// A fresh temporary directory for one test's stores: each store left in it is verified when
/// the directory goes, and a problem is an issue of the test (`TestStore`).
final class EngineTestDirectory: TestStore, @unchecked Sendable {
    init(_ name: String = #function) throws { super.init(name, report: { Issue.record(Comment(rawValue: $0)) }) }
}


/// Everything a store holds, in a form that compares with `==`.
struct EngineStoreDump: Equatable, CustomStringConvertible {
    var collections: [String: [RowID: [UInt8]]] = [:]
    var counts: [String: Int] = [:]
    /// Per "collection/index": every entry in key order.
    var indexes: [String: [IndexEntryDump]] = [:]
    var blobs: [BlobID: [UInt8]] = [:]
    var metadata: [String: [UInt8]] = [:]

    struct IndexEntryDump: Equatable { var key: [UInt8]; var row: RowID; var unique: Bool }

    var description: String {
        "\(collections.mapValues(\.count)) rows, \(indexes.mapValues(\.count)) index entries, \(blobs.count) blobs, \(metadata.count) metadata"
    }

    /// Reads everything through `tx`; `metadataNames` are the metadata values to read.
    init(_ tx: ReadTransaction, metadataNames: [String] = []) throws {
        for name in tx.collectionNames {
            let c = try #require(tx.collection(named: name))
            var rows: [RowID: [UInt8]] = [:]
            var cursor = try tx.rows(in: c)
            while let (row, record) = try cursor.next() { rows[row] = record }
            collections[name] = rows
            counts[name] = try tx.count(in: c)
            for index in tx.indexes(of: c) {
                var entries: [IndexEntryDump] = []
                var ic = try tx.entries(in: index.id)
                while let (key, row) = try ic.next() { entries.append(IndexEntryDump(key: key, row: row, unique: index.isUnique)) }
                indexes["\(name)/\(index.name)"] = entries
            }
        }
        for id in try tx.blobIDs() { blobs[id] = try tx.blob(id) }
        for name in metadataNames { metadata[name] = try tx.metadata(name) }
    }
}

/// Unsigned lexicographic order of byte strings (the order of the B-tree), fast even in debug builds.
func bytesPrecede(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    let common = Swift.min(a.count, b.count)
    let c = a.withUnsafeBytes { x in b.withUnsafeBytes { y in common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common) } }
    return c != 0 ? c < 0 : a.count < b.count
}

/// Asserts that `body` throws a `StoreError` with `code`, and returns it.
@discardableResult
func expectStoreError<R>(_ code: StoreError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> R) -> StoreError? {
    do {
        _ = try body()
        Issue.record("expected StoreError \(code), but nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        #expect(error.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected StoreError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Asserts that the store's `verify()` finds nothing wrong.
func expectClean(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let report = try store.verify()
    #expect(report.isClean, "verify: \(report)", sourceLocation: sourceLocation)
}
