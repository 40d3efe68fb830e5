import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelConfiguration: DataStoreConfiguration {
    /// Strata's engine, as a `DataStore`. Same as SwiftData, whose `ModelConfiguration.Store`
    /// is its Core Data store.
    public typealias Store = DefaultStore
}

/// Strata's engine store seen through the custom-store API: what `ModelConfiguration` makes.
///
/// A container never goes through it: a `ModelConfiguration`'s store is read and written by
/// records, the engine's fast path. It is there for code that drives a store by snapshots
/// itself (a copy from one store to another, a test): `fetch` answers with the snapshots of
/// the objects a descriptor selects, and `save` writes snapshots as records, its inserts
/// getting new rows (no upserts, delete rules or history: the snapshots are the whole change).
///
/// Same as SwiftData's `DefaultStore` in role.
public final class DefaultStore: DataStore, DataStoreBatching {
    public typealias Configuration = ModelConfiguration
    public typealias Snapshot = DefaultSnapshot

    public let configuration: ModelConfiguration
    public let schema: Schema
    public let name: String
    private let container: ModelContainer

    public var identifier: String { container.handles.first?.identifier ?? name }

    public init(_ configuration: ModelConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)? = nil) throws {
        guard let schema = configuration.schema else {
            throw StrataError(.invalidSchema, "A DefaultStore needs a configuration with a schema: ModelConfiguration(schema: Schema([...]), url: ...).")
        }
        self.configuration = configuration
        self.schema = schema
        self.name = configuration.name
        container = try ModelContainer(for: schema, migrationPlan: migrationPlan, configurations: [configuration])
    }

    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let context = ModelContext(container)
        let objects = try context.fetch(request.descriptor)
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: try objects.map(snapshot))
    }

    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try ModelContext(container).fetchCount(request.descriptor)
    }

    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try ModelContext(container).fetchIdentifiers(request.descriptor)
    }

    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        let context = ModelContext(container)
        try context.delete(model: T.self, where: request.predicate, includeSubclasses: request.includeSubclasses)
        try context.save()
    }

    public func erase() throws { container.deleteAllData() }

    /// An object's snapshot, from the record it is stored as.
    private func snapshot(_ object: some PersistentModel) throws -> DefaultSnapshot {
        guard let backing = object.backing, let handle = backing.handle else {
            throw StrataError(.unknownModel, "\(type(of: object)) is not stored in this DefaultStore.")
        }
        let record = try RecordLayout.encode(object, entity: backing.entity)
        let values = try handle.storage.read { reader in
            try record.withUnsafeBytes { raw in
                try SnapshotRecords(entity: backing.entity).values(of: raw, identifier: { handle.identifier($0, $1) },
                                                                   blob: { try reader.blob(BlobID(rawValue: $0)) })
            }
        }
        return DefaultSnapshot(persistentIdentifier: object.persistentModelID, values: values)
    }

    /// Writes the snapshots as records, in one transaction: inserts at new rows (their
    /// identifiers remapped to those rows'), updates over their rows, deletions.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        guard let handle = container.handles.first else { return DataStoreSaveChangesResult(for: identifier) }
        func table(_ id: PersistentIdentifier) throws -> Table {
            guard let table = handle.tables.first(where: { $0.entity.name == id.entityName }), table.collection != nil else {
                throw StrataError(.unknownModel, "\(id.entityName) is not in this DefaultStore's schema.")
            }
            return table
        }
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var rows: [PersistentIdentifier: RowID] = [:]
        for snapshot in request.inserted {
            let entity = try table(snapshot.persistentIdentifier).entity
            let row = handle.allocateRow(entity)
            rows[snapshot.persistentIdentifier] = row
            remapped[snapshot.persistentIdentifier] = handle.identifier(entity, row)
        }
        func row(_ target: Entity, _ id: PersistentIdentifier) throws -> RowID {
            if let row = rows[id] ?? handle.row(for: id, target) { return row }
            throw StrataError(.unknownModel, "A snapshot refers to \(id), which this DefaultStore does not hold.")
        }
        let writer = try handle.storage.beginWrite()
        do {
            for snapshot in request.deleted {
                let table = try table(snapshot.persistentIdentifier)
                guard let row = handle.row(for: snapshot.persistentIdentifier, table.entity), let collection = table.collection else { continue }
                try writer.delete(row, in: collection) { try table.indexKeys(of: RecordView($0, layouts: table.layouts)) }
            }
            for snapshot in request.inserted + request.updated {
                let table = try table(snapshot.persistentIdentifier)
                guard let collection = table.collection else { continue }
                let own = try row(table.entity, snapshot.persistentIdentifier)
                let record = try SnapshotRecords(entity: table.entity).record(of: snapshot, row: row)
                let keys = try record.withUnsafeBytes { try table.indexKeys(of: RecordView($0)) }
                let held = try record.withUnsafeBytes { bytes in
                    try writer.putUnlessHeld(bytes, row: own, in: collection, indexKeys: keys) { try table.indexKeys(of: RecordView($0, layouts: table.layouts)) }
                }
                if held != nil {
                    throw StrataError(.uniqueConstraintViolation, "A snapshot of \(table.entity.name) has a unique value another stored object has.")
                }
            }
            try writer.commit()
        } catch {
            writer.rollback()
            throw error
        }
        container.changeHub.committed()
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped)
    }
}
