import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// Opening a store with a set of models: the stored schema is checked against them, lightweight
/// changes are applied (layouts, new and removed indexes), and collections and indexes are
/// created, in one transaction.
enum StoreSchema {
    /// The tables of `entities` in `storage`. `shared`: another container of this process has
    /// the store open; its models must not change.
    static func prepare(_ storage: any StorageBackend, entities: [Entity], writable: Bool, path: String, shared: Bool) throws -> [Table] {
        // (Each read's result in a struct of its own, not an optional or a tuple: the storage's
        // `read` is generic over its result, and made the metadata of each optional or tuple
        // type on a fresh process's first open, W8.)
        let stored = try storage.read { Read(stored: try StoredSchema.read(from: $0, path: path)) }.stored
        // Each entity's plan, in the entities' order. (A list, not a map by entity: the map's
        // setter took an optional plan, one more type for a fresh process's first open, W8.)
        var plans: [LightweightMigration.Plan] = []
        var migrating = false
        var merged = stored ?? StoredSchema(entities: [])
        for entity in entities {
            // The stored entity by its position, never as an optional: copies and destroys of a
            // `StoredEntity?` went through metadata the runtime made for it alone (W8).
            let plan: LightweightMigration.Plan
            if let stored, let i = stored.entities.firstIndex(where: { $0.name == entity.name }) {
                plan = try LightweightMigration.plan(for: entity, current: StoredEntity(entity), old: stored.entities[i], storePath: path)
                if plan.changed { migrating = true }
            } else {
                plan = try LightweightMigration.fullPlan(for: entity, current: StoredEntity(entity), old: nil, storePath: path)
            }
            plans.append(plan)
            if let i = merged.entities.firstIndex(where: { $0.name == entity.name }) { merged.entities[i] = plan.stored } else { merged.entities.append(plan.stored) }
        }
        if migrating && shared {
            throw StrataError(.schemaMismatch, "The store at \(path) is open in this process by another ModelContainer whose models differ from these. Let that container and the objects it fetched go before opening the store with changed models.")
        }
        if migrating && !writable {
            throw StrataError(.readOnly, "The store at \(path) needs a schema change to be opened with these models, and it was opened read-only (allowsSave: false). Open it writable once to apply the change.")
        }
        let read = try storage.read { reader in
            Read(missing: entities.contains { reader.collection(named: $0.name) == nil },
                 unnamed: try reader.metadata(HistoryRecord.storeIdentifierMetadata) == nil)
        }
        let missing = read.missing, unnamed = read.unnamed
        let build = Builder(entities: entities, plans: plans, stored: stored)
        guard writable && (merged != stored || missing || unnamed) else { return try storage.read { try build.tables($0, create: nil) } }
        let writer = try storage.beginWrite()
        do {
            let tables = try build.tables(writer, create: writer)
            try merged.write(to: writer)
            // The store's identifier (history tokens name it), written once, in the file.
            if try writer.metadata(HistoryRecord.storeIdentifierMetadata) == nil {
                try writer.setMetadata(HistoryRecord.storeIdentifierMetadata, Array(UUID().uuidString.utf8))
            }
            try writer.commit()
            return tables
        } catch {
            writer.rollback()
            throw error
        }
    }

    /// What `prepare` reads before it decides to write: the stored schema, whether a model's
    /// collection is missing, and whether the store is yet to be named.
    private struct Read {
        var stored: StoredSchema? = nil
        var missing = false
        var unnamed = false
    }

    /// Makes each entity's table: finds (or creates) its collection and indexes, drops indexes
    /// the models no longer declare, and fills new ones.
    private struct Builder {
        let entities: [Entity]
        /// `entities[i]`'s plan at `i`.
        let plans: [LightweightMigration.Plan]
        let stored: StoredSchema?

        func tables(_ reader: any StorageReader, create: (any StorageWriter)?) throws -> [Table] {
            var tables: [Table] = []
            tables.reserveCapacity(entities.count)
            for i in entities.indices { tables.append(try table(of: entities[i], plan: plans[i], reader, create: create)) }
            return tables
        }

        private func table(of entity: Entity, plan: LightweightMigration.Plan, _ reader: any StorageReader, create: (any StorageWriter)?) throws -> Table {
            var collection = reader.collection(named: entity.name)
            if collection == nil, let create { collection = try create.createCollection(named: entity.name) }
            guard let collection else {
                return Table(entity: entity, collection: nil, uniqueIndexes: [], indexes: [], singleIndex: SingleIndexes(), layouts: plan.layouts)
            }
            let wasStored = stored?.entities.contains { $0.name == entity.name } == true
            var unique: [IndexID] = [], plain: [IndexID] = []
            var single = SingleIndexes()
            var toFill: [(IndexID, [Int], Bool)] = []
            // The unique groups, then the others. (Two calls, not a loop over a list of the two:
            // that list's element type was one more metadata for a fresh process's open, W8.)
            func add(_ groups: [[Int]], unique isUnique: Bool) throws {
                for group in groups {
                    let name = isUnique ? entity.uniqueIndexName(group) : entity.indexName(group)
                    guard let id = try create?.createIndex(named: name, on: collection, unique: isUnique) ?? reader.indexID(named: name, in: collection) else { continue }
                    if isUnique { unique.append(id) } else { plain.append(id) }
                    if group.count == 1 && single[group[0]] == nil { single[group[0]] = (id, isUnique) }
                    let names = group.map { entity.properties[$0].name }
                    if wasStored && (isUnique ? plan.newUnique : plan.newIndexes).contains(names) { toFill.append((id, group, isUnique)) }
                }
            }
            try add(entity.uniqueGroups, unique: true)
            try add(entity.indexGroups, unique: false)
            let table = Table(entity: entity, collection: collection, uniqueIndexes: unique, indexes: plain, singleIndex: single,
                              layouts: plan.layouts)
            if let create { try update(table, collection, filling: toFill, create) }
            return table
        }

        private func update(_ table: Table, _ collection: CollectionID, filling toFill: [(IndexID, [Int], Bool)], _ writer: any StorageWriter) throws {
            let entity = table.entity
            // Indexes the models no longer declare go (with their entries).
            let wanted = Set(entity.uniqueGroups.map(entity.uniqueIndexName) + entity.indexGroups.map(entity.indexName))
            for index in writer.indexNames(of: collection) where !wanted.contains(index.name) { try writer.dropIndex(index.id) }
            var unfilled = Set(toFill.map(\.0))
            for (id, group, isUnique) in toFill {
                try LightweightMigration.fill(index: id, group: group, unique: isUnique, unfilled: unfilled, table: table, writer: writer)
                unfilled.remove(id)
            }
        }
    }
}
