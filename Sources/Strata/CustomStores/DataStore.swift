import Foundation
@_spi(StorageBackend) import StrataRecords

// SwiftData's custom data store API (iOS 18), with its shipped spelling: a store of one's own
// plugs into the same ModelContainer and ModelContext code as Strata's engine. The context
// speaks to such a store only in snapshots (`DataStoreSnapshot`, `DefaultSnapshot`): a fetch
// request with the descriptor, answered with the snapshots of the objects; a save request with
// the inserted, updated and deleted objects' snapshots, answered with the identifiers the
// store gave the new ones. Docs/CustomStores.md has a complete store and the rules.

/// A store of models that the context reads and writes through snapshots, whatever keeps them.
///
/// A store implements `init(_:migrationPlan:)`, `identifier`, `schema`, `configuration`,
/// `fetch` and `save`; the rest has default implementations. Its configuration names it
/// (`DataStoreConfiguration.Store`), and `ModelContainer(for:configurations:)` makes it.
///
/// Same as SwiftData's `DataStore`.
public protocol DataStore: AnyObject {
    associatedtype Configuration: DataStoreConfiguration where Self == Self.Configuration.Store
    associatedtype Snapshot: DataStoreSnapshot

    /// Names the store in the identifiers it makes (`PersistentIdentifier.storeIdentifier`).
    var identifier: String { get }
    /// The models it keeps.
    var schema: Schema { get }
    var configuration: Self.Configuration { get }

    init(_ configuration: Self.Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws

    /// Removes every object. (Default: unsupported.)
    func erase() throws
    /// The snapshots of the objects the request's descriptor selects, in its order. A store
    /// that does not evaluate the predicate or the sort throws `DataStoreError.preferInMemoryFilter`
    /// or `.preferInMemorySort`: the context asks again without that part, and does it itself.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Self.Snapshot>
    /// How many objects the request selects. (Default: the count of `fetch`'s snapshots.)
    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int
    /// The identifiers of the objects the request selects. (Default: from `fetch`.)
    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier]
    /// Stores the request's changes, all or nothing, and answers with the permanent identifier
    /// of each inserted snapshot (`remappedIdentifiers`, temporary to permanent).
    func save(_ request: DataStoreSaveChangesRequest<Self.Snapshot>) throws -> DataStoreSaveChangesResult<Self.Snapshot>
    /// A context starts using the store. (Default: nothing.)
    func initializeState(for editingState: EditingState)
    /// A context stops using the store. (Default: nothing.)
    func invalidateState(for editingState: EditingState)
    /// Snapshots the store keeps at hand for these identifiers. (Default: unsupported; the
    /// context then fetches.)
    func cachedSnapshots(for persistentIdentifiers: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier: Self.Snapshot]
}

extension DataStore {
    /// The snapshots of `fetch` of the model `T` (a store may answer with others too, as
    /// WWDC24's JSON store answers with all it has), counted.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        let name = TypeNames.plain(T.self)
        return try fetch(request).fetchedSnapshots.reduce(0) { $0 + ($1.persistentIdentifier.entityName == name ? 1 : 0) }
    }

    /// The identifiers of `fetch`'s snapshots of the model `T`.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        let name = TypeNames.plain(T.self)
        return try fetch(request).fetchedSnapshots.map(\.persistentIdentifier).filter { $0.entityName == name }
    }

    public func erase() throws { throw DataStoreError.unsupportedFeature }
    public func initializeState(for editingState: EditingState) {}
    public func invalidateState(for editingState: EditingState) {}

    public func cachedSnapshots(for persistentIdentifiers: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier: Self.Snapshot] {
        throw DataStoreError.unsupportedFeature
    }
}

/// What a container needs to make a store: its type, name and models.
///
/// Same as SwiftData's `DataStoreConfiguration`.
public protocol DataStoreConfiguration: Hashable {
    associatedtype Store: DataStore where Self == Self.Store.Configuration
    var name: String { get }
    /// The models this configuration's store keeps (nil: the container's whole schema).
    var schema: Schema? { get set }
    /// Throws if the configuration cannot make a store. (Default: nothing.)
    func validate() throws
}

extension DataStoreConfiguration {
    public func validate() throws {}
}

/// A store that deletes the objects a predicate selects itself, without the context making
/// them (`ModelContext.delete(model:where:)`). Same as SwiftData's `DataStoreBatching`.
public protocol DataStoreBatching: DataStore {
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws
}

/// Strata-only: a store that answers a fetch a batch at a time, so that
/// `ModelContext.enumerate(_:batchSize:block:)` holds one batch of rows at a time whatever the
/// number of objects (a server's cursor, a keyset walk). SwiftData has no such protocol: its
/// custom stores answer a fetch whole.
///
/// A store that conforms also applies a descriptor's offset and limit in `fetch(_:)` (when it
/// takes the descriptor whole), and answers a descriptor without sort in the order its objects
/// were inserted: the context then asks it for a page deep in the order as that page.
public protocol DataStoreBatchedFetching: DataStore {
    /// Calls `body` with the snapshots the request's descriptor selects, in its order (its
    /// offset and limit applied), `batchSize` at a time (the last batch may be shorter), until
    /// they run out or `body` returns false. The batches are of one snapshot of the store. Throws
    /// `DataStoreError.preferInMemoryFilter` or `.preferInMemorySort`, before calling `body`, for
    /// a descriptor it does not evaluate: the context then fetches it whole.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>, batchSize: Int,
                                   _ body: ([Self.Snapshot]) throws -> Bool) throws
}

/// Strata-only: a store that tells when it changed, whoever changed it (another process, on
/// another machine), so that a container's observers (`ResultsObserver`, `historyChanges()`)
/// follow it. SwiftData has no such protocol.
public protocol ObservableDataStore: DataStore {
    /// A number that grows with every change of the store, by any writer.
    func changeToken() throws -> UInt64
}

/// A store that keeps the history of its saves. Same as SwiftData's `HistoryProviding`.
public protocol HistoryProviding {
    associatedtype HistoryType: HistoryTransaction
    static var historyType: Self.HistoryType.Type { get }
    func fetchHistory(_ descriptor: HistoryDescriptor<Self.HistoryType>) throws -> [Self.HistoryType]
    func deleteHistory(_ descriptor: HistoryDescriptor<Self.HistoryType>) throws
}

/// Which context is asking, and who it says it is. Same as SwiftData's `EditingState`.
public struct EditingState: Identifiable, Sendable {
    public typealias ID = UUID
    public let id: UUID
    public var author: String?

    init(id: UUID, author: String?) {
        self.id = id
        self.author = author
    }
}

/// A fetch the context asks of a store. Same as SwiftData's `DataStoreFetchRequest`.
public struct DataStoreFetchRequest<T: PersistentModel>: @unchecked Sendable {
    // @unchecked: a descriptor's key paths are not Sendable, and are only read.
    public let editingState: EditingState
    public let descriptor: FetchDescriptor<T>

    init(descriptor: FetchDescriptor<T>, editingState: EditingState) {
        self.descriptor = descriptor
        self.editingState = editingState
    }
}

/// A store's answer to a fetch: the selected objects' snapshots, and snapshots of objects they
/// refer to (which fill relationships without another fetch). Same as SwiftData's
/// `DataStoreFetchResult`.
public struct DataStoreFetchResult<ModelType: PersistentModel, SnapshotType: DataStoreSnapshot>: @unchecked Sendable {
    public let descriptor: FetchDescriptor<ModelType>
    public let fetchedSnapshots: [SnapshotType]
    public let relatedSnapshots: [PersistentIdentifier: SnapshotType]

    public init(descriptor: FetchDescriptor<ModelType>, fetchedSnapshots: [SnapshotType], relatedSnapshots: [PersistentIdentifier: SnapshotType] = [:]) {
        self.descriptor = descriptor
        self.fetchedSnapshots = fetchedSnapshots
        self.relatedSnapshots = relatedSnapshots
    }
}

/// A save the context asks of a store: one request for everything the save changes in it, with
/// the delete rules already applied. Same as SwiftData's `DataStoreSaveChangesRequest`.
public struct DataStoreSaveChangesRequest<SnapshotType: DataStoreSnapshot>: Sendable {
    public let inserted: [SnapshotType]
    public let updated: [SnapshotType]
    public let deleted: [SnapshotType]
    public let editingState: EditingState

    init(inserted: [SnapshotType], updated: [SnapshotType], deleted: [SnapshotType], editingState: EditingState) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.editingState = editingState
    }
}

/// A store's answer to a save: the permanent identifier of each inserted object (keyed by its
/// temporary one). An inserted object whose unique values match a stored object's is an
/// upsert: the store updates that object and answers with its identifier. Same as SwiftData's
/// `DataStoreSaveChangesResult`.
public final class DataStoreSaveChangesResult<T: DataStoreSnapshot>: Sendable {
    public let remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]
    public let storeIdentifier: String
    /// Snapshots the store changed as it saved, for the context to take (Strata reads them as
    /// the objects' new values).
    public let snapshotsToReregister: [PersistentIdentifier: T]
    /// Strata-only: for a store that keeps a version per object (`DefaultSnapshot.version`),
    /// each inserted or updated object's version after the save, keyed by the identifier its
    /// snapshot had in the request (an inserted object's temporary one). The saving context's
    /// objects take them, so that their next save is checked against what they saved. An
    /// object without one here is sent with no version from then on.
    ///
    /// Strata-only: SwiftData's results carry no versions.
    public let savedVersions: [PersistentIdentifier: Int64]
    /// Strata-only: for each inserted object the store resolved onto an object it held (an
    /// upsert, `remappedIdentifiers`), the version of that object the insert replaced, keyed by
    /// the insert's temporary identifier. Another context of the container that holds the
    /// object at that version then saves over the upsert as the engine lets it (the later save
    /// wins); without it, that context's save is a conflict. (Docs/CustomStores.md, "Versions".)
    ///
    /// Strata-only: SwiftData's results carry no versions.
    public let replacedVersions: [PersistentIdentifier: Int64]

    public init(for storeIdentifier: String, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] = [:],
                snapshotsToReregister: [PersistentIdentifier: T] = [:]) {
        self.storeIdentifier = storeIdentifier
        self.remappedIdentifiers = remappedIdentifiers
        self.snapshotsToReregister = snapshotsToReregister
        savedVersions = [:]
        replacedVersions = [:]
    }

    /// Strata-only: a result with each saved object's new version (`savedVersions`) and the
    /// versions its upserts replaced (`replacedVersions`).
    public init(for storeIdentifier: String, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] = [:],
                snapshotsToReregister: [PersistentIdentifier: T] = [:], savedVersions: [PersistentIdentifier: Int64],
                replacedVersions: [PersistentIdentifier: Int64] = [:]) {
        self.storeIdentifier = storeIdentifier
        self.remappedIdentifiers = remappedIdentifiers
        self.snapshotsToReregister = snapshotsToReregister
        self.savedVersions = savedVersions
        self.replacedVersions = replacedVersions
    }
}

/// A batch delete the context asks of a store (`DataStoreBatching`). Same as SwiftData's
/// `DataStoreBatchDeleteRequest`.
public struct DataStoreBatchDeleteRequest<T: PersistentModel>: Sendable {
    public let editingState: EditingState
    public let predicate: Predicate<T>?
    public let includeSubclasses: Bool

    init(editingState: EditingState, predicate: Predicate<T>?, includeSubclasses: Bool) {
        self.editingState = editingState
        self.predicate = predicate
        self.includeSubclasses = includeSubclasses
    }
}
