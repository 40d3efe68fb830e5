import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// Unique upserts: an insert whose unique attribute (or compound constraint) matches a stored
// object updates that object instead, as SwiftData does; of two inserts with the same value in
// one save, the later wins.
//
// For a model that takes part in relationships, the row each insert goes to is decided before
// anything is written (unique keys looked up once, inside the write), so that records referring
// to a moved insert are encoded once with the row it moves to, and the stored object's
// relationships that the insert does not keep lose it from their other side. A lookup takes
// this save's own work into account: rows it deletes give their values up, changed objects hold
// their new values, and earlier inserts their claims. Other models resolve upserts as they are
// written (`SaveOperation+Write.swift`): the store's own unique check finds the stored object.

extension SaveOperation {
    /// True when the model has relationships or is the target of one.
    func takesPartInRelationships(_ entity: Entity) -> Bool {
        if !entity.relationships.isEmpty { return true }
        return container.handles.contains { handle in
            handle.tables.contains { table in table.entity.relationships.contains { $0.targetType == entity.type } }
        }
    }

    func resolveUpserts() throws {
        var claims: [IndexID: [[UInt8]: RowID]] = [:]
        var changedKeys: [IndexID: [[UInt8]: RowID]]? = nil
        // (The last model's answer is kept: inserts come in runs of one model, and the walk over
        // every table's relationships, asked per insert, cost more than the rest of the loop.)
        var last: (entity: Entity, resolves: Bool)?
        for backing in inserted where backing.status == .inserted {
            let entity = backing.entity
            guard !entity.uniqueGroups.isEmpty else { continue }
            // (A custom store's models too: the context merges its inserts of one unique value
            // before the request, the store resolves them against what it holds.)
            let resolves = last.flatMap { $0.entity === entity ? $0.resolves : nil }
                ?? (takesPartInRelationships(entity) || location(entity)?.store.handle.custom != nil)
            last = (entity, resolves)
            guard resolves else { continue }
            if rowTakers.isEmpty {
                // Room for every insert at once: grown from empty, the maps of a 20k-object save
                // were copied a dozen times each (W1 on PostgreSQL: 3% of its samples).
                rowTakers.reserveCapacity(inserted.count)
                resolvedRows.reserveCapacity(inserted.count)
            }
            let object = backing.object
            let (writer, table) = try writer(for: entity)
            if changedKeys == nil { changedKeys = uniqueKeysOfChangedObjects() }
            var target: RowID? = nil
            var keys: [(IndexID, [UInt8])] = []
            for (group, index) in zip(entity.uniqueGroups, table.uniqueIndexes) {
                // The values' whole encoding: objects of this save are told apart by it, stored
                // rows by the key the index holds and, for a long one, by their records.
                let key = entity.exactKey(of: group, object: object)
                keys.append((index, key))
                let holder = try claims[index]?[key] ?? changedKeys?[index]?[key] ?? storedHolder(key, index, group, table, writer)
                guard let holder, holder != backing.rowID else { continue }
                if let t = target, t != holder { throw twoHolders(entity, group) }
                target = holder
            }
            let row = target ?? backing.rowID
            for (index, key) in keys { claims[index, default: Dictionary(minimumCapacity: inserted.count)][key] = row }
            try decide(object, backing, row: row, table: table, writer: writer)
        }
    }

    /// The stored row holding `key` (values encoded in full), unless this save deletes it or
    /// changes it to another value.
    private func storedHolder(_ key: [UInt8], _ index: IndexID, _ group: [Int], _ table: Table, _ writer: any StorageWriter) throws -> RowID? {
        let entity = table.entity
        guard let holder = try writer.lookup(KeyEncoding.storedForm(key), in: index) else { return nil }
        if deleting[ObjectIdentifier(entity)]?.contains(holder) == true { return nil }
        if let changed = context.registeredBacking(entity, holder), changed.isChanged {
            return entity.exactKey(of: group, object: changed.object) == key ? holder : nil
        }
        if KeyEncoding.isLongForm(key) { try confirmLongKeyHolder(holder, holds: key, group: group, table: table, reader: writer) }
        return holder
    }

    /// Checks, for an insert whose unique key `conflict` names a stored row, that the row holds
    /// the insert's values themselves when the key is long: the index holds a long key's
    /// first 2016 bytes and digest (`KeyEncoding.storedForm`), the record the values. `keys`:
    /// the insert's index keys. A short key needs nothing more (and costs nothing more).
    func confirmHolder(_ conflict: StorageConflict, keys: [IndexKey], of object: AnyObject, table: Table, reader: any StorageReader) throws {
        guard let form = keys.first(where: { $0.index == conflict.index }), KeyEncoding.isLongForm(form.key),
              let group = zip(table.entity.uniqueGroups, table.uniqueIndexes).first(where: { $0.1 == conflict.index })?.0 else { return }
        try confirmLongKeyHolder(conflict.existingRow, holds: table.entity.exactKey(of: group, object: object), group: group, table: table, reader: reader)
    }

    /// Throws unless stored row `holder`'s values of `group` encode to `key` (in full). Two
    /// different values with one long form would be a SHA-256 collision: the save is refused
    /// rather than one object taken for the other.
    func confirmLongKeyHolder(_ holder: RowID, holds key: [UInt8], group: [Int], table: Table, reader: any StorageReader) throws {
        var stored: [UInt8] = []
        let entity = table.entity
        let names = group.map { entity.properties[$0].name }.joined(separator: ", ")
        guard try reader.withRecord(holder, in: table, { try entity.exactKey(of: group, view: $0, into: &stored) }) != nil else {
            throw StrataError(.corruptRecord, "The unique index on \(entity.name).\(names) names row \(holder), which the store does not hold. Run `strata verify` on the store.")
        }
        guard stored == key else {
            throw StrataError(.uniqueConstraintViolation, "A new \(entity.name) and the stored one at row \(holder) have different \(names) values of more than 2016 bytes that share their first 2016 bytes and the SHA-256 digest their unique index keeps, so the index cannot tell them apart. Change one of the values.")
        }
    }

    /// The unique keys changed objects take with their new values, by index.
    private func uniqueKeysOfChangedObjects() -> [IndexID: [[UInt8]: RowID]] {
        var keys: [IndexID: [[UInt8]: RowID]] = [:]
        for backing in changed {
            guard let (_, table) = container.location(of: backing.entity) else { continue }
            for (group, index) in zip(backing.entity.uniqueGroups, table.uniqueIndexes) {
                keys[index, default: [:]][backing.entity.exactKey(of: group, object: backing.object)] = backing.rowID
            }
        }
        return keys
    }

    /// Records where an insert goes. Going to another row, it takes that row's place: the
    /// object registered there (an earlier insert, a stored object) is not written, and the
    /// stored object's relationships the insert does not keep lose it from their other side.
    private func decide(_ object: AnyObject, _ backing: ModelBacking, row: RowID, table: Table, writer: any StorageWriter) throws {
        guard let (store, _) = location(backing.entity) else { return }
        let taken = Edit.Target(entity: ObjectIdentifier(backing.entity), row: row)
        let earlier = rowTakers.updateValue(object, forKey: taken)
        store.decided.append((backing, row))
        resolvedRows[ObjectKey(object)] = row
        if let earlier { superseded.insert(ObjectKey(earlier)) }
        guard row != backing.rowID else { return }
        movedRows[ObjectIdentifier(backing.entity), default: [:]][backing.rowID] = row
        if earlier != nil { return }
        if let holder = context.registeredBacking(backing.entity, row) { superseded.insert(ObjectKey(holder.object)) }
        try reconcile(object, backing.entity, holder: row, table: table, writer: writer)
    }

    /// The stored object at `holder` loses the related objects the insert taking its place does
    /// not refer to, on their side (as if the relationship had been set on it).
    private func reconcile(_ object: AnyObject, _ entity: Entity, holder: RowID, table: Table, writer: any StorageWriter) throws {
        let stored = context.registeredBacking(entity, holder)
        stored?.loadIfPartial()
        for relationship in entity.relationships {
            let inverses = relationship.inverses(in: entity)
            guard !inverses.isEmpty else { continue }
            let had = try stored.map { relationship.rows(of: $0.object) }
                ?? writer.withRecord(holder, in: table) { try RelationshipProperty.decodeRows(try $0.field(relationship.index)) } ?? []
            let keep = Set(relationship.rows(of: object))
            let target = relationship.targetEntity
            for row in had where !keep.contains(row) {
                for inverse in inverses {
                    if let related = context.registeredBacking(target, row) {
                        recordUnlink(inverse, related.object)
                        inverse.unlink(.row(holder), from: related.object)
                    } else {
                        edits[Edit.Target(entity: ObjectIdentifier(target), row: row), default: Edit(entity: target, row: row)].remove(holder, from: inverse)
                    }
                }
            }
        }
    }

    func twoHolders(_ entity: Entity, _ group: [Int]) -> StrataError {
        let names = group.map { entity.properties[$0].name }.joined(separator: ", ")
        return StrataError(.uniqueConstraintViolation, "A new \(entity.name) matches two different stored objects on its unique attributes (\(names) matches another one than the first). Make the values agree or delete one of the stored objects.")
    }
}
