import Foundation
import Synchronization
import StrataEngine

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
    private let handleByEntity: [ObjectIdentifier: (StoreHandle, Table)]
    private let mainBox = MainContextBox()

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
        try self.init(for: givenSchema, configurations: configurations, fileSystem: nil)
    }

    /// A container whose stores do all their I/O through `fileSystem` (the engine's fault seam):
    /// for tests that fail writes or cut the power under a `save()`. Nil: the real disk.
    package init(for givenSchema: Schema, configurations: [ModelConfiguration], fileSystem: (any FileSystem)?) throws {
        let entities = try givenSchema.entities()
        self.schema = givenSchema
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        self.configurations = configurations
        var handles: [StoreHandle] = []
        var byEntity: [ObjectIdentifier: (StoreHandle, Table)] = [:]
        var assigned = Set<ObjectIdentifier>()
        for (position, configuration) in configurations.enumerated() {
            // A configuration with a schema keeps those models; the last one without keeps the rest.
            let mine: [Entity]
            if let subset = configuration.schema {
                mine = try subset.entities(includingRelated: false).filter { e in entities.contains { $0 === e } }
            } else {
                let laterClaims = configurations[(position + 1)...].compactMap(\.schema).flatMap(\.types).map(ObjectIdentifier.init)
                mine = entities.filter { !assigned.contains(ObjectIdentifier($0.type)) && !laterClaims.contains(ObjectIdentifier($0.type)) }
            }
            let fresh = mine.filter { !assigned.contains(ObjectIdentifier($0.type)) }
            let handle = try StoreHandle(configuration: configuration, entities: fresh, fileSystem: fileSystem)
            handles.append(handle)
            for table in handle.tables {
                assigned.insert(ObjectIdentifier(table.entity.type))
                byEntity[ObjectIdentifier(table.entity.type)] = (handle, table)
            }
        }
        self.handles = handles
        self.handleByEntity = byEntity
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

    func location(ofEntityNamed name: String) -> (StoreHandle, Table)? {
        handleByEntity.values.first { $0.1.entity.name == name }
    }

    /// Deletes every object of every model in every store. Same as SwiftData's `deleteAllData()`.
    public func deleteAllData() {
        for handle in handles where handle.configuration.allowsSave {
            try? handle.store.write { tx in
                for table in handle.tables { if let c = table.collection { try tx.deleteAll(in: c) } }
            }
        }
    }

    /// Strata extra: compacts every store, reclaiming the space of superseded records.
    public func compact() throws {
        for handle in handles where handle.configuration.allowsSave {
            do { try handle.store.compact() } catch { throw StrataError.store(error, while: "compact the store") }
        }
    }

    /// Strata extra: the engine stores behind this container (one per configuration).
    public var stores: [Store] { handles.map(\.store) }
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

/// How one entity is kept in a store: its collection and indexes.
struct Table: @unchecked Sendable {
    let entity: Entity
    /// Nil only in a read-only store that has never held this model.
    let collection: CollectionID?
    let uniqueIndexes: [IndexID]
    let indexes: [IndexID]
    /// For each property with a one-property index: the index and whether it is unique.
    let singleIndex: [Int: (id: IndexID, unique: Bool)]
    /// How to read records written with older layouts of the model (lightweight migration).
    var layouts: EntityLayouts = .identity

    func indexKeys(for object: AnyObject) -> [IndexKey] {
        var keys: [IndexKey] = []
        keys.reserveCapacity(uniqueIndexes.count + indexes.count)
        for (group, id) in zip(entity.uniqueGroups, uniqueIndexes) { keys.append(IndexKey(id, entity.key(of: group, object: object))) }
        for (group, id) in zip(entity.indexGroups, indexes) { keys.append(IndexKey(id, entity.key(of: group, object: object))) }
        return keys
    }

    /// The index keys of a stored record, computed from its fields as `indexKeys(for:)`
    /// computes them from an object: the keys the row was saved with, which the engine needs
    /// to update or delete it.
    func indexKeys(ofRecord raw: UnsafeRawBufferPointer) throws -> [IndexKey] {
        guard !uniqueIndexes.isEmpty || !indexes.isEmpty else { return [] }
        let view = try RecordView(raw, layouts: layouts)
        var keys: [IndexKey] = []
        keys.reserveCapacity(uniqueIndexes.count + indexes.count)
        for (group, id) in Array(zip(entity.uniqueGroups, uniqueIndexes)) + Array(zip(entity.indexGroups, indexes)) {
            var key: [UInt8] = []
            for p in group { key += try entity.properties[p].indexKey(fromField: try view.field(p)) }
            keys.append(IndexKey(id, key))
        }
        return keys
    }

    /// The keys row `row` was saved with, read from its stored record; [] when it has none.
    func storedIndexKeys(row: RowID, tx: ReadTransaction) throws -> [IndexKey] {
        guard let collection, !uniqueIndexes.isEmpty || !indexes.isEmpty else { return [] }
        return try tx.withRecord(row, in: collection) { try indexKeys(ofRecord: $0) } ?? []
    }
}

/// One configuration's open store.
final class StoreHandle: @unchecked Sendable {
    let configuration: ModelConfiguration
    /// The engine store, shared with other containers of this process on the same file.
    let opened: OpenStore
    var store: Store { opened.store }
    let tables: [Table]
    let identifier: String
    private let temporaryDirectory: URL?

    static let schemaKey = "strata.schema"

    init(configuration: ModelConfiguration, entities: [Entity], fileSystem: (any FileSystem)? = nil) throws {
        self.configuration = configuration
        var path = configuration.url.path
        var durability = configuration.durability
        if fileSystem != nil {
            temporaryDirectory = nil   // the file system is the caller's: no folders made on the real disk
        } else if configuration.isStoredInMemoryOnly {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-memory-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            temporaryDirectory = dir
            path = dir.appendingPathComponent("memory.store").path
            durability = .deferred
        } else {
            temporaryDirectory = nil
            // The default location's folder is made on first use (as SwiftData makes Application
            // Support); the folder of a given url must exist: a mistyped path is an error, not a
            // new empty store somewhere else.
            let folder = configuration.url.deletingLastPathComponent()
            if configuration.allowsSave && folder.standardizedFileURL.path == ModelConfiguration.defaultDirectory.standardizedFileURL.path
                && !FileManager.default.fileExists(atPath: folder.path) {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
        }
        identifier = configuration.isStoredInMemoryOnly ? configuration.name : configuration.url.path
        let options = StoreOptions(durability: durability, cacheSize: configuration.cacheSize, readOnly: !configuration.allowsSave)
        let openedPath = path
        func open() throws -> Store {
            do { return try fileSystem.map { try Store(path: openedPath, options: options, fileSystem: $0) } ?? Store(path: openedPath, options: options) } catch {
                throw StoreHandle.openingError(error, path: openedPath)
            }
        }
        let shared: Bool
        if fileSystem == nil && !configuration.isStoredInMemoryOnly {
            (opened, shared) = try OpenStores.shared.store(at: OpenStores.key(for: path), readOnly: options.readOnly, open: open)
        } else {
            (opened, shared) = (OpenStore(store: try open(), key: nil), false)
        }
        let store = opened.store
        var rows: [String: RowID] = [:]
        do {
            let prepared = try StoreHandle.prepare(store: store, entities: entities, writable: configuration.allowsSave, path: path, shared: shared)
            tables = prepared
            try store.read { tx in
                for t in prepared { if let c = t.collection { rows[t.entity.name] = try tx.nextRowID(in: c) } else { rows[t.entity.name] = 1 } }
            }
        } catch {
            throw StrataError.store(error, while: "prepare the store at \(path)")
        }
        opened.startRows(rows)
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    /// A store file that may not be written is `.readOnly`, with the object layer's way to
    /// read it; anything else is the engine's error, wrapped.
    static func openingError(_ error: any Error, path: String) -> any Error {
        guard let store = error as? StoreError, store.code == .readOnly else { return StrataError.store(error, while: "open the store at \(path)") }
        let reason = (store.underlying as? SystemError).map { " (\($0.reason))" } ?? ""
        return StrataError(.readOnly, "Strata could not open the store at \(path) for saving: its file may not be written\(reason). To read it, open it with allowsSave: false (ModelConfiguration(url:allowsSave:)); to save to it, change its permissions or mount.",
                           underlying: store)
    }

    /// A row id for a new object of `entity`, unique across every context of the container
    /// (and of other containers of this process on the same store).
    func allocateRow(_ entity: Entity) -> RowID { opened.allocateRow(entity) }

    func table(for entity: Entity) -> Table? { tables.first { $0.entity === entity } }

    /// Checks the stored schema against the models, applies lightweight changes (layouts,
    /// new and removed indexes) and creates collections and indexes, in one transaction.
    /// `shared`: another container of this process has the store open; its models must not change.
    private static func prepare(store: Store, entities: [Entity], writable: Bool, path: String, shared: Bool) throws -> [Table] {
        let stored: StoredSchema? = try store.read { tx in
            guard let bytes = try tx.metadata(schemaKey) else { return nil }
            do { return try JSONDecoder().decode(StoredSchema.self, from: Data(bytes)) } catch {
                throw StrataError(.corruptRecord, "The store's schema record at \(path) cannot be read: \(error)")
            }
        }
        var plans: [ObjectIdentifier: LightweightMigration.Plan] = [:]
        var migrating = false
        for entity in entities {
            let old = stored?.entities.first { $0.name == entity.name }
            let plan = try LightweightMigration.plan(for: entity, current: StoredEntity(entity), old: old, storePath: path)
            if old != nil && plan.changed { migrating = true }
            plans[ObjectIdentifier(entity)] = plan
        }
        var merged = stored ?? StoredSchema(entities: [])
        for entity in entities {
            guard let plan = plans[ObjectIdentifier(entity)] else { continue }
            if let i = merged.entities.firstIndex(where: { $0.name == entity.name }) { merged.entities[i] = plan.stored } else { merged.entities.append(plan.stored) }
        }
        let needsWrite = merged != stored
        func build(_ tx: ReadTransaction, create: WriteTransaction?) throws -> [Table] {
            try entities.map { entity in
                let plan = plans[ObjectIdentifier(entity)]
                var collection = tx.collection(named: entity.name)
                if collection == nil, let create { collection = try create.createCollection(named: entity.name) }
                var unique: [IndexID] = []
                var plain: [IndexID] = []
                var single: [Int: (IndexID, Bool)] = [:]
                var toFill: [(IndexID, [Int], Bool)] = []
                if let collection {
                    for group in entity.uniqueGroups {
                        let name = entity.uniqueIndexName(group)
                        let id = try create?.createIndex(named: name, on: collection, unique: true) ?? tx.index(named: name, in: collection)?.id
                        guard let id else { continue }
                        unique.append(id)
                        if group.count == 1 { single[group[0]] = (id, true) }
                        if plan?.newUnique.contains(group.map { entity.properties[$0].name }) == true && stored?.entities.contains(where: { $0.name == entity.name }) == true {
                            toFill.append((id, group, true))
                        }
                    }
                    for group in entity.indexGroups {
                        let name = entity.indexName(group)
                        let id = try create?.createIndex(named: name, on: collection, unique: false) ?? tx.index(named: name, in: collection)?.id
                        guard let id else { continue }
                        plain.append(id)
                        if group.count == 1 && single[group[0]] == nil { single[group[0]] = (id, false) }
                        if plan?.newIndexes.contains(group.map { entity.properties[$0].name }) == true && stored?.entities.contains(where: { $0.name == entity.name }) == true {
                            toFill.append((id, group, false))
                        }
                    }
                }
                var table = Table(entity: entity, collection: collection, uniqueIndexes: unique, indexes: plain, singleIndex: single)
                table.layouts = plan?.layouts ?? .identity
                if let create, let collection {
                    // Indexes the models no longer declare go (with their entries).
                    let wanted = Set(entity.uniqueGroups.map(entity.uniqueIndexName) + entity.indexGroups.map(entity.indexName))
                    for index in create.indexes(of: collection) where !wanted.contains(index.name) { try create.dropIndex(index.id) }
                    var unfilled = Set(toFill.map(\.0))
                    for (id, group, isUnique) in toFill {
                        try LightweightMigration.fill(index: id, group: group, unique: isUnique, unfilled: unfilled, table: table, layouts: table.layouts, tx: create)
                        unfilled.remove(id)
                    }
                }
                return table
            }
        }
        let missing = entities.contains { e in store.currentCollectionMissing(e.name) }
        if migrating && shared {
            throw StrataError(.schemaMismatch, "The store at \(path) is open in this process by another ModelContainer whose models differ from these. Let that container and the objects it fetched go before opening the store with changed models.")
        }
        if migrating && !writable {
            throw StrataError(.readOnly, "The store at \(path) needs a schema change to be opened with these models, and it was opened read-only (allowsSave: false). Open it writable once to apply the change.")
        }
        if writable && (needsWrite || missing) {
            return try store.write { tx in
                let tables = try build(tx, create: tx)
                try tx.setMetadata(schemaKey, Array(try JSONEncoder().encode(merged)))
                return tables
            }
        }
        return try store.read { tx in try build(tx, create: nil) }
    }
}

extension Store {
    func currentCollectionMissing(_ name: String) -> Bool {
        (try? read { $0.collection(named: name) == nil }) ?? true
    }
}
