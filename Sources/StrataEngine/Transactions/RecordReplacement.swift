// Replacing a record's bytes while keeping its index entries: for a layer above that rewrites
// records whose indexed values do not change (`strata migrate` rewriting records of older
// layouts), and so need not compute their index keys again.

extension WriteTransaction {
    /// Replaces the bytes of a stored row's record and keeps its index entries as they are:
    /// for a record rewritten into another form whose indexed values are the same. Returns
    /// false, changing nothing, when there is no such row.
    ///
    /// - Throws: `.valueTooLarge`, `.notFound` for an unknown collection, and `.corrupt` for a
    ///   damaged row; the transaction is then as it was.
    @discardableResult
    public func replaceRecord(_ record: [UInt8], row: RowID, in collection: CollectionID) throws -> Bool {
        try checkOpen()
        guard catalog.collectionPosition(collection.rawValue) != nil else { throw missingCollection(collection) }
        guard record.count <= ValueFrame.maximumLength - ValueFrame.headerSize else {
            throw StoreError(.valueTooLarge, "A record may have at most 1 GiB; store large values as blobs.", path: store.path)
        }
        let id = TreeID.rows(collection.rawValue)
        let rows = tree(id)
        guard let old = try TreeKey.withRow(row, { try storedRow($0, in: rows, row: row) }) else { return false }
        if let frame = old.frame { addFrameBytes(-Int64(frame.length), to: id) }
        try record.withUnsafeBytes { try writeRow($0, row: row, digest: old.digest, into: rows, id: id) }
        try keepWithinBudget()
        return true
    }
}
