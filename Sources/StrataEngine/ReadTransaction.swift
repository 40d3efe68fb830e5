/// The state of one commit: what a read transaction sees, whatever writers do meanwhile.
struct Snapshot: Sendable {
    let sequence: UInt64
    let root: PageRef?
    let catalog: Catalog
    /// Offset of this commit's commit record (0 for an empty store with no commit yet).
    let commitOffset: UInt64
    /// The end of this commit's record: nothing of this snapshot lies at or after it.
    let end: UInt64
    let file: StoreFile
}

/// A consistent view of the store as of one commit.
///
/// Readers never block the writer and never see its uncommitted changes. A read transaction
/// holds on to its commit's pages (even across a compaction) until it is released.
///
/// ```swift
/// try store.read { tx in
///     guard let users = tx.collection(named: "users") else { return }
///     print(try tx.count(in: users))
/// }
/// ```
public class ReadTransaction {
    let store: Store
    let file: StoreFile
    let base: Snapshot
    var catalog: Catalog
    var root: Child?
    var reader: TreeReader
    /// Counted among the store's live readers (see `Store.beginRead`), so blob files it can
    /// see are kept until it is released.
    var isRegistered = false

    init(store: Store, snapshot: Snapshot) {
        self.store = store
        self.file = snapshot.file
        self.base = snapshot
        self.catalog = snapshot.catalog
        self.root = snapshot.root.map { .page($0) }
        self.reader = TreeReader(file: snapshot.file, limit: snapshot.end)
    }

    deinit {
        if isRegistered { store.releaseReader(base.sequence) }
    }

    /// The sequence number of the commit this transaction reads (0 for an empty new store).
    public var sequence: UInt64 { base.sequence }

    // MARK: Catalog

    /// The collection with this name, if it exists.
    public func collection(named name: String) -> CollectionID? {
        catalog.collection(named: name).map { CollectionID(rawValue: $0.id) }
    }

    /// The names of every collection, in the order they were created.
    public var collectionNames: [String] { catalog.collections.map(\.name) }

    /// The name of a collection.
    public func name(of collection: CollectionID) -> String? {
        catalog.collections.first { $0.id == collection.rawValue }?.name
    }

    /// The indexes of a collection.
    public func indexes(of collection: CollectionID) -> [IndexDescription] {
        catalog.indexes.filter { $0.collection == collection.rawValue }.map(Self.describe)
    }

    /// The index of `collection` with this name, if it exists.
    public func index(named name: String, in collection: CollectionID) -> IndexDescription? {
        catalog.indexes.first { $0.collection == collection.rawValue && $0.name == name }.map(Self.describe)
    }

    static func describe(_ i: IndexInfoRecord) -> IndexDescription {
        IndexDescription(id: IndexID(rawValue: i.id), collection: CollectionID(rawValue: i.collection), name: i.name, isUnique: i.unique)
    }

    /// The number of records in a collection. Costs nothing: the count is kept in the catalog.
    public func count(in collection: CollectionID) throws -> Int {
        guard let info = catalog.collections.first(where: { $0.id == collection.rawValue }) else {
            throw missingCollection(collection)
        }
        return Int(info.count)
    }

    /// One more than the largest row id ever stored in the collection.
    public func nextRowID(in collection: CollectionID) throws -> RowID {
        guard let info = catalog.collections.first(where: { $0.id == collection.rawValue }) else {
            throw missingCollection(collection)
        }
        return info.nextRowID
    }

    func missingCollection(_ c: CollectionID) -> StoreError {
        StoreError(.notFound, "No collection \(c) in this store; create it with createCollection(named:) first.", path: store.path)
    }

    // MARK: Records

    /// Calls `body` with the bytes of a record frame at `location`, wherever they are.
    func withFrame<R>(_ location: RecordLocation, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try file.withCheckedRecord(at: location.offset, count: Int(location.length), limit: reader.limit, body)
    }

    /// Decodes a row's record location; `what` names the row for the error (built only then:
    /// this runs for every record read).
    func location(_ raw: UnsafeRawBufferPointer, at what: @autoclosure () -> String) throws -> RecordLocation {
        guard let location = RecordLocation.decode(raw) else {
            throw StoreError.corrupt("a malformed record location in \(what())", path: store.path, offset: nil)
        }
        return location
    }

    /// Calls `body` with a record's bytes (valid only during the call); nil if there is no such row.
    public func withRecord<R>(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let key = TreeKey.row(collection.rawValue, row)
        guard let location = try key.withUnsafeBytes({ k in
            try reader.withValue(root: root, key: k) { try self.location($0, at: "row \(row)") }
        }) else { return nil }
        return try withFrame(location, body)
    }

    /// A copy of a record's bytes, or nil if there is no such row.
    public func record(_ row: RowID, in collection: CollectionID) throws -> [UInt8]? {
        try withRecord(row, in: collection) { Array($0) }
    }

    /// True if the collection holds the row.
    public func contains(_ row: RowID, in collection: CollectionID) throws -> Bool {
        let key = TreeKey.row(collection.rawValue, row)
        return try key.withUnsafeBytes { try reader.withValue(root: root, key: $0) { _ in true } } ?? false
    }

    /// Calls `body` for each record of the collection in row id order (or reverse), starting at
    /// `start` when given, until it returns false. The bytes are valid only during the call.
    public func forEachRecord(in collection: CollectionID, from start: RowID? = nil, reverse: Bool = false,
                              _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        var cursor = try rows(in: collection, from: start, reverse: reverse)
        while let (row, location) = try cursor.nextLocation() {
            if try !withFrame(location, { try body(row, $0) }) { return }
        }
    }

    /// A cursor over the records of a collection in row id order (or reverse).
    public func rows(in collection: CollectionID, from start: RowID? = nil, reverse: Bool = false) throws -> RowCursor {
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        return try RowCursor(transaction: self, collection: collection.rawValue, start: start, reverse: reverse)
    }

    // MARK: Indexes

    /// The row holding `key` in a unique index (for a non-unique index: the first such row).
    public func lookup(_ key: [UInt8], in index: IndexID) throws -> RowID? {
        guard let info = catalog.index(index.rawValue) else { throw missingIndex(index) }
        if info.unique {
            let treeKey = TreeKey.indexEntry(index.rawValue, key, row: nil)
            return try treeKey.withUnsafeBytes { k in
                try reader.withValue(root: root, key: k) { v -> RowID in
                    guard v.count == 8 else {
                        throw StoreError.corrupt("a malformed unique-index entry", path: store.path, offset: nil)
                    }
                    return v.loadLE64(0)
                }
            }
        }
        var cursor = try entries(in: index, range: .exact(key))
        return try cursor.next()?.row
    }

    /// A cursor over the entries of an index whose keys fall in `range`, in key order (or reverse).
    /// Entries with equal keys (non-unique index) come in row id order.
    public func entries(in index: IndexID, range: KeyRange = .all, reverse: Bool = false) throws -> IndexCursor {
        guard let info = catalog.index(index.rawValue) else { throw missingIndex(index) }
        return try IndexCursor(transaction: self, index: info, range: range, reverse: reverse)
    }

    /// Counts the entries of an index in `range` without reading any record.
    public func countEntries(in index: IndexID, range: KeyRange = .all) throws -> Int {
        var cursor = try entries(in: index, range: range)
        var n = 0
        while try cursor.advance() { n += 1 }
        return n
    }

    func missingIndex(_ index: IndexID) -> StoreError {
        StoreError(.notFound, "No \(index) in this store; create it with createIndex(named:on:unique:) first.", path: store.path)
    }

    // MARK: Blobs and metadata

    /// The bytes of a blob. Throws `.notFound` if there is no such blob and `.corrupt` if its
    /// file is missing or damaged.
    public func blob(_ id: BlobID) throws -> [UInt8] {
        let key = TreeKey.blob(id.rawValue)
        guard let (length, crc) = try key.withUnsafeBytes({ k in
            try reader.withValue(root: root, key: k) { v -> (UInt64, UInt32) in
                guard v.count == 12 else { throw StoreError.corrupt("a malformed blob entry", path: store.path, offset: nil) }
                return (v.loadLE64(0), v.loadLE32(8))
            }
        }) else {
            throw StoreError(.notFound, "No \(id) in this store.", path: store.path)
        }
        return try store.blobs.read(id.rawValue, length: length, checksum: crc)
    }

    /// The length of a blob without reading it, or nil if there is no such blob.
    /// True when the blob is recorded and its file is present (without reading it).
    public func blobFileExists(_ id: BlobID) throws -> Bool {
        guard try blobLength(id) != nil else { return false }
        return store.fileSystem.fileExists(store.blobs.filePath(id.rawValue))
    }

    public func blobLength(_ id: BlobID) throws -> Int? {
        try TreeKey.blob(id.rawValue).withUnsafeBytes { k in
            try reader.withValue(root: root, key: k) { v in
                guard v.count == 12, let length = Int(exactly: v.loadLE64(0)) else {
                    throw StoreError.corrupt("a malformed blob entry", path: store.path, offset: nil)
                }
                return length
            }
        }
    }

    /// Every blob id, in order.
    public func blobIDs() throws -> [BlobID] {
        var ids: [BlobID] = []
        var cursor = TreeCursor(root: root, reader: reader)
        try cursor.seek(atLeast: [TreeKey.blobTag])
        while cursor.isValid {
            let id: UInt64? = cursor.withKey { k in k.count == 9 && k[0] == TreeKey.blobTag ? k.loadBE64(1) : nil }
            guard let id else { break }
            ids.append(BlobID(rawValue: id))
            try cursor.next()
        }
        return ids
    }

    /// A named metadata value (such as a schema), or nil.
    public func metadata(_ name: String) throws -> [UInt8]? {
        let key = TreeKey.metadata(name)
        guard let location = try key.withUnsafeBytes({ k in
            try reader.withValue(root: root, key: k) { try self.location($0, at: "metadata \(name)") }
        }) else { return nil }
        return try withFrame(location) { Array($0) }
    }
}
