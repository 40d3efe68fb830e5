import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The delete rules of every deleted object's and row's relationships: `.cascade` deletes the
// related objects or rows (and so on), `.nullify` removes the deleted one from their inverse
// side, `.deny` refuses the save while related objects remain, `.noAction` leaves them.
//
// Rules work on rows: a related row the application does not hold as a registered object is
// deleted, or has its relationship field edited, without making its object; its record is
// read (once, inside the write) only when its own rules need it. Registered objects are
// updated in memory, and the change is undone if the save fails.

/// A deleted object or row whose rules are to be applied.
struct Deletion {
    let entity: Entity
    let row: RowID
    /// The registered object, if the application holds one.
    let object: AnyObject?
    /// False for an object inserted and deleted in the same session: it has no stored row.
    let isStored: Bool
}

extension SaveOperation {
    func applyDeleteRules() throws {
        var queue: [Deletion] = []
        for b in deleted {
            queue.append(Deletion(entity: b.entity, row: b.rowID, object: b.object, isStored: !b.wasInserted))
            if !b.wasInserted { deleting[ObjectIdentifier(b.entity), default: []].insert(b.rowID) }
        }
        for table in container.handles.flatMap(\.tables) {
            let model = ObjectIdentifier(table.entity)
            guard let rows = context.batchDeletes[model] else { continue }
            // Rows of a model without rules to apply (and none of its objects deleted) are
            // taken as they are: queued, they would be gone through one by one for nothing.
            if deleting[model] == nil, !table.entity.relationships.contains(where: { $0.relationship.deleteRule != .noAction }) {
                deleting[model] = rows
                continue
            }
            for row in rows.sorted() where deleting[model, default: []].insert(row).inserted {
                queue.append(Deletion(entity: table.entity, row: row, object: nil, isStored: true))
            }
        }
        var position = 0
        while position < queue.count {
            let deletion = queue[position]
            position += 1
            for relationship in deletion.entity.relationships where relationship.relationship.deleteRule != .noAction {
                let rows = try relatedRows(of: deletion, relationship)
                if rows.isEmpty { continue }
                switch relationship.relationship.deleteRule {
                case .deny: try deny(deletion, relationship, rows)
                case .cascade: cascade(deletion, relationship, rows, into: &queue)
                case .nullify: try nullify(deletion, relationship, rows)
                case .noAction: continue
                }
            }
        }
    }

    /// The rows a deleted object's or row's relationship holds: the object's (with its unsaved
    /// changes), or the stored record's.
    private func relatedRows(of deletion: Deletion, _ relationship: RelationshipProperty) throws -> [RowID] {
        if let object = deletion.object {
            context.backingOf(object)?.loadIfPartial()
            return relationship.rows(of: object)
        }
        let (writer, table) = try writer(for: deletion.entity)
        return try writer.withRecord(deletion.row, in: table) { view in
            try RelationshipProperty.decodeRows(try view.field(relationship.index))
        } ?? []
    }

    private func isDeleting(_ entity: Entity, _ row: RowID) -> Bool { deleting[ObjectIdentifier(entity)]?.contains(row) ?? false }

    private func deny(_ deletion: Deletion, _ relationship: RelationshipProperty, _ rows: [RowID]) throws {
        let target = relationship.targetEntity
        var alive = 0
        for row in rows where !isDeleting(target, row) {
            if let backing = context.registeredBacking(target, row) {
                if backing.status != .deleted { alive += 1 }
            } else if let (writer, table) = try? writer(for: target), try writer.withRecord(row, in: table, { _ in true }) == true {
                alive += 1
            }
        }
        if alive > 0 {
            throw StrataError(.deleteDenied, "\(deletion.entity.name).\(relationship.name) has the .deny delete rule and still refers to \(alive) \(target.name) object(s); nothing was saved. Delete or detach them first.")
        }
    }

    private func cascade(_ deletion: Deletion, _ relationship: RelationshipProperty, _ rows: [RowID], into queue: inout [Deletion]) {
        let target = relationship.targetEntity
        let rulesAreDone = cascadeNeedsNoRules(deletion, relationship)
        // The target's rows being deleted, taken out while the loop adds to them.
        let key = ObjectIdentifier(target)
        var targetRows = deleting.removeValue(forKey: key) ?? []
        defer { deleting[key] = targetRows }
        let registered = context.hasRegisteredObjects(of: target)
        for row in rows where !targetRows.contains(row) {
            if registered, let backing = context.registeredBacking(target, row) {
                guard backing.status != .deleted, backing.status != .detached, let model = backing.object as? any PersistentModel else { continue }
                let object = backing.object
                let wasInserted = backing.status == .inserted
                undo.append { [unowned self] in
                    context.deleted.remove(object)
                    backing.wasInserted = false
                    if wasInserted { backing.status = .inserted; context.inserted.append(backing) } else {
                        backing.status = .persisted
                        if backing.isChanged { context.changed.append(backing) }
                    }
                }
                context.delete(model)
                deleted.append(backing)
                if !backing.wasInserted { targetRows.insert(row) }
                queue.append(Deletion(entity: target, row: row, object: object, isStored: !backing.wasInserted))
            } else {
                targetRows.insert(row)
                // Rules that have nothing to do need no record read.
                if !rulesAreDone { queue.append(Deletion(entity: target, row: row, object: nil, isStored: true)) }
            }
        }
    }

    /// True when a cascade's target rows have no rules left to apply: their model's only
    /// relationship is the to-one inverse of this one, which holds the deleted row (being
    /// deleted too), or has no rule. Their records are then not read for rules (their index
    /// keys and blobs are read when they are deleted, if their model has any).
    private func cascadeNeedsNoRules(_ deletion: Deletion, _ relationship: RelationshipProperty) -> Bool {
        let target = relationship.targetEntity
        let acting = target.relationships.filter { $0.relationship.deleteRule != .noAction }
        guard deletion.isStored, let inverse = relationship.inverse(in: deletion.entity), !inverse.isToMany else { return acting.isEmpty }
        return acting.allSatisfy { $0 === inverse }
    }

    private func nullify(_ deletion: Deletion, _ relationship: RelationshipProperty, _ rows: [RowID]) throws {
        let inverses = relationship.inverses(in: deletion.entity)
        let target = relationship.targetEntity
        for inverse in inverses {
            for row in rows where !isDeleting(target, row) {
                if let backing = context.registeredBacking(target, row) {
                    guard backing.status != .deleted else { continue }
                    recordUnlink(inverse, backing.object)
                    inverse.unlink(.row(deletion.row), from: backing.object)
                } else if deletion.isStored {
                    edits[Edit.Target(entity: ObjectIdentifier(target), row: row), default: Edit(entity: target, row: row)].remove(deletion.row, from: inverse)
                }
            }
        }
    }

    /// Remembers a relationship's references on a registered `target` before a rule or an
    /// upsert edits them.
    func recordUnlink(_ property: RelationshipProperty, _ target: AnyObject) {
        let before = property.references(of: target)
        let backing = context.backingOf(target)
        let wasChanged = backing?.isChanged ?? false
        undo.append { [unowned self] in
            property.setReferences(before, of: target)
            if let backing, !wasChanged, backing.status == .persisted {
                backing.isChanged = false
                context.changed.remove(target)
            }
        }
    }
}
