import Foundation
import StrataEngine

// Lightweight schema changes, applied when a store is opened, without a migration plan and
// without rewriting records: an added property (with a default value), a removed property, a
// rename with `originalName:`, an added or removed index or unique constraint.
//
// Each entity keeps the list of its record layouts (property names, oldest first) in the
// stored schema; a record names the layout it was written with, and reading an older one maps
// its fields to the current properties by name, filling new properties with their defaults.

/// How to read records of older layouts of one entity as the current properties.
final class EntityLayouts: @unchecked Sendable {
    /// The layout new records are written with.
    let currentVersion: UInt16
    /// For each older layout: the field of each current property, or -1 for "use the default".
    private let maps: [UInt16: [Int]]
    /// The encoded default of each property (from the model's `init()`), for older layouts.
    private let defaults: [Int: UnsafeRawBufferPointer]

    static let identity = EntityLayouts(currentVersion: 0, maps: [:], defaults: [:])

    init(currentVersion: UInt16, maps: [UInt16: [Int]], defaults: [Int: [UInt8]]) {
        self.currentVersion = currentVersion
        self.maps = maps
        // Kept for the life of the process: a few bytes per new property.
        self.defaults = defaults.mapValues { bytes in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Swift.max(bytes.count, 1), alignment: 8)
            buffer.copyBytes(from: bytes)
            return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<bytes.count])
        }
    }

    var isIdentity: Bool { maps.isEmpty }

    /// Where property `i` is in a record of layout `version`: a field, or a default value.
    @inline(__always)
    func locate(_ i: Int, version: UInt16) throws -> (field: Int, fallback: UnsafeRawBufferPointer?) {
        if version == currentVersion { return (i, nil) }
        guard let map = maps[version], i < map.count else {
            throw decodingFailure("a record of layout \(version), which the stored schema does not list")
        }
        let field = map[i]
        if field >= 0 { return (field, nil) }
        guard let fallback = defaults[i] else { throw decodingFailure("no default for a property added after layout \(version)") }
        return (-1, fallback)
    }
}

extension StoredEntity {
    /// Every layout, oldest first (a store written before layouts were recorded has one).
    var allLayouts: [[String]] { layouts ?? [properties.map(\.name)] }
}

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

    static func plan(for entity: Entity, current: StoredEntity, old: StoredEntity?, storePath: String) throws -> Plan {
        guard let old else {
            var fresh = current
            fresh.layouts = [current.properties.map(\.name)]
            return Plan(stored: fresh, layouts: .identity, newUnique: [], newIndexes: [], changed: true)
        }
        let oldLayouts = old.allLayouts
        let oldProperties = Dictionary(old.properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // Property by property: same name, or the former name given with originalName:.
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
        let sameLayout = sourceName.map { $0 ?? "" } == oldLayouts[oldLayouts.count - 1] && sourceName.allSatisfy { $0 != nil }
            && entity.properties.map(\.name) == oldLayouts[oldLayouts.count - 1]
        // New properties need a default value, taken from the model's init().
        var defaults: [Int: [UInt8]] = [:]
        if !sameLayout {
            let sample = entity.newInstance()
            for (i, property) in entity.properties.enumerated() where sourceName[i] == nil {
                guard property.hasValue(sample) else {
                    problems.append("\(entity.name).\(property.name) is new and has no default value; give it one (= value) or migrate with a custom MigrationStage")
                    continue
                }
                var bytes: [UInt8] = []
                try property.encodeValue(of: sample, into: &bytes)
                defaults[i] = bytes
            }
            for (i, property) in entity.properties.enumerated() where sourceName[i] != nil && property is RelationshipProperty {
                defaults[i] = [0]   // an empty list of related rows
            }
        }
        if !problems.isEmpty {
            throw StrataError(.schemaMismatch, "The store at \(storePath) was written with a different schema, and the change is not a lightweight one: \(problems.joined(separator: "; ")). Open it with the models it was written with, or add a SchemaMigrationPlan.")
        }
        var stored = current
        var layouts = oldLayouts
        var maps: [UInt16: [Int]] = [:]
        let currentVersion: UInt16
        if sameLayout {
            currentVersion = UInt16(layouts.count - 1)
        } else {
            layouts.append(entity.properties.map(\.name))
            currentVersion = UInt16(layouts.count - 1)
        }
        // Older layouts: current property → field, through each property's name in that layout
        // (its current name, or its former one).
        for (version, names) in layouts.enumerated() where version != Int(currentVersion) {
            maps[UInt16(version)] = entity.properties.indices.map { i in
                let candidates = [entity.properties[i].name, sourceName[i], entity.properties[i].declaration.originalName].compactMap { $0 }
                return candidates.lazy.compactMap { names.firstIndex(of: $0) }.first ?? -1
            }
        }
        for (version, map) in maps {
            for (i, field) in map.enumerated() where field < 0 && defaults[i] == nil {
                // A property that an older layout lacks but the previous one had: its default.
                let sample = entity.newInstance()
                guard entity.properties[i].hasValue(sample) || entity.properties[i] is RelationshipProperty else {
                    throw StrataError(.schemaMismatch, "\(entity.name).\(entity.properties[i].name) is missing from records of layout \(version) and has no default value.")
                }
                var bytes: [UInt8] = []
                if entity.properties[i] is RelationshipProperty { bytes = [0] } else { try entity.properties[i].encodeValue(of: sample, into: &bytes) }
                defaults[i] = bytes
            }
        }
        stored.layouts = layouts
        let newUnique = current.unique.filter { !old.unique.contains($0) }
        let newIndexes = current.indexes.filter { !old.indexes.contains($0) }
        let changed = stored != old
        return Plan(stored: stored, layouts: maps.isEmpty ? EntityLayouts(currentVersion: currentVersion, maps: [:], defaults: [:])
                                                        : EntityLayouts(currentVersion: currentVersion, maps: maps, defaults: defaults),
                    newUnique: newUnique, newIndexes: newIndexes, changed: changed)
    }

    /// Fills a new index with the keys of every stored record. A new unique constraint that
    /// the stored values break throws (naming the values), and the transaction — so the
    /// store — is left as it was.
    static func fill(index: IndexID, group: [Int], unique: Bool, table: Table, layouts: EntityLayouts, tx: WriteTransaction) throws {
        guard let collection = table.collection else { return }
        var rows: [(RowID, [UInt8], [IndexKey])] = []
        var cursor = try tx.rows(in: collection)
        while let (row, record) = try cursor.next() {
            let (key, others) = try record.withUnsafeBytes { raw -> ([UInt8], [IndexKey]) in
                let view = try RecordView(raw, layouts: layouts)
                var key: [UInt8] = []
                for p in group { key += try table.entity.properties[p].indexKey(fromField: try view.field(p)) }
                return (key, [])
            }
            rows.append((row, key, others))
        }
        for (row, key, _) in rows {
            // Re-put the record with its index keys plus the new one (the engine keeps a row's
            // keys with the row, so it can remove them on update and delete).
            guard let record = try tx.record(row, in: collection) else { continue }
            let existing = try currentKeys(row: row, table: table, layouts: layouts, record: record, except: index)
            do {
                try tx.put(record, row: row, in: collection, indexKeys: existing + [IndexKey(index, key)])
            } catch let error as StoreError where error.code == .uniqueConstraintViolation {
                let names = group.map { table.entity.properties[$0].name }.joined(separator: ", ")
                let value = KeyComponent.decode(key)?.map(\.description).joined(separator: ", ") ?? "\(key.count) bytes"
                throw StrataError(.uniqueConstraintViolation, "The new unique constraint on \(table.entity.name).\(names) is broken by the stored data: the value \(value) is held by more than one object (rows \(error.conflict?.existingRow ?? 0) and \(row)). The store was left as it was; remove the duplicates with the old schema first.", underlying: error)
            }
        }
    }

    /// A row's index keys for the table's indexes other than `except`.
    private static func currentKeys(row: RowID, table: Table, layouts: EntityLayouts, record: [UInt8], except: IndexID) throws -> [IndexKey] {
        try record.withUnsafeBytes { raw in
            let view = try RecordView(raw, layouts: layouts)
            var keys: [IndexKey] = []
            for (group, id) in zip(table.entity.uniqueGroups, table.uniqueIndexes) where id != except {
                var key: [UInt8] = []
                for p in group { key += try table.entity.properties[p].indexKey(fromField: try view.field(p)) }
                keys.append(IndexKey(id, key))
            }
            for (group, id) in zip(table.entity.indexGroups, table.indexes) where id != except {
                var key: [UInt8] = []
                for p in group { key += try table.entity.properties[p].indexKey(fromField: try view.field(p)) }
                keys.append(IndexKey(id, key))
            }
            return keys
        }
    }
}
