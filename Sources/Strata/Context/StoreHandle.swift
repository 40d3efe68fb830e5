import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// One configuration's open store: its storage, and each model's table in it.
final class StoreHandle: @unchecked Sendable {
    let configuration: ModelConfiguration
    let storage: any StorageBackend
    let tables: [Table]
    private let tablePositions: TypeMap<Int>
    /// Each table's model and store as identifiers name them, shared by those identifiers.
    private let scopes: [IdentifierScope]
    /// The store's identifier in `PersistentIdentifier`s and history tokens: the UUID written
    /// in it when it was made (so it stays when the file moves), or, for a store opened
    /// read-only that has none (written before identifiers were), its path.
    let identifier: String
    /// The same (history's name for it).
    var storeIdentifier: String { identifier }
    /// Where the store is, for messages: its path (a name for an in-memory one).
    let location: String
    /// The bridge to a custom store (`DataStore`), whose identifiers are the store's; nil for
    /// Strata's engine and other record stores, whose identifiers name rows.
    let custom: DataStoreStorage?

    init(configuration: ModelConfiguration, entities: [Entity], provider: any StorageProvider) throws {
        self.configuration = configuration
        let opened = try provider.open(configuration)
        storage = opened.backend
        custom = opened.backend as? DataStoreStorage
        location = custom != nil || configuration.isStoredInMemoryOnly ? opened.location : FilePaths.path(of: configuration.url)
        let path = opened.location
        do {
            let tables = try StoreSchema.prepare(storage, entities: entities, writable: configuration.allowsSave, path: path, shared: opened.isShared)
            var first: [String: RowID] = [:]
            try storage.read { reader in
                for t in tables { first[t.entity.name] = try t.collection.map { try reader.nextRowID(in: $0) } ?? 1 }
            }
            storage.rows.start(first)
            self.tables = tables
            // (A string out of the storage's generic `read`, not the optional bytes: that made
            // the metadata of `[UInt8]?` on a fresh process's first open, W8.)
            identifier = try storage.read { reader in
                try reader.metadata(HistoryRecord.storeIdentifierMetadata).map { String(decoding: $0, as: UTF8.self) } ?? path
            }
        } catch {
            throw StrataError.store(error, while: "prepare the store at \(path)")
        }
        var positions = TypeMap<Int>()
        for (i, table) in tables.enumerated() { positions[ObjectIdentifier(table.entity)] = i }
        tablePositions = positions
        scopes = tables.map { [identifier] in IdentifierScope(entityName: $0.entity.name, storeIdentifier: identifier) }
    }

    /// The identifier of `entity`'s row in this store.
    @inline(__always)
    func identifier(_ entity: Entity, _ row: RowID) -> PersistentIdentifier {
        if let custom { return custom.identifier(entity, row) }
        return PersistentIdentifier(scope: identifierScope(for: entity), rowID: Int64(bitPattern: row))
    }

    /// The row of `entity` an identifier names in this store (nil: none).
    func row(for id: PersistentIdentifier, _ entity: Entity) -> RowID? {
        if let custom { return custom.row(for: id, entity) }
        return id.rowID > 0 && !id.scope.keyIsRow ? RowID(id.rowID) : nil
    }

    /// The scope of the identifiers of `entity`'s objects in this store.
    func identifierScope(for entity: Entity) -> IdentifierScope {
        tablePositions[ObjectIdentifier(entity)].map { scopes[$0] } ?? IdentifierScope(entityName: entity.name, storeIdentifier: identifier)
    }

    /// The engine store, for the Strata extras that speak of it (`ModelContainer.stores`).
    var engineStore: Store? { (storage as? EngineStorage)?.store }

    /// A row id for a new object of `entity`, unique across every context of the container
    /// (and of other containers of this process on the same store).
    func allocateRow(_ entity: Entity) -> RowID { storage.rows.allocate(entity.name) }

    func table(for entity: Entity) -> Table? { tablePositions[ObjectIdentifier(entity)].map { tables[$0] } }
}
