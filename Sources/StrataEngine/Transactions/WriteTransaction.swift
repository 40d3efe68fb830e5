import Foundation

/// The one write transaction of a store: puts and deletes records, keeps their index entries,
/// and commits them atomically. It reads its own changes.
///
/// Commit with `commit()` (or use `Store.write { }`); a transaction dropped without a commit
/// is rolled back. Until then nothing of it is visible to readers or survives a crash. The
/// pages it changes stay in memory up to its budget (`StoreOptions.cacheSize`); past it they
/// are written out before the commit record, so a large save does not grow memory.
public final class WriteTransaction: ReadTransaction {
    /// The store it writes (held: a write transaction is never shared).
    let store: Store
    let writer: AppendWriter
    let budget: DirtyBudget
    @exclusivity(unchecked) var trees = RecentMap<TreeID, MutableTree>(firstCapacity: 16)
    /// Index entries held back, by index (see `PendingEntries`), and roughly how many bytes they hold.
    @exclusivity(unchecked) var pending = RecentMap<UInt32, PendingEntries>()
    @exclusivity(unchecked) private var pendingBytes = 0
    /// Bytes of value frames each tree gained (or, negative, lost) in this transaction.
    @exclusivity(unchecked) private(set) var frameBytes: [TreeID: Int64] = [:]
    /// True once committed or rolled back (WriteTransaction+Commit.swift).
    @exclusivity(unchecked) var finished = false
    @exclusivity(unchecked) private(set) var newBlobs: [UInt64] = []
    @exclusivity(unchecked) private(set) var deletedBlobs: [UInt64] = []
    /// The buffer each changed page is encoded into before it is written.
    @exclusivity(unchecked) var scratch: [UInt8] = []
    /// Where the pages this transaction wrote lie, every tree's in one list (a list per tree
    /// grew from empty in each: W2).
    @exclusivity(unchecked) var writtenPages: [UInt64] = []

    init(store: Store, snapshot: Snapshot, writer: AppendWriter) {
        self.store = store
        self.writer = writer
        self.budget = DirtyBudget(limit: Swift.max(store.options.cacheSize, 32 << 10), spares: writer.takeSpares())
        super.init(store: store, snapshot: snapshot, writer: writer)
    }

    deinit {
        if !finished { rollback() }
    }

    // MARK: Trees

    override func root(_ tree: TreeID) -> TreeRef? {
        if let changed = trees.lookup(tree) { return changed.root }
        return super.root(tree)
    }

    override func changing(_ tree: TreeID) -> MutableTree? { trees.lookup(tree) }

    /// A tree this transaction changes is searched through its remembered path first
    /// (`MutableTree.find`): a save reads a row or an index entry just before it changes it.
    override func find(_ key: UnsafeRawBufferPointer, in tree: TreeID) throws -> LeafPosition? {
        if let changed = trees.lookup(tree) { return try changed.find(key) }
        return try TreeSearch.find(key, root: super.root(tree), pages: pages)
    }

    /// The tree to change: made from its committed root the first time.
    func tree(_ id: TreeID) -> MutableTree {
        if let t = trees.lookup(id) { return t }
        let offset: UInt64
        switch id {
        case .rows(let c): offset = catalog.collections.first { $0.id == c }?.root ?? 0
        case .index(let i): offset = catalog.index(i)?.root ?? 0
        case .system: offset = catalog.systemRoot
        }
        let t = MutableTree(root: offset, pages: pages, budget: budget, targetSize: PageLayout.targetSize(of: id))
        trees.set(id, t)
        return t
    }

    func checkOpen() throws {
        if finished {
            throw StoreError(.closed, "This write transaction has already been committed or rolled back; begin a new one.", path: store.path)
        }
    }

    /// Runs an operation that appends to the file; a failed append poisons the store.
    func appending<R>(_ what: String, _ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as StoreError where error.code != .ioFailure && error.code != .diskFull {
            throw error
        } catch {
            let failure = StoreError.io(error, doing: what, path: store.path,
                                        consequence: StoreError.transactionLost, next: StoreError.nextWriteReopens)
            store.fail(failure)
            throw failure
        }
    }

    /// Applies held-back entries past their limit, and writes the changed pages out when they
    /// pass the budget, so memory stays bounded.
    func keepWithinBudget() throws {
        if pendingBytes > pendingLimit {
            pendingBytes = 0
            try applyPending()
        }
        guard budget.isExceeded else { return }
        try appending("writing pages out") {
            for tree in trees.values where tree.isDirty { _ = try tree.write(into: writer, scratch: &scratch, pages: &writtenPages) }
            try writer.flush()
            try pages.follow(writer)
        }
    }

    func addFrameBytes(_ n: Int64, to tree: TreeID) { frameBytes[tree, default: 0] += n }

    // MARK: Held-back index entries

    func pendingEntries(of index: UInt32, unique: Bool) -> PendingEntries {
        if let p = pending.lookup(index) { return p }
        let p = PendingEntries(unique: unique)
        pending.set(index, p)
        return p
    }

    /// Counts an entry held back; past half the budget they are applied.
    func notePending(_ keyLength: Int) {
        pendingBytes += keyLength + 32
    }

    /// The most bytes of held-back entries before they are applied.
    var pendingLimit: Int { budget.limit / 2 }

    override func uniqueHolder(_ key: UnsafeRawBufferPointer, index: UInt32) throws -> RowID? {
        if let latest = pending.lookup(index)?.latest(key) { return latest.kind == PendingEntries.insert ? latest.row : nil }
        return try super.uniqueHolder(key, index: index)
    }

    /// Index cursors read the tree: the entries held back for it are applied first.
    public override func entries(in index: IndexID, range: KeyRange = .all, reverse: Bool = false) throws -> IndexCursor {
        try applyPending(index.rawValue)
        return try super.entries(in: index, range: range, reverse: reverse)
    }

    /// Applies the entries held back for one index (or for every index), in key order.
    func applyPending(_ only: UInt32? = nil) throws {
        let ids = only.map { [$0] } ?? Array(pending.keys).sorted()
        for id in ids {
            guard let entries = pending.lookup(id), !entries.isEmpty else { continue }
            pending.set(id, nil)
            guard let info = catalog.index(id) else { continue }
            try apply(entries, to: tree(.index(id)), info: info)
        }
        if only == nil || pending.isEmpty { pendingBytes = pending.values.reduce(0) { $0 + $1.byteCount } }
        try keepWithinBudget()
    }

    /// Applies one index's held-back entries in key order. Each tree key (and a unique entry's
    /// value, its row) is put together in one buffer: the key, then for a non-unique index the
    /// row (`TreeKey.writeRow`).
    private func apply(_ entries: PendingEntries, to index: MutableTree, info: IndexInfoRecord) throws {
        let valueStart = PageLayout.maximumKeyLength + 32
        try withUnsafeTemporaryAllocation(byteCount: valueStart + 16, alignment: 8) { buffer in
            let base = buffer.baseAddress!
            var applied = 0
            var run = MutableTree.AscendingRun()
            for offset in entries.sorted() {
                let kind = entries.kind(at: offset), row = entries.row(at: offset)
                var length = try entries.withKey(at: offset) { key in
                    // (Keys longer than this were refused when they were put.)
                    guard key.count + TreeKey.maximumRowSuffix <= valueStart else {
                        throw StoreError.corrupt("a held-back index key of \(key.count) bytes", path: store.path, offset: nil)
                    }
                    if let source = key.baseAddress { base.copyMemory(from: source, byteCount: key.count) }
                    return key.count
                }
                var valueLength = 0
                if info.unique { valueLength = Varint.write(row, to: base + valueStart) } else { length += TreeKey.writeRow(row, to: base + length) }
                let treeKey = UnsafeRawBufferPointer(start: base, count: length)
                let value = UnsafeRawBufferPointer(start: base + valueStart, count: valueLength)
                if kind == PendingEntries.insert {
                    try index.insert(treeKey, value)
                } else if try !index.removeAscending(treeKey, expecting: info.unique ? value : nil, run: &run) {
                    // (A unique entry's row is checked here: `removeEntry` did not look it up.)
                    throw StoreError.corrupt("index \"\(info.name)\" has no entry for row \(row) although the row's keys name one", path: store.path, offset: nil)
                }
                applied += 1
                if applied & 1023 == 0 { try keepWithinBudget() }
            }
        }
    }

    /// Appends a value frame; returns where it lies.
    func appendFrame(_ payload: UnsafeRawBufferPointer, for tree: TreeID) throws -> ValueLocation {
        let frame = ValueFrame.encode(payload)
        let offset = try appending("writing a value") { try writer.appendAligned(frame) }
        addFrameBytes(Int64(frame.count), to: tree)
        return ValueLocation(offset: offset, length: UInt32(frame.count))
    }

    // MARK: Catalog

    /// The collection with this name, created if it does not exist yet.
    public func createCollection(named name: String) throws -> CollectionID {
        try checkOpen()
        if let existing = catalog.collectionID(named: name) { return existing }
        guard !name.isEmpty, name.utf8.count <= 1024 else {
            throw StoreError(.invalidArgument, "A collection name must have 1 to 1024 bytes.", path: store.path)
        }
        let id = catalog.nextCollectionID
        guard id < UInt32.max else {
            throw StoreError(.invalidArgument, "This store has used every collection id; copy its data into a new store.", path: store.path)
        }
        catalog.nextCollectionID += 1
        catalog.collections.append(CollectionInfo(id: id, name: name, count: 0, nextRowID: 1, liveBytes: 0))
        return CollectionID(rawValue: id)
    }

    /// The index with this name on `collection`, created (empty) if it does not exist yet.
    ///
    /// The engine does not know how to compute keys from records: to index rows that already
    /// exist, put them again with their keys for the new index (and their old keys as
    /// `previousKeys`).
    public func createIndex(named name: String, on collection: CollectionID, unique: Bool) throws -> IndexID {
        try checkOpen()
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        guard !name.isEmpty, name.utf8.count <= 1024 else {
            throw StoreError(.invalidArgument, "An index name must have 1 to 1024 bytes.", path: store.path)
        }
        if let existing = catalog.indexes.first(where: { $0.collection == collection.rawValue && $0.name == name }) {
            guard existing.unique == unique else {
                throw StoreError(.invalidArgument, "The index \"\(name)\" exists and is \(existing.unique ? "" : "not ")unique; drop it first to change that.", path: store.path)
            }
            return IndexID(rawValue: existing.id)
        }
        let id = catalog.nextIndexID
        guard id < UInt32.max else {
            throw StoreError(.invalidArgument, "This store has used every index id; copy its data into a new store.", path: store.path)
        }
        catalog.nextIndexID += 1
        catalog.indexes.append(IndexInfoRecord(id: id, collection: collection.rawValue, name: name, unique: unique))
        return IndexID(rawValue: id)
    }

    /// Removes an index and all of its entries. The rows it indexed no longer have its keys
    /// (their key digests are updated, one row at a time, in row order).
    public func dropIndex(_ index: IndexID) throws {
        try checkOpen()
        guard let position = catalog.indexPosition(index.rawValue) else { throw missingIndex(index) }
        let info = catalog.indexes[position]
        // Each row's digest loses the dropped keys' share.
        var shares: [(row: RowID, share: UInt32)] = []
        shares.reserveCapacity(Int(Swift.min(info.entries, 1 << 20)))
        var cursor = try entries(in: index)
        while let (key, row) = try cursor.next() { shares.append((row, KeysDigest.of([IndexKey(index, key)]))) }
        shares.sort { $0.row < $1.row }
        let rows = tree(.rows(info.collection))
        var i = 0
        while i < shares.count {
            let row = shares[i].row
            var share: UInt32 = 0
            while i < shares.count && shares[i].row == row { share ^= shares[i].share; i += 1 }
            try TreeKey.withRow(row) { key in
                guard let position = try rows.find(key) else { return }
                let cell = position.view.leafCell(position.index)
                guard let value = RowValue.decode(cell.value, flags: cell.flags) else {
                    throw StoreError.corrupt("a malformed row value (row \(row))", path: store.path, offset: nil)
                }
                let rest = Array(cell.flags & ValueFlags.keysDigest != 0 ? cell.value[4...] : cell.value[...])
                let digest = (value.digest ?? 0) ^ share
                let (bytes, flags) = Self.rowValue(digest: digest, rest: rest, inFrame: cell.flags & ValueFlags.inFrame != 0)
                try bytes.withUnsafeBytes { try rows.insert(key, $0, flags: flags) }
            }
            try keepWithinBudget()
        }
        trees.set(.index(index.rawValue), nil)
        pending.set(index.rawValue, nil)
        catalog.indexes.remove(at: position)
    }

    /// A row's leaf value: the digest (when not 0) and the record bytes or value location.
    static func rowValue(digest: UInt32, rest: [UInt8], inFrame: Bool) -> ([UInt8], UInt8) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(rest.count + 4)
        var flags: UInt8 = inFrame ? ValueFlags.inFrame : 0
        if digest != 0 {
            bytes.appendLE(digest)
            flags |= ValueFlags.keysDigest
        }
        bytes.append(contentsOf: rest)
        return (bytes, flags)
    }

    /// Removes a collection with all its records and indexes.
    public func dropCollection(_ collection: CollectionID) throws {
        try checkOpen()
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        for index in catalog.indexes where index.collection == collection.rawValue {
            trees.set(.index(index.id), nil)
            pending.set(index.id, nil)
        }
        catalog.indexes.removeAll { $0.collection == collection.rawValue }
        trees.set(.rows(collection.rawValue), nil)
        catalog.collections.removeAll { $0.id == collection.rawValue }
    }

    /// A row id never used in the collection (in this transaction or a committed one).
    public func allocateRowID(in collection: CollectionID) throws -> RowID {
        try checkOpen()
        guard let p = catalog.collectionPosition(collection.rawValue) else { throw missingCollection(collection) }
        let row = catalog.collections[p].nextRowID
        guard row < RowID.max else {
            throw StoreError(.invalidArgument, "\(collection) has used every row id; copy its records into a new collection.", path: store.path)
        }
        catalog.collections[p].nextRowID += 1
        return row
    }

    /// Deletes every record of a collection with their index entries; returns how many.
    /// Costs the same whatever the number of records: the trees are dropped whole.
    @discardableResult
    public func deleteAll(in collection: CollectionID) throws -> Int {
        try checkOpen()
        guard let position = catalog.collectionPosition(collection.rawValue) else { throw missingCollection(collection) }
        let count = Int(catalog.collections[position].count)
        frameBytes[.rows(collection.rawValue)] = nil
        catalog.collections[position].count = 0
        catalog.collections[position].liveBytes = 0
        catalog.collections[position].root = 0
        for i in catalog.indexes.indices where catalog.indexes[i].collection == collection.rawValue {
            catalog.indexes[i].entries = 0
            catalog.indexes[i].liveBytes = 0
            catalog.indexes[i].root = 0
        }
        resetAccounting(of: collection.rawValue)
        return count
    }

    /// Trees emptied whole keep no superseded or written bytes to account for.
    private func resetAccounting(of collection: UInt32) {
        trees.set(.rows(collection), MutableTree(root: 0, pages: pages, budget: budget))
        for index in catalog.indexes where index.collection == collection {
            trees.set(.index(index.id), MutableTree(root: 0, pages: pages, budget: budget, targetSize: PageLayout.indexTargetSize))
            pending.set(index.id, nil)
        }
    }

    // MARK: Blobs and metadata

    /// Writes a blob file (synced before this transaction can commit) and records it.
    public func putBlob(_ bytes: [UInt8]) throws -> BlobID {
        try checkOpen()
        let id = store.allocateBlobID(atLeast: catalog.nextBlobID)
        try appending("writing blob \(id)") {
            try store.blobs.write(id, bytes, sync: true)
        }
        newBlobs.append(id)
        var value: [UInt8] = []
        value.appendLE(UInt64(bytes.count))
        value.appendLE(Checksum.hash(bytes))
        try TreeKey.blob(id).withUnsafeBytes { k in try value.withUnsafeBytes { try tree(.system).insert(k, $0) } }
        catalog.nextBlobID = Swift.max(catalog.nextBlobID, id + 1)
        try keepWithinBudget()
        return BlobID(rawValue: id)
    }

    /// Forgets a blob; its file is removed once the transaction has committed.
    public func deleteBlob(_ id: BlobID) throws {
        try checkOpen()
        guard try TreeKey.blob(id.rawValue).withUnsafeBytes({ try tree(.system).remove($0) }) else {
            throw StoreError(.notFound, "No \(id) in this store.", path: store.path)
        }
        deletedBlobs.append(id.rawValue)
    }

    /// Sets (or with nil removes) a named metadata value, such as a schema.
    public func setMetadata(_ name: String, _ value: [UInt8]?) throws {
        try checkOpen()
        guard !name.isEmpty, name.utf8.count <= 1024 else {
            throw StoreError(.invalidArgument, "A metadata name must have 1 to 1024 bytes.", path: store.path)
        }
        guard (value?.count ?? 0) <= ValueFrame.maximumLength - ValueFrame.headerSize else {
            throw StoreError(.valueTooLarge, "A metadata value may have at most 1 GiB.", path: store.path)
        }
        let system = tree(.system)
        let key = TreeKey.metadata(name)
        try key.withUnsafeBytes { k in
            if let old = try system.find(k) {
                let cell = old.view.leafCell(old.index)
                if cell.flags & ValueFlags.inFrame != 0, let location = ValueLocation.decode(cell.value) {
                    addFrameBytes(-Int64(location.length), to: .system)
                }
                withExtendedLifetime(old.node) {}
                if value == nil { try system.remove(k) }
            }
            guard let value else { return }
            if value.count <= PageLayout.inlineValueLimit {
                try value.withUnsafeBytes { try system.insert(k, $0) }
            } else {
                let location = try value.withUnsafeBytes { try appendFrame($0, for: .system) }
                var bytes: [UInt8] = []
                location.encode(into: &bytes)
                try bytes.withUnsafeBytes { try system.insert(k, $0, flags: ValueFlags.inFrame) }
            }
        }
        try keepWithinBudget()
    }
}
