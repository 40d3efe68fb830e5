import Foundation

/// The state of one commit: what a read transaction sees, whatever writers do meanwhile.
struct Snapshot: Sendable {
    let sequence: UInt64
    let catalog: Catalog
    /// Offset of this commit's commit record.
    let commitOffset: UInt64
    /// The end of this commit's record: nothing of this snapshot lies at or after it.
    let end: UInt64
    let file: StoreFile
    /// A mapping of `file` that covers `end`.
    let map: MappedFile
}

/// One of a store's trees.
enum TreeID: Hashable {
    case rows(UInt32)
    case index(UInt32)
    case system
}

/// A consistent view of the store as of one commit.
///
/// Readers never block the writer and never see its uncommitted changes. A read transaction
/// holds on to its commit's pages (even across a compaction) until it is released. Pages are
/// read where they lie in the mapped file, each checked the first time the process reads it.
///
/// ```swift
/// try store.read { tx in
///     guard let users = tx.collection(named: "users") else { return }
///     print(try tx.count(in: users))
/// }
/// ```
public class ReadTransaction {
    /// The store it reads, weakly: the store keeps the transaction of its current commit to
    /// share among its readers (`Store.beginRead`), so a strong reference would keep the store
    /// (and its file lock) alive forever. What reads need of the store is held here directly.
    private weak var owner: Store?
    /// The store file's path (for errors), its blob files and its file system.
    let path: String
    let blobs: BlobFolder
    let fileSystem: any FileSystem
    let file: StoreFile
    let base: Snapshot
    @exclusivity(unchecked) var catalog: Catalog
    let pages: PageSource
    /// Counted among the store's live readers (see `Store.beginRead`), so blob files it can
    /// see are kept until it is released.
    @exclusivity(unchecked) var isRegistered = false

    init(store: Store, snapshot: Snapshot, writer: AppendWriter? = nil) {
        owner = store
        path = store.path
        blobs = store.blobs
        fileSystem = store.fileSystem
        self.file = snapshot.file
        self.base = snapshot
        self.catalog = snapshot.catalog
        self.pages = PageSource(map: snapshot.map, limit: writer?.flushedEnd ?? snapshot.end, writer: writer)
    }

    deinit {
        // A store that is gone has no readers to count.
        if isRegistered { owner?.releaseReader(base.sequence) }
    }

    /// The sequence number of the commit this transaction reads (0 for an empty new store).
    public var sequence: UInt64 { base.sequence }

    // MARK: Trees

    /// The root of a tree as this transaction sees it.
    func root(_ tree: TreeID) -> TreeRef? {
        // Each descent starts here: the root is read in place, without copying a catalog
        // entry (and retaining and releasing its name) to find it.
        switch tree {
        case .rows(let c):
            let collections = catalog.collections
            for i in collections.indices where collections[i].id == c { return TreeRef(root: collections[i].root) }
            return nil
        case .index(let x):
            let indexes = catalog.indexes
            for i in indexes.indices where indexes[i].id == x { return TreeRef(root: indexes[i].root) }
            return nil
        case .system: return TreeRef(root: catalog.systemRoot)
        }
    }

    /// The tree a write transaction changes (nil in a read transaction).
    func changing(_ tree: TreeID) -> MutableTree? { nil }

    @inline(__always)
    func find(_ key: UnsafeRawBufferPointer, in tree: TreeID) throws -> LeafPosition? {
        try TreeSearch.find(key, root: root(tree), pages: pages)
    }

    /// `find` in a tree whose root is a page (so it has no changed nodes): the cell's page and
    /// position, with no node to keep alive. (A `LeafPosition?`, which may hold a node, was
    /// copied and destroyed through value witnesses per lookup.)
    @inline(__always)
    func findInPages(_ key: UnsafeRawBufferPointer, from root: UInt64) throws -> (view: PageView, index: Int)? {
        var offset = root
        for _ in 0...64 {
            let view = try pages.page(at: offset)
            if view.isLeaf {
                let (i, found) = view.search(key)
                return found ? (view, i) : nil
            }
            offset = view.child(view.childIndex(for: key))
        }
        throw StoreError.corrupt("a tree is deeper than 64 levels", path: path, offset: nil)
    }

    func cursor(_ tree: TreeID) -> TreeCursor {
        TreeCursor(root: root(tree), pages: pages, tree: changing(tree))
    }

    // MARK: Catalog

    /// The collection with this name, if it exists.
    public func collection(named name: String) -> CollectionID? {
        catalog.collectionID(named: name)
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
        StoreError(.notFound, "No collection \(c) in this store; create it with createCollection(named:) first.", path: path)
    }

    // MARK: Records

    /// Calls `body` with the record bytes of a row's leaf value, wherever they are.
    @inline(__always)
    func withRecordValue<R>(_ value: UnsafeRawBufferPointer, flags: UInt8, row: RowID, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let decoded = RowValue.decode(value, flags: flags) else {
            throw StoreError.corrupt("a malformed row value (row \(row))", path: path, offset: nil)
        }
        if let inline = decoded.inline { return try body(inline) }
        guard let frame = decoded.frame else {
            throw StoreError.corrupt("a row value with neither a record nor a value location (row \(row))", path: path, offset: nil)
        }
        return try pages.withValue(frame, body)
    }

    /// Calls `body` with a record's bytes (valid only during the call, and only while the
    /// transaction does not change the collection); nil if there is no such row.
    public func withRecord<R>(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let tree = TreeID.rows(collection.rawValue)
        switch root(tree) {
        case nil:
            return nil
        case .page(let offset)?:
            guard let (view, i) = try TreeKey.withRow(row, { try findInPages($0, from: offset) }) else { return nil }
            let cell = view.leafCell(i)
            return try withRecordValue(cell.value, flags: cell.flags, row: row, body)
        case .node?:
            break
        }
        guard let position = try TreeKey.withRow(row, { try find($0, in: tree) }) else { return nil }
        let cell = position.view.leafCell(position.index)
        return try withExtendedLifetime(position.node) {
            try withRecordValue(cell.value, flags: cell.flags, row: row, body)
        }
    }

    /// `withRecord` with a body that returns nothing: false if there is no such row. Not
    /// generic, so that a caller in another module looks up no `Optional<R>` per record.
    public func visitRecord(row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try withRecord(row, in: collection, body) != nil
    }

    /// A copy of a record's bytes, or nil if there is no such row.
    public func record(_ row: RowID, in collection: CollectionID) throws -> [UInt8]? {
        try withRecord(row, in: collection) { Array($0) }
    }

    /// True if the collection holds the row.
    public func contains(_ row: RowID, in collection: CollectionID) throws -> Bool {
        try TreeKey.withRow(row) { try find($0, in: .rows(collection.rawValue)) } != nil
    }

    /// Calls `body` for each record of the collection in row id order (or reverse), starting at
    /// `start` when given, until it returns false. The bytes are valid only during the call.
    public func forEachRecord(in collection: CollectionID, from start: RowID? = nil, reverse: Bool = false,
                              _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        var cursor = try rows(in: collection, from: start, reverse: reverse)
        try cursor.forEach(body)
    }

    /// `forEachRecord` with the records lent many at a time (`RowCursor.forEachBatch`).
    public func forEachRecordBatch(in collection: CollectionID, from start: RowID? = nil, reverse: Bool = false,
                                   _ body: (UnsafeBufferPointer<LentRecord>) throws -> Bool) throws {
        var cursor = try rows(in: collection, from: start, reverse: reverse)
        try cursor.forEachBatch(body)
    }

    /// A cursor over the records of a collection in row id order (or reverse).
    public func rows(in collection: CollectionID, from start: RowID? = nil, reverse: Bool = false) throws -> RowCursor {
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        return try RowCursor(transaction: self, collection: collection.rawValue, start: start, reverse: reverse)
    }

    // MARK: Indexes

    /// The row holding `key` in a unique index (for a non-unique index: the first such row).
    public func lookup(_ key: [UInt8], in index: IndexID) throws -> RowID? {
        // Read in place: a copy of the index's catalog record (with its name) cost a retain
        // and a release per lookup.
        guard let position = catalog.indexPosition(index.rawValue) else { throw missingIndex(index) }
        if catalog.indexes[position].unique { return try key.withUnsafeBytes { try uniqueHolder($0, index: index.rawValue) } }
        var cursor = try entries(in: index, range: .exact(key))
        return try cursor.next()?.row
    }

    /// The row holding `key` in a unique index.
    func uniqueHolder(_ key: UnsafeRawBufferPointer, index: UInt32) throws -> RowID? {
        let tree = TreeID.index(index)
        switch root(tree) {
        case nil:
            return nil
        case .page(let offset)?:
            guard let (view, i) = try findInPages(key, from: offset) else { return nil }
            return try uniqueRow(view.leafCell(i).value)
        case .node?:
            break
        }
        guard let position = try find(key, in: tree) else { return nil }
        return try withExtendedLifetime(position.node) { try uniqueRow(position.value) }
    }

    /// The row id a unique index entry holds.
    func uniqueRow(_ value: UnsafeRawBufferPointer) throws -> RowID {
        guard let (row, size) = Varint.decode(value), size == value.count else {
            throw StoreError.corrupt("a malformed unique-index entry", path: path, offset: nil)
        }
        return row
    }

    /// A cursor over the entries of an index whose keys fall in `range`, in key order (or reverse).
    /// Entries with equal keys (non-unique index) come in row id order.
    public func entries(in index: IndexID, range: KeyRange = .all, reverse: Bool = false) throws -> IndexCursor {
        guard let info = catalog.index(index.rawValue) else { throw missingIndex(index) }
        return try IndexCursor(transaction: self, index: info, range: range, reverse: reverse)
    }

    /// Counts the entries of an index in `range` without reading any record.
    public func countEntries(in index: IndexID, range: KeyRange = .all) throws -> Int {
        guard let info = catalog.index(index.rawValue) else { throw missingIndex(index) }
        if range.lower == nil && range.upper == nil { return Int(info.entries) }
        var cursor = try entries(in: index, range: range)
        var n = 0
        while try cursor.advance() { n += 1 }
        return n
    }

    func missingIndex(_ index: IndexID) -> StoreError {
        StoreError(.notFound, "No \(index) in this store; create it with createIndex(named:on:unique:) first.", path: path)
    }

    // MARK: Blobs and metadata

    /// The length and checksum a blob entry records; nil if there is no such blob.
    func blobEntry(_ id: BlobID) throws -> (length: UInt64, checksum: UInt64)? {
        guard let position = try TreeKey.blob(id.rawValue).withUnsafeBytes({ try find($0, in: .system) }) else { return nil }
        return try withExtendedLifetime(position.node) {
            let v = position.value
            guard v.count == 16 else { throw StoreError.corrupt("a malformed blob entry", path: path, offset: nil) }
            return (v.loadLE64(0), v.loadLE64(8))
        }
    }

    /// The bytes of a blob. Throws `.notFound` if there is no such blob and `.corrupt` if its
    /// file is missing or damaged.
    public func blob(_ id: BlobID) throws -> [UInt8] {
        guard let (length, checksum) = try blobEntry(id) else { throw StoreError(.notFound, "No \(id) in this store.", path: path) }
        return try blobs.read(id.rawValue, length: length, checksum: checksum)
    }

    /// The bytes of a blob as `Data`, read in place: the `Data` is the blob file, mapped (and
    /// checked once), not a copy of it. Throws as `blob(_:)` does.
    ///
    /// The `Data` keeps the mapping until it is released; Strata never changes a blob file,
    /// and removes it only by unlinking, which a mapping survives. (Like the store file, a blob
    /// file cut short by another program under a live mapping makes the process crash on
    /// access: Docs/Durability.md, "Mapped files".)
    public func blobData(_ id: BlobID) throws -> Data {
        guard let (length, checksum) = try blobEntry(id) else { throw StoreError(.notFound, "No \(id) in this store.", path: path) }
        var kept: (any FileMapping)?
        return try blobs.withContents(id.rawValue, length: length, checksum: checksum, keep: { kept = $0 }) { bytes in
            guard let base = bytes.baseAddress, let mapping = kept else { return Data() }
            return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count,
                        deallocator: .custom { _, _ in withExtendedLifetime(mapping) {} })
        }
    }

    /// True when the blob is recorded and its file is present (without reading it).
    public func blobFileExists(_ id: BlobID) throws -> Bool {
        guard try blobLength(id) != nil else { return false }
        return fileSystem.fileExists(blobs.filePath(id.rawValue))
    }

    /// The length of a blob without reading it, or nil if there is no such blob.
    public func blobLength(_ id: BlobID) throws -> Int? {
        guard let (length, _) = try blobEntry(id) else { return nil }
        guard let n = Int(exactly: length) else { throw StoreError.corrupt("a malformed blob entry", path: path, offset: nil) }
        return n
    }

    /// Every blob id, in order.
    public func blobIDs() throws -> [BlobID] {
        var ids: [BlobID] = []
        var cursor = cursor(.system)
        try [TreeKey.blobTag].withUnsafeBytes { try cursor.seek(atLeast: $0) }
        var key: [UInt8] = []
        while cursor.isValid {
            cursor.copyKey(into: &key)
            guard key.count == 9, key[0] == TreeKey.blobTag else { break }
            ids.append(BlobID(rawValue: key.loadBE64(1)))
            try cursor.next()
        }
        return ids
    }

    /// A named metadata value (such as a schema), or nil.
    public func metadata(_ name: String) throws -> [UInt8]? {
        guard let position = try TreeKey.metadata(name).withUnsafeBytes({ try find($0, in: .system) }) else { return nil }
        return try withExtendedLifetime(position.node) {
            let cell = position.view.leafCell(position.index)
            if cell.flags & ValueFlags.inFrame != 0 {
                guard let location = ValueLocation.decode(cell.value) else {
                    throw StoreError.corrupt("a malformed metadata entry (\(name))", path: path, offset: nil)
                }
                return try pages.withValue(location) { Array($0) }
            }
            return Array(cell.value)
        }
    }
}
