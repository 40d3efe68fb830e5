// Putting and deleting rows with their index entries.
//
// The engine keeps a row's record and a 4-byte digest of its index keys, not the keys: whoever
// updates or deletes a row names the keys it was stored with, the digest checks them, and
// their entries are removed (`.indexKeyMismatch` when they are not the row's keys).

extension WriteTransaction {
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
    ///   `.keyTooLarge` for an index key over 2038 bytes (an index holds a longer key as
    ///   `KeyEncoding.storedForm(key)`), `.valueTooLarge`, `.notFound` for an unknown
    ///   collection or index. Nothing is changed then.
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
        try put(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys, previousKeysOf: { _ in [] }, readsStored: false)
    }

    /// `putUnlessConflicting` for a row that may be stored, whose previous keys come from its
    /// stored record: `previousKeysOf` gets the record (valid during the call only; it must
    /// not change this transaction) and returns the keys it was stored with. It is not called
    /// when there is no such row (the row is then new). One search of the row tree serves the
    /// read and the write (an upsert that read the row first, then put it, searched twice).
    ///
    /// - Throws: what `putUnlessConflicting` throws, and what `previousKeysOf` throws (nothing
    ///   is changed then).
    public func putUnlessConflicting(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                                     previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> UniqueConflict? {
        try put(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: [], previousKeysOf: previousKeysOf, readsStored: true)
    }

    /// The two `putUnlessConflicting`: the previous keys given, or (`readsStored`) computed
    /// from the stored record.
    private func put(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey], previousKeys: [IndexKey],
                     previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey], readsStored: Bool) throws -> UniqueConflict? {
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
        guard record.count <= ValueFrame.maximumLength - ValueFrame.headerSize else {
            throw StoreError(.valueTooLarge, "A record may have at most 1 GiB; store large values as blobs.", path: store.path)
        }
        // Check everything before changing anything, so a failed put leaves the transaction as it was.
        let rowsID = TreeID.rows(collection.rawValue)
        let rows = tree(rowsID)
        // The catalog keeps one more than the largest row id ever put: a row at or past it
        // was never written, and needs no lookup. (Should the row be there anyway, the catalog
        // is damaged: the insert finds it and throws `.corrupt` before it changes anything. A
        // record long enough for a frame of its own is looked up, as the frame is written first.)
        let isNew = row >= catalog.collections[position].nextRowID && record.count <= PageLayout.inlineValueLimit
        var old: StoredRow? = nil
        var given = previousKeys
        if !isNew {
            try TreeKey.withRow(row) { key in
                // (The path to the row is made changeable as it is found: the row is written
                // through it next, without a second descent.)
                guard let position = try rows.findChanging(key) else { return }
                try withExtendedLifetime(position.node) {
                    let cell = position.view.leafCell(position.index)
                    old = try storedRow(cell, row: row)
                    if readsStored { given = try withRecordValue(cell.value, flags: cell.flags, row: row, previousKeysOf) }
                }
            }
        }
        let oldKeys = try checkPreviousKeys(given, of: row, in: collection, stored: old)
        for k in indexKeys {
            // Fields read in place: a copy of the whole record (with its name) cost a retain
            // and a release per key.
            guard let p = catalog.indexPosition(k.index.rawValue), catalog.indexes[p].collection == collection.rawValue else {
                throw StoreError(.invalidArgument, "\(k.index) is not an index of \(collection).", path: store.path)
            }
            guard k.key.count <= PageLayout.maximumIndexKeyLength else {
                throw StoreError(.keyTooLarge, "An index key has \(k.key.count) bytes; the most is \(PageLayout.maximumIndexKeyLength). Pass KeyEncoding.storedForm(key), which an index holds for a key of any length.", path: store.path)
            }
            // A key the row already has is this row's entry: an update that keeps its unique
            // values needs no lookup.
            if catalog.indexes[p].unique, !oldKeys.contains(k),
               let holder = try k.key.withUnsafeBytes({ try uniqueHolder($0, index: k.index.rawValue) }), holder != row {
                return UniqueConflict(index: k.index, key: k.key, existingRow: holder)
            }
        }
        // (The digest after the checks: an upsert's first put, which finds the stored holder,
        // needs none. A row that keeps its keys keeps the digest they were checked against.)
        let digest: UInt32
        if let old, oldKeys == indexKeys { digest = old.digest } else { digest = KeysDigest.of(indexKeys) }
        if let frame = old?.frame { addFrameBytes(-Int64(frame.length), to: rowsID) }
        try writeRow(record, row: row, digest: digest, into: rows, id: rowsID, isNew: isNew)
        for k in oldKeys where !indexKeys.contains(k) { try removeEntry(k, row: row) }
        for k in indexKeys where !oldKeys.contains(k) { try addEntry(k, row: row) }
        if old == nil { catalog.collections[position].count += 1 }
        if row >= catalog.collections[position].nextRowID { catalog.collections[position].nextRowID = row + 1 }
        try keepWithinBudget()
        return nil
    }

    /// What a stored row's leaf says: its keys digest (0 for none) and its value frame.
    struct StoredRow {
        let digest: UInt32
        let frame: ValueLocation?
    }

    func storedRow(_ key: UnsafeRawBufferPointer, in rows: MutableTree, row: RowID) throws -> StoredRow? {
        guard let position = try rows.find(key) else { return nil }
        return try withExtendedLifetime(position.node) { try storedRow(position.view.leafCell(position.index), row: row) }
    }

    /// What a row's leaf cell says (read while the leaf is alive).
    func storedRow(_ cell: (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8), row: RowID) throws -> StoredRow {
        guard let value = RowValue.decode(cell.value, flags: cell.flags) else {
            throw StoreError.corrupt("a malformed row value (row \(row))", path: store.path, offset: nil)
        }
        return StoredRow(digest: value.digest ?? 0, frame: value.frame)
    }

    /// Writes a row's leaf value: the digest, then the record (or, when long, where its frame is).
    func writeRow(_ record: UnsafeRawBufferPointer, row: RowID, digest: UInt32, into rows: MutableTree, id: TreeID, isNew: Bool = false) throws {
        var flags: UInt8 = digest != 0 ? ValueFlags.keysDigest : 0
        let head = digest != 0 ? 4 : 0
        var location: ValueLocation?
        if record.count > PageLayout.inlineValueLimit {
            location = try appendFrame(record, for: id)
            flags |= ValueFlags.inFrame
        }
        let length = head + (location == nil ? record.count : ValueLocation.encodedSize)
        try withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { buffer in
            let base = buffer.baseAddress!
            if digest != 0 { base.storeBytes(of: digest.littleEndian, as: UInt32.self) }
            if let location {
                (base + head).storeBytes(of: location.offset.littleEndian, as: UInt64.self)
                (base + head + 8).storeBytes(of: location.length.littleEndian, as: UInt32.self)
            } else if record.count > 0 {
                (base + head).copyMemory(from: record.baseAddress!, byteCount: record.count)
            }
            try TreeKey.withRow(row) { try rows.insert($0, UnsafeRawBufferPointer(start: base, count: length), flags: flags, new: isNew) }
        }
    }

    static func deduplicated(_ keys: [IndexKey]) -> [IndexKey] {
        guard keys.count > 1 else { return keys }
        // Keys are nearly always distinct: find that out without building a new array.
        var distinct = true
        for i in 1..<keys.count where distinct {
            for j in 0..<i where keys[j] == keys[i] { distinct = false; break }
        }
        if distinct { return keys }
        var unique: [IndexKey] = []
        unique.reserveCapacity(keys.count)
        for k in keys where !unique.contains(k) { unique.append(k) }
        return unique
    }

    /// Checks that `previousKeys` are the keys `row` was stored with (none for a row that does
    /// not exist); returns them, without duplicates.
    func checkPreviousKeys(_ previousKeys: [IndexKey], of row: RowID, in collection: CollectionID, stored: StoredRow?) throws -> [IndexKey] {
        let given = Self.deduplicated(previousKeys)
        guard let stored else {
            if given.isEmpty { return [] }
            throw StoreError(.indexKeyMismatch, "Row \(row) of \(collection) does not exist, but \(given.count) previous index key(s) were given for it; a new row has none.", path: store.path)
        }
        let ownIndexes = given.allSatisfy { catalog.index($0.index.rawValue)?.collection == collection.rawValue }
        guard ownIndexes, KeysDigest.of(given) == stored.digest else {
            throw StoreError(.indexKeyMismatch, "The previous index keys given for row \(row) of \(collection) (\(given.count)) are not the keys it was stored with; nothing was changed. Pass the keys the row was last put with (computed from its stored record).", path: store.path)
        }
        return given
    }

    private func indexPosition(_ k: IndexKey) throws -> Int {
        guard let p = catalog.indexPosition(k.index.rawValue) else { throw missingIndex(k.index) }
        return p
    }

    /// Adds `row`'s entry for `k` (the caller checked that no other row holds a unique key).
    /// Entries are held back and applied to the index in key order (`PendingEntries`).
    func addEntry(_ k: IndexKey, row: RowID) throws {
        let p = try indexPosition(k)
        let entries = pendingEntries(of: k.index.rawValue, unique: catalog.indexes[p].unique)
        k.key.withUnsafeBytes { entries.add(PendingEntries.insert, key: $0, row: row) }
        notePending(k.key.count)
        catalog.indexes[p].entries += 1
    }

    /// Removes `row`'s entry for `k`, which must be there.
    func removeEntry(_ k: IndexKey, row: RowID) throws {
        let p = try indexPosition(k)
        // (A key this long was never put: previous keys come from records, which may be damaged.)
        guard k.key.count <= PageLayout.maximumKeyLength else {
            throw StoreError.corrupt("index \"\(catalog.indexes[p].name)\" has no entry for row \(row) although the row's keys name one", path: store.path, offset: nil)
        }
        let id = k.index.rawValue, unique = catalog.indexes[p].unique
        // An entry held back in this transaction is checked now (the table of a unique index's
        // held-back entries, in the probe that records the removal); one in the tree when it
        // is applied (`applyPending` removes a unique entry only if it names this row, and
        // throws `.corrupt` otherwise), without a lookup per removal.
        let entries = pendingEntries(of: id, unique: unique)
        let holds = catalog.indexes[p].entries > 0 && k.key.withUnsafeBytes { key in
            if unique { return entries.addRemoval(key: key, row: row) }
            entries.add(PendingEntries.remove, key: key, row: row)
            return true
        }
        guard holds else {
            throw StoreError.corrupt("index \"\(catalog.indexes[p].name)\" has no entry for row \(row) although the row's keys name one", path: store.path, offset: nil)
        }
        notePending(k.key.count)
        catalog.indexes[p].entries -= 1
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
        let rows = tree(.rows(collection.rawValue))
        return try TreeKey.withRow(row) { key in
            guard let old = try storedRow(key, in: rows, row: row) else { return false }
            try remove(row, key: key, stored: old, indexKeys: indexKeys, from: rows, position: position, collection: collection)
            return true
        }
    }

    /// Deletes a row whose index keys are computed from its record: `indexKeysOf` gets the
    /// stored record (valid during the call only; it must not change this transaction) and
    /// returns the keys the row was stored with. One search of the row tree serves both the
    /// read and the removal. Returns false if there was no such row.
    ///
    /// ```swift
    /// try tx.delete(row, in: users) { record in [IndexKey(byEmail, emailKey(of: record))] }
    /// ```
    ///
    /// - Throws: what `delete(_:in:indexKeys:)` throws, and what `indexKeysOf` throws (nothing
    ///   is deleted then).
    @discardableResult
    public func delete(_ row: RowID, in collection: CollectionID, indexKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> Bool {
        try checkOpen()
        guard let position = catalog.collectionPosition(collection.rawValue) else { throw missingCollection(collection) }
        let rows = tree(.rows(collection.rawValue))
        return try TreeKey.withRow(row) { key in
            guard let found = try rows.findChanging(key) else { return false }
            let at = (index: found.index, version: rows.version)
            let cell = found.view.leafCell(found.index)
            let (old, keys) = try withExtendedLifetime(found.node) {
                (try storedRow(cell, row: row), try withRecordValue(cell.value, flags: cell.flags, row: row, indexKeysOf))
            }
            try remove(row, key: key, stored: old, indexKeys: keys, from: rows, position: position, collection: collection, found: at)
            return true
        }
    }

    /// Removes a stored row (its leaf said `old`) once its keys are checked, and its entries.
    /// `found`: the cell where `findChanging` found the row, and the tree's version then.
    private func remove(_ row: RowID, key: UnsafeRawBufferPointer, stored old: StoredRow, indexKeys: [IndexKey],
                        from rows: MutableTree, position: Int, collection: CollectionID,
                        found: (index: Int, version: Int)? = nil) throws {
        let keys = try checkPreviousKeys(indexKeys, of: row, in: collection, stored: old)
        guard catalog.collections[position].count > 0 else {
            throw StoreError.corrupt("the catalog of collection \"\(catalog.collections[position].name)\" counts no records, fewer than its rows hold", path: store.path, offset: nil)
        }
        if let found { try rows.removeFound(at: found.index, key: key, since: found.version) } else { try rows.remove(key) }
        if let frame = old.frame { addFrameBytes(-Int64(frame.length), to: .rows(collection.rawValue)) }
        for k in keys { try removeEntry(k, row: row) }
        catalog.collections[position].count -= 1
        try keepWithinBudget()
    }
}
