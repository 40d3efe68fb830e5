import Foundation

/// The one write transaction of a store: puts and deletes records, keeps their index entries,
/// and commits them atomically. It reads its own changes.
///
/// Commit with `commit()` (or use `Store.write { }`); a transaction dropped without a commit
/// is rolled back. Until then nothing of it is visible to readers or survives a crash.
public final class WriteTransaction: ReadTransaction {
    let writer: AppendWriter
    let tree: MutableTree
    private var finished = false
    private var newBlobs: [UInt64] = []
    private var deletedBlobs: [UInt64] = []

    init(store: Store, snapshot: Snapshot, writer: AppendWriter) {
        self.writer = writer
        let reader = TreeReader(file: snapshot.file, limit: snapshot.end)
        self.tree = MutableTree(root: snapshot.root.map { .page($0) }, reader: reader)
        super.init(store: store, snapshot: snapshot)
    }

    deinit {
        if !finished { rollback() }
    }

    override var root: Child? {
        get { tree.root }
        set { tree.root = newValue }
    }

    override func withFrame<R>(_ location: RecordLocation, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard location.offset >= writer.committedEnd else { return try super.withFrame(location, body) }
        return try writer.withUncommittedBytes(at: location.offset, count: Int(location.length)) { raw in
            guard let payload = RecordFrame.check(raw, verifyChecksum: false) else {
                throw StoreError.corrupt("a record of this transaction is malformed", path: store.path, offset: location.offset)
            }
            return try body(UnsafeRawBufferPointer(rebasing: raw[payload...]))
        }
    }

    private func checkOpen() throws {
        if finished {
            throw StoreError(.closed, "This write transaction has already been committed or rolled back; begin a new one.", path: store.path)
        }
    }

    /// Runs an operation that appends to the file; a failed append poisons the store.
    private func appending<R>(_ what: String, _ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as StoreError where error.code != .ioFailure && error.code != .diskFull {
            throw error
        } catch {
            let failure = StoreError.io(error, doing: what, path: store.path,
                                        consequence: StoreError.transactionLost, next: StoreError.nextWriteReopens)
            store.fail(failure)
            throw failure
        }
    }

    // MARK: Catalog

    /// The collection with this name, created if it does not exist yet.
    public func createCollection(named name: String) throws -> CollectionID {
        try checkOpen()
        if let existing = catalog.collection(named: name) { return CollectionID(rawValue: existing.id) }
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
    /// exist, put them again with their keys for the new index.
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

    /// Removes an index and all of its entries.
    public func dropIndex(_ index: IndexID) throws {
        try checkOpen()
        guard catalog.index(index.rawValue) != nil else { throw missingIndex(index) }
        var keys: [[UInt8]] = []
        var cursor = TreeCursor(root: tree.root, reader: tree.reader)
        let prefix = TreeKey.indexPrefix(index.rawValue)
        try cursor.seek(atLeast: prefix)
        while cursor.isValid, cursor.withKey({ k in k.count >= 5 && Array(k[0..<5]) == prefix }) {
            keys.append(cursor.withKey { Array($0) })
            try cursor.next()
        }
        for key in keys { try tree.remove(key) }
        catalog.indexes.removeAll { $0.id == index.rawValue }
    }

    /// Removes a collection with all its records and indexes.
    public func dropCollection(_ collection: CollectionID) throws {
        try checkOpen()
        _ = try deleteAll(in: collection)
        for index in catalog.indexes where index.collection == collection.rawValue {
            try dropIndex(IndexID(rawValue: index.id))
        }
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

    // MARK: Records

    /// Stores `record` as `row` of `collection` with the given index entries.
    ///
    /// A new row takes `indexKeys`. To replace a stored row, pass the keys it was stored with
    /// as `previousKeys`: its entries for them are removed and `indexKeys` take their place.
    /// The engine does not keep a row's keys with its record, so whoever updates a row names
    /// its old keys (the object layer computes them from the stored record, as it computes the
    /// new ones); a wrong set is refused, never written into an index.
    ///
    /// ```swift
    /// try tx.put(bytes, row: row, in: users, indexKeys: [IndexKey(byEmail, KeyEncoding.encode("ada@example.com"))])
    /// try tx.put(changed, row: row, in: users, indexKeys: [IndexKey(byEmail, KeyEncoding.encode("ada@lovelace.org"))],
    ///            previousKeys: [IndexKey(byEmail, KeyEncoding.encode("ada@example.com"))])
    /// ```
    ///
    /// - Throws: `StoreError` `.uniqueConstraintViolation` (with `conflict`) when a unique index
    ///   holds one of the keys for another row; `.indexKeyMismatch` when `previousKeys` are
    ///   not the keys the row was stored with (or name keys for a row that does not exist);
    ///   `.keyTooLarge`, `.valueTooLarge`, `.notFound` for an unknown collection or index.
    ///   Nothing is changed then.
    public func put(_ record: [UInt8], row: RowID, in collection: CollectionID, indexKeys: [IndexKey] = [], previousKeys: [IndexKey] = []) throws {
        try record.withUnsafeBytes { try put($0, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys) }
    }

    /// `put` without copying the record.
    public func put(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey] = [], previousKeys: [IndexKey] = []) throws {
        if let conflict = try putUnlessConflicting(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys) {
            let name = catalog.index(conflict.index.rawValue)?.name ?? "\(conflict.index)"
            throw StoreError(.uniqueConstraintViolation,
                             "The unique index \"\(name)\" already holds this key for row \(conflict.existingRow); row \(row) cannot take it.",
                             path: store.path, conflict: conflict)
        }
    }

    /// `put`, except that a unique index holding one of the keys for another row is not an
    /// error: the conflict is returned and nothing is changed. For a caller that expects
    /// conflicts (an upsert) and would otherwise look each key up before putting.
    ///
    /// - Throws: what `put` throws, except `.uniqueConstraintViolation`.
    public func putUnlessConflicting(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                                     indexKeys: [IndexKey] = [], previousKeys: [IndexKey] = []) throws -> UniqueConflict? {
        try checkOpen()
        guard let position = catalog.collectionPosition(collection.rawValue) else { throw missingCollection(collection) }
        guard row < RowID.max else {
            // The catalog keeps one more than the largest row id, so the largest value is not a row id.
            throw StoreError(.invalidArgument, "Row id \(row) is out of range; row ids go up to \(RowID.max - 1).", path: store.path)
        }
        // The same key twice is one index entry.
        let indexKeys = Self.deduplicated(indexKeys)
        guard indexKeys.count <= 255 else {
            throw StoreError(.invalidArgument, "A record may have at most 255 index keys.", path: store.path)
        }
        guard record.count <= RecordFrame.maximumLength else {
            throw StoreError(.valueTooLarge, "A record may have at most 1 GiB; store large values as blobs.", path: store.path)
        }
        // Check everything before changing anything, so a failed put leaves the transaction as it was.
        let rowKey = TreeKey.row(collection.rawValue, row)
        let oldLocation = try tree.withValue(rowKey) { try self.location($0, at: "row \(row)") }
        if let oldLocation { try checkBookkeeping(position, removing: oldLocation, countToo: false) }
        let oldKeys = try checkPreviousKeys(previousKeys, of: row, in: collection, at: oldLocation)
        var indexInfos: [IndexInfoRecord] = []
        indexInfos.reserveCapacity(indexKeys.count)
        for k in indexKeys {
            guard let info = catalog.index(k.index.rawValue), info.collection == collection.rawValue else {
                throw StoreError(.invalidArgument, "\(k.index) is not an index of \(collection).", path: store.path)
            }
            guard k.key.count <= Node.maximumKeyLength - 32 else {
                throw StoreError(.keyTooLarge, "An index key has \(k.key.count) bytes; the most is \(Node.maximumKeyLength - 32). Index a shorter value (or a hash of it).", path: store.path)
            }
            // A key the row already has is this row's entry: an update that keeps its unique
            // values needs no lookup.
            if info.unique, !oldKeys.contains(k), let holder = try lookup(k.key, in: k.index), holder != row {
                return UniqueConflict(index: k.index, key: k.key, existingRow: holder)
            }
            indexInfos.append(info)
        }
        let frame = RecordFrame.encode(kind: RecordFrame.kindRecord, indexKeys: indexKeys, payload: record)
        let offset = try appending("writing a record") { try writer.append(frame) }
        let location = RecordLocation(offset: offset, length: UInt32(frame.count))
        try tree.insert(rowKey, location.encode())
        for old in oldKeys where !indexKeys.contains(old) {
            try removeIndexEntry(old, row: row)
        }
        for (k, info) in zip(indexKeys, indexInfos) where !oldKeys.contains(k) {
            if info.unique {
                var value: [UInt8] = []
                value.appendLE(row)
                try tree.insert(TreeKey.indexEntry(k.index.rawValue, k.key, row: nil), value)
            } else {
                try tree.insert(TreeKey.indexEntry(k.index.rawValue, k.key, row: row), [])
            }
        }
        var info = catalog.collections[position]
        if let oldLocation {
            info.liveBytes -= UInt64(oldLocation.length)
        } else {
            info.count += 1
        }
        info.liveBytes += UInt64(frame.count)
        if row >= info.nextRowID { info.nextRowID = row + 1 }
        catalog.collections[position] = info
        return nil
    }

    static func deduplicated(_ keys: [IndexKey]) -> [IndexKey] {
        guard keys.count > 1 else { return keys }
        var unique: [IndexKey] = []
        unique.reserveCapacity(keys.count)
        for k in keys where !unique.contains(k) { unique.append(k) }
        return unique
    }

    /// Checks that `previousKeys` are the keys `row` was stored with (none for a row that does
    /// not exist); returns them, without duplicates.
    func checkPreviousKeys(_ previousKeys: [IndexKey], of row: RowID, in collection: CollectionID, at location: RecordLocation?) throws -> [IndexKey] {
        let given = Self.deduplicated(previousKeys)
        guard let location else {
            if given.isEmpty { return [] }
            throw StoreError(.indexKeyMismatch, "Row \(row) of \(collection) does not exist, but \(given.count) previous index key(s) were given for it; a new row has none.", path: store.path)
        }
        // Keys of indexes dropped since the row was written are no longer the row's.
        let stored = try withFrameHeader(location) { RecordFrame.indexKeys($0) }
            .filter { k in catalog.index(k.index.rawValue)?.collection == collection.rawValue }
        guard stored.count == given.count, given.allSatisfy(stored.contains) else {
            throw StoreError(.indexKeyMismatch, "The previous index keys given for row \(row) of \(collection) (\(given.count)) are not the keys it was stored with; nothing was changed. Pass the keys the row was last put with (computed from its stored record).", path: store.path)
        }
        return stored
    }

    /// Calls `body` with a whole frame (header included), wherever it is: this transaction's
    /// own frames are checked for shape, committed ones also for their checksum when
    /// `verifyCommitted` is true.
    func withFrameHeader<R>(_ location: RecordLocation, verifyCommitted: Bool = false, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let uncommitted = location.offset >= writer.committedEnd
        let check: (UnsafeRawBufferPointer) throws -> R = { raw in
            guard RecordFrame.check(raw, verifyChecksum: verifyCommitted && !uncommitted) != nil else {
                throw StoreError.corrupt("the record at byte \(location.offset) is malformed or fails its checksum", path: self.store.path, offset: location.offset)
            }
            return try body(raw)
        }
        if uncommitted {
            return try writer.withUncommittedBytes(at: location.offset, count: Int(location.length), check)
        }
        return try file.withBytes(at: location.offset, count: Int(location.length), limit: reader.limit, check)
    }

    private func removeIndexEntry(_ key: IndexKey, row: RowID) throws {
        guard let info = catalog.index(key.index.rawValue) else { return }  // a dropped index
        if info.unique {
            let treeKey = TreeKey.indexEntry(key.index.rawValue, key.key, row: nil)
            // Only remove the entry if it is still this row's.
            let holder = try tree.withValue(treeKey) { $0.count == 8 ? $0.loadLE64(0) : nil }
            if holder == row { try tree.remove(treeKey) }
        } else {
            try tree.remove(TreeKey.indexEntry(key.index.rawValue, key.key, row: row))
        }
    }

    /// Deletes a row and its index entries; `indexKeys` are the keys the row was stored with
    /// (none for a row without index entries). Returns false if there was no such row.
    ///
    /// - Throws: `StoreError` `.indexKeyMismatch` when `indexKeys` are not the row's keys
    ///   (nothing is deleted then); `.notFound` for an unknown collection.
    @discardableResult
    public func delete(_ row: RowID, in collection: CollectionID, indexKeys: [IndexKey] = []) throws -> Bool {
        try checkOpen()
        guard let position = catalog.collectionPosition(collection.rawValue) else { throw missingCollection(collection) }
        let rowKey = TreeKey.row(collection.rawValue, row)
        guard let old = try tree.withValue(rowKey, { try self.location($0, at: "row \(row)") }) else { return false }
        try checkBookkeeping(position, removing: old, countToo: true)
        let keys = try checkPreviousKeys(indexKeys, of: row, in: collection, at: old)
        try tree.remove(rowKey)
        for k in keys { try removeIndexEntry(k, row: row) }
        catalog.collections[position].count -= 1
        catalog.collections[position].liveBytes -= UInt64(old.length)
        return true
    }

    /// Throws `.corrupt` when the catalog cannot account for a stored record (its count or live
    /// bytes are less than the record takes away): damage that a checksum did not catch.
    private func checkBookkeeping(_ position: Int, removing location: RecordLocation, countToo: Bool) throws {
        let info = catalog.collections[position]
        guard info.liveBytes >= UInt64(location.length), !countToo || info.count > 0 else {
            throw StoreError.corrupt("the catalog of collection \"\(info.name)\" counts \(info.count) records in \(info.liveBytes) bytes, fewer than its rows hold",
                                     path: store.path, offset: location.offset)
        }
    }

    /// Deletes every record of a collection; returns how many.
    @discardableResult
    public func deleteAll(in collection: CollectionID) throws -> Int {
        try checkOpen()
        var rows: [(RowID, [IndexKey])] = []
        var cursor = try self.rows(in: collection)
        while let (row, location) = try cursor.nextLocation() {
            let keys = try withFrameHeader(location) { RecordFrame.indexKeys($0) }
                .filter { k in catalog.index(k.index.rawValue)?.collection == collection.rawValue }
            rows.append((row, keys))
        }
        for (row, keys) in rows { try delete(row, in: collection, indexKeys: keys) }
        return rows.count
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
        value.appendLE(CRC32C.checksum(bytes))
        try tree.insert(TreeKey.blob(id), value)
        catalog.nextBlobID = Swift.max(catalog.nextBlobID, id + 1)
        return BlobID(rawValue: id)
    }

    /// Forgets a blob; its file is removed once the transaction has committed.
    public func deleteBlob(_ id: BlobID) throws {
        try checkOpen()
        guard try tree.remove(TreeKey.blob(id.rawValue)) != nil else {
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
        let key = TreeKey.metadata(name)
        if let old = try tree.withValue(key, { try self.location($0, at: "metadata \(name)") }) {
            guard catalog.liveOtherBytes >= UInt64(old.length) else {
                throw StoreError.corrupt("the catalog counts fewer metadata bytes than metadata \"\(name)\" holds", path: store.path, offset: old.offset)
            }
            catalog.liveOtherBytes -= UInt64(old.length)
            try tree.remove(key)
        }
        guard let value else { return }
        let frame = value.withUnsafeBytes { RecordFrame.encode(kind: RecordFrame.kindMetadata, indexKeys: [], payload: $0) }
        let offset = try appending("writing metadata") { try writer.append(frame) }
        try tree.insert(key, RecordLocation(offset: offset, length: UInt32(frame.count)).encode())
        catalog.liveOtherBytes += UInt64(frame.count)
    }

    // MARK: Commit

    /// Makes the transaction's changes durable (per the store's durability) and visible.
    ///
    /// - Throws: `StoreError` `.diskFull` or `.ioFailure` if a write or sync fails; nothing of
    ///   the transaction is kept, and the next write transaction reopens the store file
    ///   (through a new descriptor, never retrying the failed sync) before it goes on.
    public func commit() throws {
        try checkOpen()
        finished = true
        defer { store.endWriting() }
        let durable = store.options.durability == .full
        let newSnapshot: Snapshot
        do {
            if durable && writer.syncedEnd < writer.committedEnd {
                // The first commit of a session makes what the last one left durable before it
                // builds on it (see Store.openFile).
                try writer.sync()
            }
            let rootRef = try tree.write(into: writer)
            catalog.liveTreeBytes = catalog.liveTreeBytes + tree.writtenBytes - Swift.min(catalog.liveTreeBytes + tree.writtenBytes, tree.supersededBytes)
            var flags: UInt32 = 0
            if writer.bodySize > Store.singleSyncBodyLimit {
                // A large body is synced before its commit record, so that opening need not read
                // it (in every durability mode: the flag must be true).
                flags |= CommitRecord.flagBodySynced
                try writer.flush()
                try writer.sync()
            }
            if writer.syncedEnd < writer.committedEnd { flags |= CommitRecord.flagPreviousNotSynced }
            // Blob files are durable before any commit refers to them, in every durability mode.
            if !newBlobs.isEmpty { try store.blobs.syncFolder() }
            let offset = writer.end
            let record = CommitRecord(
                sequence: base.sequence + 1, offset: offset, previousOffset: base.commitOffset,
                bodyStart: writer.committedEnd, bodyChecksum: writer.bodyChecksum, flags: flags, root: rootRef,
                timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: file.salt, catalog: catalog)
            writer.appendCommitRecord(record.encode())
            try writer.flush()
            if durable { try writer.sync() }
            writer.markCommitted()
            newSnapshot = Snapshot(sequence: record.sequence, root: rootRef, catalog: catalog, commitOffset: offset,
                                   end: writer.committedEnd, file: file)
        } catch {
            let failure = StoreError.io(error, doing: "committing", path: store.path,
                                        consequence: StoreError.transactionLost, next: StoreError.nextWriteReopens)
            store.fail(failure)
            // Cut off what this commit wrote, so that the file says what the error says:
            // nothing was saved. After a failed sync its bytes may never reach the disk
            // although reads still see them; a later session must not build on them.
            try? writer.discard()
            throw failure
        }
        file.counters.commits.add(1, ordering: .relaxed)
        store.publish(newSnapshot)
        store.retireBlobs(deletedBlobs, deletedBy: newSnapshot.sequence, durable: durable)
    }

    /// Drops every change of this transaction.
    public func rollback() {
        guard !finished else { return }
        finished = true
        defer { store.endWriting() }
        do { try writer.discard() } catch {
            store.fail(StoreError.io(error, doing: "rolling back", path: store.path, next: StoreError.nextWriteReopens))
        }
        for id in newBlobs { store.blobs.remove(id) }
    }
}
