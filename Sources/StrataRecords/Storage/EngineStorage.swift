import Foundation
import StrataEngine

/// The storage seam's implementation on StrataEngine: a `Store`, shared by the containers of
/// this process that open the same file (`OpenStores`).
package final class EngineStorage: StorageBackend, @unchecked Sendable {
    package let opened: OpenStore
    package var store: Store { opened.store }
    /// A folder made for an in-memory configuration, removed with the storage.
    private let temporaryDirectory: URL?

    package init(opened: OpenStore, temporaryDirectory: URL?) {
        self.opened = opened
        self.temporaryDirectory = temporaryDirectory
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    package var isReadOnly: Bool { store.options.readOnly }
    /// The engine does not evaluate queries: the object layer reads and filters the rows.
    package var evaluatesQueries: Bool { false }
    package var rows: RowAllocator { opened.rows }
    package func read(_ body: (any StorageReader) throws -> Void) throws { try body(try beginRead()) }
    package func beginRead() throws -> any StorageReader {
        try opened.checkNotMigrated()
        return try store.beginRead()
    }
    package func beginWrite() throws -> any StorageWriter {
        try opened.checkNotMigrated()
        return try store.beginWrite()
    }
    package func sync() throws { try store.sync() }
    package func compact() throws { try store.compact() }
}

// StrataEngine's transactions are the storage seam's readers and writers.

@_spi(StorageBackend)
extension ReadTransaction: StorageReader {
    public func visitRecord(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try visitRecord(row: row, in: collection, body)
    }

    public func forEachRecord(in collection: CollectionID, from start: RowID?, _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEachRecord(in: collection, from: start, reverse: false, body)
    }

    public func forEachRecordBatch(in collection: CollectionID, from start: RowID?, _ body: (UnsafeBufferPointer<LentRecord>) throws -> Bool) throws {
        try forEachRecordBatch(in: collection, from: start, reverse: false, body)
    }

    public func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, _ body: (RowID) throws -> Bool) throws {
        var cursor = try entries(in: index, range: range, reverse: reverse)
        while let row = try cursor.nextRow() {
            if try !body(row) { return }
        }
    }

    /// Whole leaves of the index are passed over without reading their entries.
    public func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, skipping skip: Int, _ body: (RowID) throws -> Bool) throws {
        var cursor = try entries(in: index, range: range, reverse: reverse)
        _ = try cursor.skip(skip)
        while let row = try cursor.nextRow() {
            if try !body(row) { return }
        }
    }

    public func indexID(named name: String, in collection: CollectionID) -> IndexID? { index(named: name, in: collection)?.id }

    public func indexNames(of collection: CollectionID) -> [(id: IndexID, name: String)] { indexes(of: collection).map { ($0.id, $0.name) } }

    /// The commit the snapshot reads (a read-only store follows the writer's published one).
    public var commitSequence: UInt64? { sequence }

    /// StrataEngine does not evaluate queries: the object layer reads and filters the rows.
    public func candidates(_ query: StorageQuery) throws -> StoreCandidates? { nil }
}

@_spi(StorageBackend)
extension WriteTransaction: StorageWriter {
    public func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                              indexKeys: [IndexKey], previousKeys: [IndexKey]) throws -> StorageConflict? {
        try putUnlessConflicting(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys)
            .map { StorageConflict(index: $0.index, existingRow: $0.existingRow) }
    }

    public func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                              previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> StorageConflict? {
        try putUnlessConflicting(record, row: row, in: collection, indexKeys: indexKeys, previousKeysOf: previousKeysOf)
            .map { StorageConflict(index: $0.index, existingRow: $0.existingRow) }
    }
}
