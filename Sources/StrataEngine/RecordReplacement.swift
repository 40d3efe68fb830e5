// Reading the index keys a row's record frame carries, and replacing a record's bytes while
// keeping them: for a layer above that rewrites records whose indexed values do not change
// (`strata migrate` rewriting records of older layouts), and so cannot or need not compute
// their index keys again.

extension ReadTransaction {
    /// The index keys kept with a row's record (the keys `put` was last given for the row),
    /// without those of indexes dropped since; nil when the collection has no such row.
    ///
    /// - Throws: `StoreError` `.notFound` for an unknown collection; `.corrupt` when the record
    ///   fails its checksum or its frame is malformed.
    public func indexKeys(of row: RowID, in collection: CollectionID) throws -> [IndexKey]? {
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        let key = TreeKey.row(collection.rawValue, row)
        guard let location = try key.withUnsafeBytes({ k in
            try reader.withValue(root: root, key: k) { try self.location($0, at: "row \(row)") }
        }) else { return nil }
        let keys = try withWholeFrame(location) { RecordFrame.indexKeys($0) }
        return keys.filter { k in catalog.index(k.index.rawValue)?.collection == collection.rawValue }
    }

    /// Calls `body` with a whole checked record frame (header included): committed bytes, or
    /// in a write transaction its own uncommitted ones.
    private func withWholeFrame<R>(_ location: RecordLocation, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if let write = self as? WriteTransaction { return try write.withFrameHeader(location, verifyCommitted: true, body) }
        return try file.withBytes(at: location.offset, count: Int(location.length), limit: reader.limit) { raw in
            guard RecordFrame.check(raw) != nil else {
                throw StoreError.corrupt("the record at byte \(location.offset) fails its checksum", path: store.path, offset: location.offset)
            }
            return try body(raw)
        }
    }
}

extension WriteTransaction {
    /// Replaces the bytes of a stored row's record and keeps its index entries as they are:
    /// for a record rewritten into another form whose indexed values are the same. The index
    /// keys are not computed again; the row keeps the ones its record had (see
    /// `indexKeys(of:in:)`). Returns false, changing nothing, when there is no such row.
    ///
    /// - Throws: what `put` throws (`.valueTooLarge`, `.notFound` for an unknown collection),
    ///   and `.corrupt` for a damaged record; the transaction is then as it was.
    @discardableResult
    public func replaceRecord(_ record: [UInt8], row: RowID, in collection: CollectionID) throws -> Bool {
        guard let keys = try indexKeys(of: row, in: collection) else { return false }
        try put(record, row: row, in: collection, indexKeys: keys)
        return true
    }
}
