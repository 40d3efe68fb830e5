// Replacing a record's bytes while keeping its index entries: for a layer above that rewrites
// records whose indexed values do not change (`strata migrate` rewriting records of older
// layouts), and so need not compute their index keys again.

extension WriteTransaction {
    /// Replaces the bytes of a stored row's record and keeps its index entries as they are:
    /// for a record rewritten into another form whose indexed values are the same. Returns
    /// false, changing nothing, when there is no such row.
    ///
    /// - Throws: `.valueTooLarge`, `.notFound` for an unknown collection, and `.corrupt` for a
    ///   damaged record; the transaction is then as it was.
    @discardableResult
    public func replaceRecord(_ record: [UInt8], row: RowID, in collection: CollectionID) throws -> Bool {
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        let key = TreeKey.row(collection.rawValue, row)
        guard let location = try tree.withValue(key, { try self.location($0, at: "row \(row)") }) else { return false }
        let keys = try withFrameHeader(location, verifyCommitted: true) { RecordFrame.indexKeys($0) }
            .filter { k in catalog.index(k.index.rawValue)?.collection == collection.rawValue }
        try put(record, row: row, in: collection, indexKeys: keys, previousKeys: keys)
        return true
    }
}
