import Foundation
import StrataEngine

// The storage seam: everything the object layer asks of a store, and nothing else. A
// `ModelContext` reaches storage only through these protocols; StrataEngine is their
// implementation (`EngineStorage.swift`). A second backend (a PostgreSQL one is planned, in a
// package of its own) implements them too; they are public as SPI for it:
// `@_spi(StorageBackend) import Strata`, then
// `ModelContainer(for: schema, configurations: [...], storage: MyProvider())`.
//
// The unit is the record: the object layer hands the backend a row's encoded record and its
// index keys (computed by the object layer, the same way for new and stored values) and reads
// records back by row id, by index key or index range, or all of them. A backend that can
// evaluate part of a predicate itself (a SQL server) says so (`evaluatesQueries`) and is
// offered it as `StorageQuery` terms before the object layer filters
// (`StorageReader.candidates`), so it need not ship every row. Every type the requirements
// name has a public initializer, so a backend in another package can make them.

/// A store a provider opened.
@_spi(StorageBackend)
public struct OpenedStorage {
    public let backend: any StorageBackend
    /// Names the store in messages (a path, a connection string without its password).
    public let location: String
    /// True when another container of this process has this store open already (its models
    /// must then not change under it).
    public let isShared: Bool

    public init(backend: any StorageBackend, location: String, isShared: Bool) {
        self.backend = backend
        self.location = location
        self.isShared = isShared
    }
}

/// A store, opened: snapshot reads, one writer at a time, blobs and named metadata.
@_spi(StorageBackend)
public protocol StorageBackend: AnyObject, Sendable {
    /// Opened without writes (`allowsSave: false`).
    var isReadOnly: Bool { get }
    /// True when its readers answer `candidates(_:)` (they evaluate query terms themselves).
    var evaluatesQueries: Bool { get }
    /// Row ids for new objects (shared by every container of the process on the same store).
    var rows: RowAllocator { get }
    /// Runs `body` on a snapshot of the last commit. (The requirements are not generic, so that
    /// calling them through the protocol looks up no type metadata; Strata's generic
    /// conveniences wrap them.)
    func read(_ body: (any StorageReader) throws -> Void) throws
    /// A snapshot kept open by the caller (the batches of `fetch(_:batchSize:)` read it).
    func beginRead() throws -> any StorageReader
    /// The one writer; its changes are in the store when `commit()` returns.
    func beginWrite() throws -> any StorageWriter
    /// Makes deferred commits durable.
    func sync() throws
    /// Reclaims the space of superseded records.
    func compact() throws
}

/// A snapshot of a store.
@_spi(StorageBackend)
public protocol StorageReader: AnyObject {
    func collection(named name: String) -> CollectionID?
    /// The index of `collection` named `name`, if there is one.
    func indexID(named name: String, in collection: CollectionID) -> IndexID?
    /// Every index of `collection`, with its name.
    func indexNames(of collection: CollectionID) -> [(id: IndexID, name: String)]
    /// How many records the collection holds.
    func count(in collection: CollectionID) throws -> Int
    /// One more than the largest row id the collection ever held.
    func nextRowID(in collection: CollectionID) throws -> RowID
    /// Calls `body` with a record's bytes (valid during the call only); false if there is no such row.
    func visitRecord(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool
    /// Calls `body` for each record in row id order, from `start`, until it returns false.
    func forEachRecord(in collection: CollectionID, from start: RowID?, _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws
    /// `forEachRecord` with the records lent many at a time, for a scan that reads every row
    /// (a call per row cost it about 40 instructions a row; W4). The bytes are valid during
    /// the call only. A default lends them one at a time.
    func forEachRecordBatch(in collection: CollectionID, from start: RowID?, _ body: (UnsafeBufferPointer<LentRecord>) throws -> Bool) throws
    /// The row a unique index holds `key` for (for a non-unique index: the first such row).
    func lookup(_ key: [UInt8], in index: IndexID) throws -> RowID?
    /// Calls `body` with the row of each entry of `index` in `range`, in key order (or
    /// reverse; equal keys in row order), until it returns false.
    func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, _ body: (RowID) throws -> Bool) throws
    /// The same after passing over the first `skip` entries, which a backend may do without
    /// reading them (a page deep in an index's order). A default steps over them.
    func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, skipping skip: Int, _ body: (RowID) throws -> Bool) throws
    /// The rows a backend selects itself for the terms of a query, in row id order (a superset
    /// of the rows that match: the object layer checks the whole predicate on each), or nil
    /// when it does not evaluate this query (the object layer then reads and filters every
    /// row itself). Asked only of a backend whose `evaluatesQueries` is true. A backend may
    /// skip the query's offset itself (`StoreCandidates.skippedOffset`), when it selected
    /// exactly the page in its order.
    func candidates(_ query: StorageQuery) throws -> StoreCandidates?
    /// How many rows match the query, counted by the backend itself; nil when it does not
    /// count it (the object layer then counts the rows it reads). (Default: nil.)
    func count(_ query: StorageQuery) throws -> Int?
    func blob(_ id: BlobID) throws -> [UInt8]
    /// A blob's bytes as `Data`; a backend that can hands over its bytes without a copy.
    func blobData(_ id: BlobID) throws -> Data
    func blobFileExists(_ id: BlobID) throws -> Bool
    func metadata(_ name: String) throws -> [UInt8]?
    /// A number that grows with every commit of the store, whoever made it (nil when the
    /// backend has none: observers then follow the history's newest token).
    var commitSequence: UInt64? { get }
}

extension StorageReader {
    public var commitSequence: UInt64? { nil }
    public func count(_ query: StorageQuery) throws -> Int? { nil }

    /// A blob's bytes, copied into a `Data`.
    public func blobData(_ id: BlobID) throws -> Data { Data(try blob(id)) }

    /// Lends the records one at a time.
    public func forEachRecordBatch(in collection: CollectionID, from start: RowID?, _ body: (UnsafeBufferPointer<LentRecord>) throws -> Bool) throws {
        try forEachRecord(in: collection, from: start) { row, bytes in
            try withUnsafePointer(to: LentRecord(row: row, bytes: bytes)) { try body(UnsafeBufferPointer(start: $0, count: 1)) }
        }
    }

    /// Steps over the first `skip` entries.
    public func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, skipping skip: Int, _ body: (RowID) throws -> Bool) throws {
        var skipped = 0
        try forEachEntry(in: index, range: range, reverse: reverse) { row in
            if skipped < skip { skipped += 1; return true }
            return try body(row)
        }
    }
}

/// The one writer of a store: everything it does is in the store after `commit()`, or nothing.
@_spi(StorageBackend)
public protocol StorageWriter: StorageReader {
    func createCollection(named name: String) throws -> CollectionID
    func createIndex(named name: String, on collection: CollectionID, unique: Bool) throws -> IndexID
    func dropIndex(_ index: IndexID) throws
    /// Stores `record` as `row` with the index keys `indexKeys`; `previousKeys` are the keys the
    /// row was stored with (empty for a new row). The object layer calls it only where no
    /// unique key can be held by another row (it checked, or the keys did not change).
    func put(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey], previousKeys: [IndexKey]) throws
    /// `put`, except that when a unique index holds one of `indexKeys` for another row, that
    /// conflict is returned and nothing is changed.
    func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                       indexKeys: [IndexKey], previousKeys: [IndexKey]) throws -> StorageConflict?
    /// `putUnlessHeld` for a row that may be stored, whose previous keys come from its stored
    /// record: `previousKeysOf` gets the record (valid during the call only) and returns the
    /// keys it was stored with; it is not called when there is no such row. A backend that can
    /// finds the row once for both (StrataEngine does); a default reads it, then puts.
    func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                       previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> StorageConflict?
    /// Deletes a row stored with `indexKeys`; false if there was no such row.
    @discardableResult
    func delete(_ row: RowID, in collection: CollectionID, indexKeys: [IndexKey]) throws -> Bool
    /// Deletes a row whose index keys come from its stored record: `indexKeysOf` gets the
    /// record (valid during the call only) and returns the keys it was stored with; false if
    /// there was no such row. A backend that can finds the row once for both (StrataEngine
    /// does); a default reads the record, then deletes the row.
    @discardableResult
    func delete(_ row: RowID, in collection: CollectionID, indexKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> Bool
    func putBlob(_ bytes: [UInt8]) throws -> BlobID
    func deleteBlob(_ id: BlobID) throws
    func setMetadata(_ name: String, _ value: [UInt8]?) throws
    func commit() throws
    func rollback()
    /// After `commit()`: new rows the backend put where a row it held is (an insert it
    /// resolved onto a stored object by a unique value), by collection. (Default: none.)
    var movedRows: [CollectionID: [RowID: RowID]] { get }
    /// The row to put a save's history record at, in the history collection: its token.
    /// (Default: `nextRowID(in:)`. A backend that gives the token itself when it commits, a
    /// custom store that records its history, answers any row without asking the store: the
    /// question cost each save a round trip to a server.)
    func rowForNewHistoryRecord(in collection: CollectionID) throws -> RowID
}

extension StorageWriter {
    public var movedRows: [CollectionID: [RowID: RowID]] { [:] }

    public func rowForNewHistoryRecord(in collection: CollectionID) throws -> RowID { try nextRowID(in: collection) }

    /// Reads the record (if the row is stored), then puts the row with the keys it gives.
    public func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                              previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> StorageConflict? {
        var previous: [IndexKey] = []
        _ = try visitRecord(row, in: collection) { previous = try previousKeysOf($0) }
        return try putUnlessHeld(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previous)
    }

    /// Reads the record, then deletes the row with the keys it gives.
    @discardableResult
    public func delete(_ row: RowID, in collection: CollectionID, indexKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> Bool {
        var keys: [IndexKey] = []
        guard try visitRecord(row, in: collection, { keys = try indexKeysOf($0) }) else { return false }
        return try delete(row, in: collection, indexKeys: keys)
    }
}

/// A unique key held by another row: the index, and the row that holds it.
@_spi(StorageBackend)
public struct StorageConflict: Sendable, Hashable {
    public let index: IndexID
    public let existingRow: RowID
    public init(index: IndexID, existingRow: RowID) {
        self.index = index
        self.existingRow = existingRow
    }
}

/// A query as a backend may evaluate it: the conditions at the top of a predicate (joined by
/// `&&`) that compare an indexed property with constants, as index keys. The backend holds
/// each row's keys of that index (`put`'s `indexKeys`), so it can select the rows whose key
/// compares as a term says, byte by byte (`KeyEncoding` keys sort as their values do where a
/// term orders them). The object layer still checks the whole predicate on every row a
/// backend returns.
@_spi(StorageBackend)
public struct StorageQuery: Sendable {
    /// One condition: the rows whose key in `index` (the index of one property, named
    /// `property`) compares with `keys` as `comparison` says: `equal` the one key, `oneOf` any
    /// of them, `prefix` starting with the one key, the others ordered against the one key.
    public struct Term: Sendable, Hashable {
        public enum Comparison: Sendable, Hashable { case equal, less, lessOrEqual, greater, greaterOrEqual, oneOf, prefix }
        public let index: IndexID
        public let property: String
        public let comparison: Comparison
        public let keys: [[UInt8]]

        package init(index: IndexID, property: String, comparison: Comparison, keys: [[UInt8]]) {
            self.index = index
            self.property = property
            self.comparison = comparison
            self.keys = keys
        }
    }

    public let collection: CollectionID
    public let terms: [Term]
    /// For a custom store (`DataStore`): the fetch to ask it, with the descriptor
    /// (CustomStores' `StoreFetchAttachment`; the seam carries it without knowing it).
    package var attachment: QueryAttachment? = nil
    /// For a custom store: rows the context's unsaved changes take out of the store's answer,
    /// which a limit sent to the store must leave room for.
    package var pendingRows = 0

    package init(collection: CollectionID, terms: [Term], attachment: QueryAttachment? = nil, pendingRows: Int = 0) {
        self.collection = collection
        self.terms = terms
        self.attachment = attachment
        self.pendingRows = pendingRows
    }
}

/// What a layer above the seam attaches to a `StorageQuery` for a backend of its own to read
/// (a custom store's fetch): opaque to the seam, and a class, so that reading it back is a
/// class check rather than a search of the process's protocol conformances.
@_spi(StorageBackend)
open class QueryAttachment: @unchecked Sendable {
    public init() {}
}

/// A copy of a store that a migration changes, then puts in the store's place: the storage
/// seam's part of a migration (the object layer runs the stages on the copy, through a
/// container opened at `url` with the same provider). The store stays as it was until
/// `replaceOriginal()` returns, and is migrated from then on, whatever fails or crashes.
@_spi(StorageBackend)
public protocol PreparedStoreCopy: AnyObject {
    /// Where the copy is: a container opened with this URL (and the same provider) works on it.
    var url: URL { get }
    /// Reads the store being migrated (its metadata: the recorded version and schema).
    func read(_ body: (any StorageReader) throws -> Void) throws
    /// Makes the copy (`progress`: bytes done of bytes in all).
    func make(progress: (Int64, Int64) -> Void) throws
    /// Writes a metadata entry of the copy.
    func setMetadata(_ name: String, _ value: [UInt8]) throws
    /// Puts the copy in the store's place, durably.
    func replaceOriginal() throws
    /// Takes the copy away after a failure before `replaceOriginal()` finished.
    func discard()
    /// Cleans up after `replaceOriginal()`.
    func finish()
    /// True once the copy took the store's place.
    var replaced: Bool { get }
}

extension PreparedStoreCopy {
    package func read<R>(_ body: (any StorageReader) throws -> R) throws -> R {
        var result: R? = nil
        try read { (reader: any StorageReader) in result = try body(reader) }
        return result!
    }
}

extension StorageBackend {
    /// Runs `body` on a snapshot of the last commit and returns what it returns.
    @inline(__always)
    package func read<R>(_ body: (any StorageReader) throws -> R) throws -> R {
        var result: R? = nil
        try read { (reader: any StorageReader) in result = try body(reader) }
        return result!
    }
}

extension StorageReader {
    /// Calls `body` with a record's bytes; nil if there is no such row.
    @inline(__always)
    package func withRecord<R>(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        var result: R? = nil
        _ = try visitRecord(row, in: collection) { result = try body($0) }
        return result
    }
}

/// The rows a backend selected for a query (`StorageReader.candidates`). Strata-only, part of
/// the storage seam's SPI as `StorageQuery` is (SwiftData has no such seam).
@_spi(StorageBackend)
public struct StoreCandidates: Sendable {
    public let rows: [RowID]
    /// True when the backend left out the rows before the query's offset (a custom store asked
    /// with it): the object layer then pages from the first row.
    public let skippedOffset: Bool

    public init(rows: [RowID], skippedOffset: Bool = false) {
        self.rows = rows
        self.skippedOffset = skippedOffset
    }
}
