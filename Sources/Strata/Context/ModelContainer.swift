import Foundation
import Synchronization
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The stores of a schema, and the factory of contexts. Same as SwiftData's `ModelContainer`.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, Stop.self)            // default on-disk store
/// let container = try ModelContainer(for: Trip.self,
///                                    configurations: ModelConfiguration(url: URL(filePath: "trips.store")))
/// let context = ModelContext(container)
/// ```
/// A container is `Sendable`: share it between threads and give each its own `ModelContext`.
///
/// - Throws: `StrataError` `.invalidSchema` (a class cannot be persisted as declared, naming the
///   class and property), `.schemaMismatch` (the store has another schema), `.readOnly` (the
///   store file may not be written: open it with `allowsSave: false` to read it),
///   `.storeFailure` (the store is locked by another process, damaged, a folder, or cannot be
///   created, for example because its folder does not exist; `underlying` is the engine's
///   `StoreError`).
public final class ModelContainer: @unchecked Sendable {
    /// The schema: every model the container stores.
    public let schema: Schema
    /// The configurations, one per store.
    public let configurations: [ModelConfiguration]
    /// The plan the stores were migrated with, if the container was opened with one. Same as
    /// SwiftData's `migrationPlan`. (Set once, by the initializer.)
    public internal(set) var migrationPlan: (any SchemaMigrationPlan.Type)?
    let handles: [StoreHandle]
    /// What opens the stores (and makes migration copies).
    let storage: any StorageProvider
    private let handleByEntity: TypeMap<(StoreHandle, Table)>
    private let mainBox = MainContextBox()
    /// Compiled queries, by shape (shared by the container's contexts).
    let queries = QueryCache()
    /// Tells observers and change streams that a store committed (`History/ChangeHub.swift`).
    let changeHub = ChangeHub()

    /// A container for these models (and the models their relationships reach) in the stores
    /// of `configurations` (none: one store at the default location). Same as SwiftData's
    /// `init(for:configurations:)`.
    public convenience init(for forTypes: any PersistentModel.Type..., configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), configurations: configurations)
    }

    /// A container for a schema in the stores of `configurations`. Same as SwiftData's
    /// `init(for:configurations:)`.
    public convenience init(for givenSchema: Schema, configurations: ModelConfiguration...) throws {
        try self.init(for: givenSchema, configurations: configurations)
    }

    /// A container for a schema whose models live in the stores of these configurations, the
    /// configurations given without a label:
    /// `ModelContainer(for: schema, tripsConfiguration, peopleConfiguration)`.
    /// Same as SwiftData's `init(for:_:)`, an early spelling WWDC23's sample code uses.
    public convenience init(for givenSchema: Schema, _ first: ModelConfiguration, _ rest: ModelConfiguration...) throws {
        try self.init(for: givenSchema, configurations: [first] + rest)
    }

    /// A container for a schema in the stores of `configurations`. Same as SwiftData's
    /// `init(for:configurations:)` taking an array.
    public convenience init(for givenSchema: Schema, configurations: [ModelConfiguration]) throws {
        try self.init(for: givenSchema, configurations: configurations, storage: EngineStorageProvider())
    }

    /// A container whose stores do all their I/O through `fileSystem` (the engine's fault seam):
    /// for tests that fail writes or cut the power under a `save()`. Nil: the real disk.
    /// SPI (`@_spi(FaultInjection) import Strata`); SwiftData has no such seam.
    @_spi(FaultInjection)
    public convenience init(for givenSchema: Schema, configurations: [ModelConfiguration], fileSystem: AnyFileSystem?) throws {
        try self.init(for: givenSchema, configurations: configurations, storage: EngineStorageProvider(fileSystem: fileSystem?.base))
    }

    /// A container whose stores another storage backend keeps (the storage seam,
    /// `StorageBackend.swift`): `storage` opens each configuration's store.
    @_spi(StorageBackend)
    public convenience init(for givenSchema: Schema, configurations: [ModelConfiguration], storage: any StorageProvider) throws {
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        try self.init(for: givenSchema, stores: configurations.map { StoreSpec(configuration: $0, provider: storage) }, storage: storage)
    }

    /// One store of a container: its configuration (for a custom store, one Strata makes to
    /// stand for it: its name and models) and what opens it.
    struct StoreSpec {
        var configuration: ModelConfiguration
        var provider: any StorageProvider
        /// Set for a custom store's stand-in configuration, which `configurations` leaves out.
        var isCustom = false
    }

    /// The designated initializer: each store opened by its own provider; `storage` makes the
    /// copies of Strata's migrations.
    init(for givenSchema: Schema, stores: [StoreSpec], storage: any StorageProvider) throws {
        let entities = try givenSchema.entities()
        self.storage = storage
        self.schema = givenSchema
        let configurations = stores.map(\.configuration)
        self.configurations = stores.filter { !$0.isCustom }.map(\.configuration)
        var handles: [StoreHandle] = []
        var byEntity = TypeMap<(StoreHandle, Table)>()
        // (Lists and a `TypeMap`, not a `Set`: the first `ObjectIdentifier`-keyed hash table a
        // process makes costs a scan of every conformance loaded, W8.)
        var assigned: [ObjectIdentifier] = []
        // (By index, not `enumerated()`: its elements, optional pairs of an offset and a
        // configuration, were copied through metadata made on a fresh process's first open, W8.)
        for position in configurations.indices {
            let configuration = configurations[position]
            // A configuration with a schema keeps those models; the last one without keeps the rest.
            let mine: [Entity]
            if let subset = configuration.schema {
                mine = try subset.entities(includingRelated: false).filter { e in entities.contains { $0 === e } }
            } else {
                let laterClaims = configurations[(position + 1)...].compactMap(\.schema).flatMap(\.types).map(ObjectIdentifier.init)
                mine = entities.filter { !assigned.contains(ObjectIdentifier($0.type)) && !laterClaims.contains(ObjectIdentifier($0.type)) }
            }
            let fresh = mine.filter { !assigned.contains(ObjectIdentifier($0.type)) }
            var provider = stores[position].provider
            if let custom = provider as? DataStoreProvider { provider = custom.with(entities: fresh) }
            let handle = try StoreHandle(configuration: configuration, entities: fresh, provider: provider)
            handles.append(handle)
            for table in handle.tables {
                assigned.append(ObjectIdentifier(table.entity.type))
                byEntity[ObjectIdentifier(table.entity.type)] = (handle, table)
            }
        }
        self.handles = handles
        self.handleByEntity = byEntity
        changeHub.handles = handles
    }

    /// The context bound to the main actor. Same as SwiftData's `mainContext`.
    @MainActor public var mainContext: ModelContext {
        mainBox.context(for: self)
    }

    func location(of type: any PersistentModel.Type) throws -> (StoreHandle, Table) {
        guard let found = handleByEntity[ObjectIdentifier(type)] else {
            throw StrataError(.unknownModel, "\(type) is not in this container's schema. Add it to the ModelContainer's types.")
        }
        return found
    }

    /// The locations of the models a fetch of `type` returns: the model itself and, with
    /// `includeSubclasses`, every model of the schema that is a subclass of it (inheritance).
    func locations(of type: any PersistentModel.Type, includeSubclasses: Bool = true) throws -> [(StoreHandle, Table)] {
        let own = try location(of: type)
        guard includeSubclasses else { return [own] }
        let subclasses = handleByEntity.values.filter { _, table in
            var cls: AnyClass? = _getSuperclass(table.entity.type)
            while let c = cls {
                if ObjectIdentifier(c) == ObjectIdentifier(type) { return true }
                cls = _getSuperclass(c)
            }
            return false
        }.sorted { $0.1.entity.name < $1.1.entity.name }
        return [own] + subclasses
    }

    /// Where a model (entity) of this container's schema is kept.
    func location(of entity: Entity) -> (StoreHandle, Table)? { handleByEntity[ObjectIdentifier(entity.type)] }

    func location(ofEntityNamed name: String) -> (StoreHandle, Table)? {
        handleByEntity.values.first { $0.1.entity.name == name }
    }

    /// Deletes every object of every model in every store. Same as SwiftData's `deleteAllData()`.
    public func deleteAllData() {
        for handle in handles where handle.configuration.allowsSave {
            guard let writer = try? handle.storage.beginWrite() else { continue }
            do {
                for table in handle.tables {
                    guard let collection = table.collection else { continue }
                    var rows: [RowID] = []
                    try writer.forEachRecord(in: collection, from: nil) { row, _ in rows.append(row); return true }
                    for row in rows { try writer.delete(row, in: collection, indexKeys: try table.storedIndexKeys(row: row, reader: writer)) }
                }
                try writer.commit()
            } catch {
                writer.rollback()
            }
        }
    }

    /// Strata extra: compacts every store, reclaiming the space of superseded records.
    public func compact() throws {
        for handle in handles where handle.configuration.allowsSave {
            do { try handle.storage.compact() } catch { throw StrataError.store(error, while: "compact the store") }
        }
    }

    /// Strata extra: the engine stores behind this container (one per configuration).
    public var stores: [Store] { handles.compactMap(\.engineStore) }
}

/// The main context, created on first use on the main actor.
@MainActor
final class MainContextBox: Sendable {
    private var context: ModelContext?
    nonisolated init() {}
    func context(for container: ModelContainer) -> ModelContext {
        if let context { return context }
        let made = ModelContext(unownedContainer: container)
        made.isMainContext = true
        made.autosaveEnabled = true     // as SwiftData's main context
        context = made
        return made
    }
}
