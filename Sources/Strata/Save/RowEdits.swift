import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// An edit of a stored row that no registered object stands for: rows removed from its
/// relationship fields (a `.nullify` rule, or an upsert taking over a stored object's place).
/// Applied once per row, by rewriting its record's fields without making its object.
struct Edit {
    struct Target: Hashable {
        let entity: ObjectIdentifier
        let row: RowID
    }

    let entity: Entity
    let row: RowID
    /// For each relationship (by property index), the rows to remove from it.
    private(set) var removals: [Int: Set<RowID>] = [:]

    init(entity: Entity, row: RowID) {
        self.entity = entity
        self.row = row
    }

    mutating func remove(_ related: RowID, from relationship: RelationshipProperty) {
        removals[relationship.index, default: []].insert(related)
    }

    /// Rewrites the row's record with the rows removed (in the current layout; its index keys
    /// do not change, since relationships are not indexed). A to-many left with fewer objects
    /// than its `minimumModelCount` refuses the save.
    func apply(_ writer: any StorageWriter, _ table: Table) throws {
        guard let collection = table.collection else { return }
        let rewritten: (record: [UInt8], keys: [IndexKey])? = try writer.withRecord(row, in: table) { view in
            var fields: [[UInt8]] = []
            fields.reserveCapacity(entity.properties.count)
            for property in entity.properties {
                guard let removed = removals[property.index], let relationship = property as? RelationshipProperty else {
                    fields.append(Array(try view.field(property.index)))
                    continue
                }
                let rows = try RelationshipProperty.decodeRows(try view.field(property.index)).filter { !removed.contains($0) }
                try relationship.checkCount(rows.count, of: entity)
                var field: [UInt8] = []
                RelationshipProperty.encodeRows(rows, into: &field)
                fields.append(field)
            }
            return (RecordLayout.assemble(fields, version: table.layouts.currentVersion), try table.indexKeys(of: view))
        }
        guard let rewritten else { return }
        try rewritten.record.withUnsafeBytes {
            try writer.put($0, row: row, in: collection, indexKeys: rewritten.keys, previousKeys: rewritten.keys)
        }
    }
}

extension SaveOperation {
    /// Applies every edit of stored rows (those deleted meanwhile are skipped).
    func applyEdits() throws {
        for edit in edits.values.sorted(by: { ($0.entity.name, $0.row) < ($1.entity.name, $1.row) }) {
            if deleting[ObjectIdentifier(edit.entity)]?.contains(edit.row) == true { continue }
            let (writer, table) = try writer(for: edit.entity)
            try edit.apply(writer, table)
            var changed = PropertyBits()
            for index in edit.removals.keys { changed.insert(index) }
            location(edit.entity)?.store.history?.update(edit.entity, edit.row, changed: changed)
        }
    }
}
