import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// Lightweight schema changes, applied when a store is opened, without a migration plan and
// without rewriting records: an added property (with a default value), a removed property, a
// rename with `originalName:`, an added or removed index or unique constraint.
//
// Each entity keeps the list of its record layouts (property names, oldest first) in the
// stored schema; a record names the layout it was written with, and reading an older one maps
// its fields to the current properties by name (or a former name: the stored schema keeps
// every name a property had), filling properties added since with the default they had when
// they were added (kept in the stored schema too, so that changing a default in code later
// does not change what old records read as).

enum LightweightMigration {
    /// What opening with `entity` does to the stored `old` description: the description to
    /// store, the layouts to read records with, and the indexes that need filling.
    struct Plan {
        var stored: StoredEntity
        var layouts: EntityLayouts
        /// Unique constraints and indexes (as property-name lists) that are new and must be filled.
        var newUnique: [[String]]
        var newIndexes: [[String]]
        var changed: Bool
    }

    static func plan(for entity: Entity, current: StoredEntity, old: StoredEntity, storePath: String) throws -> Plan {
        if let unchanged = unchangedPlan(for: entity, current: current, old: old) { return unchanged }
        return try fullPlan(for: entity, current: current, old: old, storePath: storePath)
    }

    /// The plan of the common open: the store was written with these very properties, in one
    /// layout, with nothing renamed and no default kept. It is `fullPlan`'s answer for that case
    /// (UnchangedPlanTests compares them), without its maps of names and layouts, whose
    /// first use in a process cost about 0.17M instructions of W8's open.
    static func unchangedPlan(for entity: Entity, current: StoredEntity, old: StoredEntity) -> Plan? {
        guard let layouts = old.layouts, layouts.count == 1, old.formerNames == nil, old.defaults == nil,
              layouts[0].count == entity.properties.count else { return nil }
        for (name, property) in zip(layouts[0], entity.properties) {
            guard name == property.name, property.declaration.originalName == nil else { return nil }
        }
        var stored = current
        stored.layouts = layouts
        guard stored == old else { return nil }
        return Plan(stored: stored, layouts: .identity, newUnique: [], newIndexes: [], changed: false)
    }

    static func fullPlan(for entity: Entity, current: StoredEntity, old: StoredEntity?, storePath: String) throws -> Plan {
        guard let old else {
            var fresh = current
            fresh.layouts = [current.properties.map(\.name)]
            return Plan(stored: fresh, layouts: .identity, newUnique: [], newIndexes: [], changed: true)
        }
        let oldLayouts = old.allLayouts
        guard oldLayouts.count <= Int(UInt16.max) + 1 else {
            throw StrataError(.corruptRecord, "The store's schema record at \(storePath) lists \(oldLayouts.count) record layouts of \(entity.name), more than a record can name; the store is damaged.")
        }
        let sourceName = try matchProperties(of: entity, current: current, old: old, storePath: storePath)
        var layouts = oldLayouts
        let sameLayout = sourceName.map { $0 ?? "" } == oldLayouts[oldLayouts.count - 1] && sourceName.allSatisfy { $0 != nil }
            && entity.properties.map(\.name) == oldLayouts[oldLayouts.count - 1]
        if !sameLayout {
            guard layouts.count <= Int(UInt16.max) else {
                throw StrataError(.schemaMismatch, "\(entity.name) has had \(layouts.count) record layouts, the most a store keeps; open the store with the models it was written with and copy the objects into a new store.")
            }
            layouts.append(entity.properties.map(\.name))
        }
        let currentVersion = UInt16(layouts.count - 1)
        let formerNames = self.formerNames(of: entity, sourceName: sourceName, old: old)
        // Older layouts: current property → field, through each property's name in that layout
        // (its current name, or a former one, the latest first).
        var maps: [UInt16: [Int]] = [:]
        for (version, names) in layouts.enumerated() where version != Int(currentVersion) {
            maps[UInt16(version)] = entity.properties.indices.map { i in
                let property = entity.properties[i]
                let candidates = [property.name] + (formerNames[property.name] ?? []).reversed() + [property.declaration.originalName].compactMap { $0 }
                return candidates.lazy.compactMap { names.firstIndex(of: $0) }.first ?? -1
            }
        }
        let (defaults, storedDefaults) = try self.defaults(of: entity, maps: maps, sourceName: sourceName, old: old, storePath: storePath)
        var stored = current
        stored.layouts = layouts
        stored.formerNames = formerNames.isEmpty ? nil : formerNames
        stored.defaults = storedDefaults.isEmpty ? nil : storedDefaults
        // Former names and defaults recorded for the first time in a store written before they
        // were kept change nothing in how records read: they are written when the store is
        // writable, but they are not a schema change (a read-only open does not need one).
        var compared = stored
        compared.formerNames = old.formerNames
        compared.defaults = old.defaults
        let changed = compared != old
        let newUnique = current.unique.filter { !old.unique.contains($0) }
        let newIndexes = current.indexes.filter { !old.indexes.contains($0) }
        return Plan(stored: stored, layouts: maps.isEmpty ? EntityLayouts(currentVersion: currentVersion, maps: [:], defaults: [:])
                                                        : EntityLayouts(currentVersion: currentVersion, maps: maps, defaults: defaults),
                    newUnique: newUnique, newIndexes: newIndexes, changed: changed)
    }

    /// Property by property, the stored property it continues (same name, or the former name
    /// given with originalName:), nil for a new one. Throws when a change is not lightweight: a
    /// changed type, a new property without a default value.
    private static func matchProperties(of entity: Entity, current: StoredEntity, old: StoredEntity, storePath: String) throws -> [String?] {
        let oldProperties = Dictionary(old.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        var problems: [String] = []
        var sourceName: [String?] = []
        for (i, property) in entity.properties.enumerated() {
            let candidates = [property.name] + [property.declaration.originalName].compactMap { $0 }
            let match = candidates.first { oldProperties[$0] != nil }
            if let match, let was = oldProperties[match] {
                if was.type != current.properties[i].type {
                    problems.append("\(entity.name).\(property.name) changed type from \(was.type) to \(current.properties[i].type) (a custom MigrationStage can convert it)")
                }
                sourceName.append(match)
            } else {
                sourceName.append(nil)
            }
        }
        // New properties need a default value, taken from the model's init().
        if sourceName.contains(where: { $0 == nil }) {
            let sample = entity.newInstance()
            for (i, property) in entity.properties.enumerated() where sourceName[i] == nil && !property.hasValue(sample) {
                problems.append("\(entity.name).\(property.name) is new and has no default value; give it one (= value) or migrate with a custom MigrationStage")
            }
        }
        if !problems.isEmpty {
            throw StrataError(.schemaMismatch, "The store at \(storePath) was written with a different schema, and the change is not a lightweight one: \(problems.joined(separator: "; ")). Open it with the models it was written with, or add a SchemaMigrationPlan.")
        }
        return sourceName
    }

    /// The names each property had before, accumulated across renames: the stored ones of the
    /// property it matched, and that property's name when it differs from today's.
    private static func formerNames(of entity: Entity, sourceName: [String?], old: StoredEntity) -> [String: [String]] {
        let oldLayouts = old.allLayouts
        var formerNames: [String: [String]] = [:]
        for (i, property) in entity.properties.enumerated() {
            guard let source = sourceName[i] else { continue }
            var names = old.formerNames?[source] ?? []
            if source != property.name && !names.contains(source) { names.append(source) }
            // A store written before former names were kept: the one the model still declares.
            if let original = property.declaration.originalName, !names.contains(original),
               oldLayouts.contains(where: { $0.contains(original) }) {
                names.insert(original, at: 0)
            }
            names.removeAll { $0 == property.name }
            if !names.isEmpty { formerNames[property.name] = names }
        }
        return formerNames
    }

    /// The default of each property an older layout lacks: fixed when the property was added
    /// and kept in the stored schema. A property new now takes its default from the model's
    /// init(); one the store already had keeps its stored default (under its name then), or,
    /// in a store written before defaults were kept, takes init()'s now, which is stored.
    private static func defaults(of entity: Entity, maps: [UInt16: [Int]], sourceName: [String?], old: StoredEntity,
                                 storePath: String) throws -> (byProperty: [Int: [UInt8]], stored: [String: Data]) {
        var defaults: [Int: [UInt8]] = [:]
        var storedDefaults: [String: Data] = [:]
        var sample: AnyObject?
        for (version, map) in maps.sorted(by: { $0.key < $1.key }) {
            for (i, field) in map.enumerated() where field < 0 && defaults[i] == nil {
                let property = entity.properties[i]
                var bytes: [UInt8]
                if property is RelationshipProperty {
                    bytes = [0]   // an empty list of related rows
                } else if let source = sourceName[i], let kept = old.defaults?[source] {
                    bytes = Array(kept)
                } else {
                    let instance = sample ?? entity.newInstance()
                    sample = instance
                    guard property.hasValue(instance) else {
                        throw StrataError(.schemaMismatch, "\(entity.name).\(property.name) is missing from records of layout \(version) of the store at \(storePath), which keeps no default for it, and the model gives it none. Give it a default value (= value) in the model.")
                    }
                    bytes = []
                    try property.encode(instance, into: &bytes, .plain)
                }
                defaults[i] = bytes
                storedDefaults[property.name] = Data(bytes)
            }
        }
        return (defaults, storedDefaults)
    }

    /// Fills a new index with the keys of every stored record. A new unique constraint that
    /// the stored values break throws (naming the values), and the transaction — so the
    /// store — is left as it was.
    /// `unfilled` are the table's new indexes not filled yet, this one among them: stored rows
    /// have no keys for those.
    static func fill(index: IndexID, group: [Int], unique: Bool, unfilled: Set<IndexID>, table: Table, writer: any StorageWriter) throws {
        guard let collection = table.collection else { return }
        var rows: [(RowID, [UInt8])] = []
        try writer.forEachRecord(in: collection, from: nil) { row, raw in
            rows.append((row, try table.entity.key(of: group, view: try RecordView(raw, layouts: table.layouts))))
            return true
        }
        for (row, key) in rows {
            // Re-put the record with its index keys plus the new one.
            guard let (record, existing) = try writer.withRecord(row, in: collection, { raw in
                (Array(raw), try table.indexKeys(of: try RecordView(raw, layouts: table.layouts)).filter { !unfilled.contains($0.index) })
            }) else { continue }
            let conflict = try record.withUnsafeBytes {
                try writer.putUnlessHeld($0, row: row, in: collection, indexKeys: existing + [IndexKey(index, key)], previousKeys: existing)
            }
            if let conflict {
                let names = group.map { table.entity.properties[$0].name }.joined(separator: ", ")
                let value = KeyComponent.decode(key)?.map(\.description).joined(separator: ", ") ?? "\(key.count) bytes"
                throw StrataError(.uniqueConstraintViolation, "The new unique constraint on \(table.entity.name).\(names) is broken by the stored data: the value \(value) is held by more than one object (rows \(conflict.existingRow) and \(row)). The store was left as it was; remove the duplicates with the old schema first.")
            }
        }
    }
}
