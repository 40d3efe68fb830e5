import Foundation

/// A custom store of any type, as the context's bridge to it (`DataStoreStorage`) calls it:
/// its snapshots are `DefaultSnapshot`s whatever the store's own type is.
protocol AnyDataStore: AnyObject {
    var identifier: String { get }
    var isBatching: Bool { get }
    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot])
    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> Int
    func save(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot], _ editingState: EditingState) throws
        -> (remapped: [PersistentIdentifier: PersistentIdentifier], reregister: [PersistentIdentifier: DefaultSnapshot])
    /// Deletes what the predicate selects, if the store is `DataStoreBatching` (false if not).
    func delete<T: PersistentModel>(_ model: T.Type, where predicate: Predicate<T>?, includeSubclasses: Bool, _ editingState: EditingState) throws -> Bool
    func erase() throws
}

/// `AnyDataStore` over a store of type `S`.
final class DataStoreBox<S: DataStore>: AnyDataStore {
    let store: S

    init(_ store: S) { self.store = store }

    var identifier: String { store.identifier }
    var isBatching: Bool { store is any DataStoreBatching }

    func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot]) {
        let result = try store.fetch(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState))
        return (try result.fetchedSnapshots.map(Self.common), try result.relatedSnapshots.mapValues(Self.common))
    }

    func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ editingState: EditingState) throws -> Int {
        try store.fetchCount(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState))
    }

    func save(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot], _ editingState: EditingState) throws
        -> (remapped: [PersistentIdentifier: PersistentIdentifier], reregister: [PersistentIdentifier: DefaultSnapshot]) {
        let request = DataStoreSaveChangesRequest(inserted: try inserted.map(Self.own), updated: try updated.map(Self.own),
                                                  deleted: try deleted.map(Self.own), editingState: editingState)
        let result = try store.save(request)
        return (result.remappedIdentifiers, try result.snapshotsToReregister.mapValues(Self.common))
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
