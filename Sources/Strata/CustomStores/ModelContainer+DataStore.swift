import Foundation
@_spi(StorageBackend) import StrataRecords

extension ModelContainer {
    /// A container for these models in the stores of `configurations`, of any kinds: Strata's
    /// (`ModelConfiguration`) and custom ones (a `DataStoreConfiguration` whose `Store` is a
    /// `DataStore`), mixed. Each model goes to the configuration whose schema holds it; one
    /// without a schema takes the rest.
    ///
    /// ```swift
    /// let container = try ModelContainer(for: Trip.self, configurations: JSONStoreConfiguration(url: fileURL))
    /// ```
    /// Same as SwiftData's `init(for:configurations:)` taking `any DataStoreConfiguration`.
    public convenience init(for forTypes: any PersistentModel.Type..., configurations: any DataStoreConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: nil, configurations: configurations)
    }

    /// The same for a schema, the configurations listed. Same as SwiftData's
    /// `init(for:configurations:)` with a schema.
    public convenience init(for givenSchema: Schema, configurations: any DataStoreConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: nil, configurations: configurations)
    }

    /// The same, the configurations given without a label: `ModelContainer(for: schema, trips, people)`.
    /// Same as SwiftData's `init(for:_:)`.
    public convenience init(for givenSchema: Schema, _ first: any DataStoreConfiguration, _ rest: any DataStoreConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: nil, configurations: [first] + rest)
    }

    /// The same after migrating (see `init(for:migrationPlan:configurations:)` with an array).
    public convenience init(for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)?,
                            configurations: any DataStoreConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// A container for a schema in the stores of `configurations`, of any kinds. Same as
    /// SwiftData's `init(for:configurations:)` taking `[any DataStoreConfiguration]`.
    public convenience init(for givenSchema: Schema, configurations: [any DataStoreConfiguration]) throws {
        try self.init(for: givenSchema, migrationPlan: nil, configurations: configurations)
    }

    /// The same, after migrating: Strata's stores with `migrationPlan`, as
    /// `init(for:migrationPlan:configurations:)` does; a custom store gets the plan in its
    /// initializer (`DataStore.init(_:migrationPlan:)`) and migrates itself.
    /// SwiftData has this form for `ModelConfiguration`s only.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [any DataStoreConfiguration]) throws {
        let engine = EngineStorageProvider()
        var stores: [StoreSpec] = []
        for configuration in configurations {
            if let strata = configuration as? ModelConfiguration {
                if let migrationPlan { try Migrator.migrate(configuration: strata, plan: migrationPlan, storage: engine) }
                stores.append(StoreSpec(configuration: strata, provider: engine))
            } else {
                stores.append(try Self.customStore(configuration, schema: givenSchema, migrationPlan: migrationPlan))
            }
        }
        if stores.isEmpty { stores = [StoreSpec(configuration: ModelConfiguration(), provider: engine)] }
        try self.init(for: givenSchema, stores: stores, storage: engine)
        self.migrationPlan = migrationPlan
    }

    /// A custom configuration's store, made now, and the configuration that stands for it.
    private static func customStore<C: DataStoreConfiguration>(_ configuration: C, schema: Schema,
                                                                migrationPlan: (any SchemaMigrationPlan.Type)?) throws -> StoreSpec {
        var given = configuration
        let subset = given.schema
        // The store keeps its configuration's models, or (none named) the container's.
        if given.schema == nil { given.schema = schema }
        try given.validate()
        let store = try C.Store(given, migrationPlan: migrationPlan)
        let box = DataStoreBox(store)
        var standIn = ModelConfiguration(given.name, schema: subset, isStoredInMemoryOnly: true)
        // A store that records history keeps every transaction until deleteHistory deletes it.
        standIn.historyRetention = box.recordsHistory ? .unlimited : .off
        return StoreSpec(configuration: standIn, provider: DataStoreProvider(box: box, entities: []), isCustom: true)
    }
}

/// Opens a custom store's bridge (`DataStoreStorage`) for the storage seam.
struct DataStoreProvider: StorageProvider, @unchecked Sendable {
    let box: any AnyDataStore
    let entities: [Entity]

    func with(entities: [Entity]) -> DataStoreProvider { DataStoreProvider(box: box, entities: entities) }

    func open(_ configuration: ModelConfiguration) throws -> OpenedStorage {
        OpenedStorage(backend: DataStoreStorage(box, entities: entities), location: "the custom store \(box.identifier)", isShared: false)
    }

    func prepareCopy(of configuration: ModelConfiguration) throws -> (any PreparedStoreCopy)? { nil }
}
