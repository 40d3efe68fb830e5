// What a store reports of itself: a summary (`Store.info()`: sizes, sequence, collections,
// what compaction would free) and its counters (`statistics`).

extension Store {
    /// What the store has done since it was opened (pages checked, bytes written, syncs, commits).
    public var statistics: StoreStatistics { currentSnapshot().file.counters.snapshot }

    /// A summary of the store: sizes, sequence, collections and what compaction would free.
    public func info() throws -> StoreInfo {
        let snapshot = options.readOnly ? try read { $0.base } : currentSnapshot()
        let size: UInt64
        do { size = try snapshot.file.io.size() } catch { throw StoreError.io(error, doing: "reading the store's size", path: path) }
        let catalog = snapshot.catalog
        func add(_ a: UInt64, _ b: UInt64) -> UInt64 { let (sum, overflow) = a.addingReportingOverflow(b); return overflow ? .max : sum }
        let total = add(add(catalog.liveBytes, UInt64(FileHeader.size)), snapshot.end - snapshot.commitOffset)
        let live = Swift.min(total, UInt64(Int.max))
        let collections = catalog.collections.map { c in
            StoreInfo.Collection(name: c.name, id: CollectionID(rawValue: c.id), count: Int(c.count), liveBytes: Int(Swift.min(c.liveBytes, UInt64(Int.max))),
                                 indexes: catalog.indexes.filter { $0.collection == c.id }.map(ReadTransaction.describe))
        }
        return StoreInfo(path: path, formatVersion: Int(FileHeader.currentVersion), fileSize: Int(size), sequence: snapshot.sequence,
                         liveBytes: Int(live), reclaimableBytes: Int(size > live ? size - live : 0), collections: collections)
    }
}

/// A summary of a store, as `Store.info()` gives it.
public struct StoreInfo: Sendable {
    public struct Collection: Sendable {
        public let name: String
        public let id: CollectionID
        public let count: Int
        /// Bytes of the collection's row pages and long values (not its indexes).
        public let liveBytes: Int
        public let indexes: [IndexDescription]
    }
    public let path: String
    public let formatVersion: Int
    public let fileSize: Int
    /// The sequence number of the last commit.
    public let sequence: UInt64
    /// Bytes of live pages, values and metadata.
    public let liveBytes: Int
    /// About how many bytes `compact()` would free.
    public let reclaimableBytes: Int
    public let collections: [Collection]
}
