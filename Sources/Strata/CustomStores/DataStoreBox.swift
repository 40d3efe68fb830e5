import Foundation
@_spi(StorageBackend) import StrataRecords

/// A custom store of any type, as the context's bridge to it (`DataStoreStorage`) calls it:
/// its snapshots are `DefaultSnapshot`s whatever the store's own type is.
protocol AnyDataStore: AnyObject {
    var identifier: String { get }
    var isBatching: Bool { get }
    /// True for a `DataStoreBatchedFetching` store, which applies a descriptor's offset and
    /// limit in `fetch(_:)` too.
    var pagesFetches: Bool { get }
    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot])
    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> Int
    /// The identifiers of the objects the descriptor selects, in its order (the store's
    /// `fetchIdentifiers`).
    func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> [PersistentIdentifier]
    /// The store's snapshots a batch at a time (`DataStoreBatchedFetching`); false (and `body`
    /// never called) when the store does not fetch in batches.
    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int, _ editingState: EditingState,
                                   _ body: ([DefaultSnapshot]) throws -> Bool) throws -> Bool
    func save(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot], history: DataStoreHistoryRecord?,
              _ editingState: EditingState) throws -> DataStoreSaveAnswer
    /// True for a `HistoryRecordingDataStore`.
    var recordsHistory: Bool { get }
    func historyRecords(after token: Int64) throws -> [(token: Int64, record: DataStoreHistoryRecord)]
    func deleteHistoryRecords(_ tokens: [Int64]) throws
    func newestHistoryToken() throws -> Int64
    func oldestHistoryToken() throws -> Int64?
    /// Deletes what the predicate selects, if the store is `DataStoreBatching` (false if not).
    func delete<T: PersistentModel>(_ model: T.Type, where predicate: Predicate<T>?, includeSubclasses: Bool, _ editingState: EditingState) throws -> Bool
    func erase() throws
    /// The store's change token, if it is an `ObservableDataStore` that can tell it now.
    func changeToken() -> UInt64?
}

/// What a store answered to a save (`DataStoreSaveChangesResult`, its snapshots as `DefaultSnapshot`s).
struct DataStoreSaveAnswer {
    var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
    var versions: [PersistentIdentifier: Int64] = [:]
    var replacedVersions: [PersistentIdentifier: Int64] = [:]
}

/// `AnyDataStore` over a store of type `S`.
final class DataStoreBox<S: DataStore>: AnyDataStore {
    let store: S

    init(_ store: S) { self.store = store }

    var identifier: String { store.identifier }
    var isBatching: Bool { store is any DataStoreBatching }
    var pagesFetches: Bool { store is any DataStoreBatchedFetching }

    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot]) {
        let result = try store.fetch(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState))
        return (try result.fetchedSnapshots.map { try Self.common($0) }, try result.relatedSnapshots.mapValues { try Self.common($0) })
    }

    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> Int {
        try store.fetchCount(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState))
    }

    func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> [PersistentIdentifier] {
        try store.fetchIdentifiers(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState))
    }

    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int, _ editingState: EditingState,
                                   _ body: ([DefaultSnapshot]) throws -> Bool) throws -> Bool {
        guard let batched = store as? any DataStoreBatchedFetching else { return false }
        try Self.fetch(batched, DataStoreFetchRequest(descriptor: descriptor, editingState: editingState), batchSize: batchSize, body)
        return true
    }

    private static func fetch<B: DataStoreBatchedFetching, T: PersistentModel>(_ store: B, _ request: DataStoreFetchRequest<T>, batchSize: Int,
                                                                              _ body: ([DefaultSnapshot]) throws -> Bool) throws {
        try store.fetch(request, batchSize: batchSize) { batch in
            if let same = batch as? [DefaultSnapshot] { return try body(same) }
            return try body(try batch.map { snapshot in
                if let same = snapshot as? DefaultSnapshot { return same }
                return try DataStoreBox<B>.common(snapshot)
            })
        }
    }

    func save(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot], history: DataStoreHistoryRecord?,
              _ editingState: EditingState) throws -> DataStoreSaveAnswer {
        let request = DataStoreSaveChangesRequest(inserted: try inserted.map { try Self.own($0) }, updated: try updated.map { try Self.own($0) },
                                                  deleted: try deleted.map { try Self.own($0) }, editingState: editingState)
        let result: DataStoreSaveChangesResult<S.Snapshot>
        if let history, let recording = store as? any HistoryRecordingDataStore {
            result = try Self.save(recording, request, history)
        } else {
            result = try store.save(request)
        }
        return DataStoreSaveAnswer(remapped: result.remappedIdentifiers, reregister: try result.snapshotsToReregister.mapValues { try Self.common($0) },
                                   versions: result.savedVersions, replacedVersions: result.replacedVersions)
    }

    private static func save<R: HistoryRecordingDataStore>(_ store: R, _ request: DataStoreSaveChangesRequest<S.Snapshot>,
                                                          _ history: DataStoreHistoryRecord) throws -> DataStoreSaveChangesResult<S.Snapshot> {
        // (R is S: the store was checked to record history.)
        guard let own = request as? DataStoreSaveChangesRequest<R.Snapshot> else { throw DataStoreError.unsupportedFeature }
        let result = try store.save(own, history: history)
        guard let back = result as? DataStoreSaveChangesResult<S.Snapshot> else { throw DataStoreError.unsupportedFeature }
        return back
    }

    var recordsHistory: Bool { store is any HistoryRecordingDataStore }

    func historyRecords(after token: Int64) throws -> [(token: Int64, record: DataStoreHistoryRecord)] {
        guard let recording = store as? any HistoryRecordingDataStore else { return [] }
        return try recording.historyRecords(after: token)
    }

    func deleteHistoryRecords(_ tokens: [Int64]) throws {
        guard let recording = store as? any HistoryRecordingDataStore else { return }
        try recording.deleteHistoryRecords(tokens)
    }

    func newestHistoryToken() throws -> Int64 {
        try (store as? any HistoryRecordingDataStore)?.newestHistoryToken() ?? 0
    }

    func oldestHistoryToken() throws -> Int64? {
        try (store as? any HistoryRecordingDataStore)?.oldestHistoryToken()
    }

    func delete<T: PersistentModel>(_ model: T.Type, where predicate: Predicate<T>?, includeSubclasses: Bool, _ editingState: EditingState) throws -> Bool {
        guard let batching = store as? any DataStoreBatching else { return false }
        try Self.delete(batching, DataStoreBatchDeleteRequest(editingState: editingState, predicate: predicate, includeSubclasses: includeSubclasses))
        return true
    }

    private static func delete<B: DataStoreBatching, T: PersistentModel>(_ store: B, _ request: DataStoreBatchDeleteRequest<T>) throws {
        try store.delete(request)
    }

    func erase() throws { try store.erase() }

    func changeToken() -> UInt64? { try? (store as? any ObservableDataStore)?.changeToken() }

    /// A store's snapshot as a `DefaultSnapshot`: itself, or read through its coded form.
    static func common(_ snapshot: S.Snapshot) throws -> DefaultSnapshot {
        if let same = snapshot as? DefaultSnapshot { return same }
        do { return try JSONDecoder().decode(DefaultSnapshot.self, from: try JSONEncoder().encode(snapshot)) } catch {
            throw StrataError(.corruptRecord, "A snapshot of type \(S.Snapshot.self) from \(S.self) cannot be read as a DefaultSnapshot (its coded form must be a keyed container: persistentIdentifier, then each property by name).", underlying: error)
        }
    }

    /// A `DefaultSnapshot` as the store's snapshot type: itself, or made from its values.
    static func own(_ snapshot: DefaultSnapshot) throws -> S.Snapshot {
        if let same = snapshot as? S.Snapshot { return same }
        var related: [PersistentIdentifier: any BackingData] = [:]
        return S.Snapshot(from: SnapshotBackingData(snapshot), relatedBackingDatas: &related)
    }
}

/// A snapshot's values as `BackingData`, for a store's own snapshot type to be made from.
final class SnapshotBackingData: BackingData {
    let snapshot: DefaultSnapshot
    init(_ snapshot: DefaultSnapshot) { self.snapshot = snapshot }
    var persistentModelID: PersistentIdentifier? { snapshot.persistentIdentifier }
    var snapshotValues: [String: SnapshotValue] { snapshot.values }
}
