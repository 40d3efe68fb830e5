import Foundation
import StrataEngine

extension ModelContext {
    /// Writes every insert, change and deletion as one transaction per store, durable when it
    /// returns (with the default `.full` durability). All of it or none of it is saved.
    ///
    /// Inserting an object whose unique attribute (or compound unique constraint) matches a
    /// stored object updates that object instead (an upsert); of two new objects with the same
    /// unique value in one save, the later wins. Same as SwiftData's `save()`.
    ///
    /// - Throws: `StrataError` `.uniqueConstraintViolation` when a changed object would take a
    ///   unique value another object holds, `.readOnly`, `.unsetProperty`, `.storeFailure`
    ///   (full disk, I/O error); the context keeps its unsaved changes. After a full disk, free
    ///   some space and call `save()` again: the store reopens its file and goes on.
    public func save() throws {
        guard hasChanges else { return }
        NotificationCenter.default.post(name: ModelContext.willSave, object: self)
        // What the delete rules and upserts change in memory is undone if the save fails, so
        // that a failed save leaves the context as it was.
        ruleUndo = []
        defer { ruleUndo = [] }
        do {
            try applyDeleteRules()
            try reconcileUpsertedRelationships()
            try checkRelationshipCounts()
        } catch {
            undoRuleEffects()
            throw error
        }
        rowRemap = [:]
        externalWrites = []
        defer { rowRemap = [:]; externalWrites = [] }
        var insertedIDs: [PersistentIdentifier] = []
        var updatedIDs: [PersistentIdentifier] = []
        var deletedIDs: [PersistentIdentifier] = []
        // What the store transaction decided, applied to the objects only once it committed.
        var takeovers: [(object: AnyObject, backing: ModelBacking, row: RowID)] = []

        let insertedObjects = inserted.objects
        let changedObjects = changed.objects
        let deletedObjects = deleted.objects
        for handle in container.handles {
            let mine: (AnyObject) -> (ModelBacking, Table)? = { object in
                guard let backing = self.backingOf(object), let entity = backing.entity,
                      let table = handle.table(for: entity) else { return nil }
                return (backing, table)
            }
            let ins = insertedObjects.compactMap { o in mine(o).map { (o, $0.0, $0.1) } }
            let chg = changedObjects.compactMap { o in mine(o).map { (o, $0.0, $0.1) } }
            let del = deletedObjects.compactMap { o in mine(o).map { (o, $0.0, $0.1) } }.filter { !$0.1.wasInserted }
            let batch = handle.tables.compactMap { t in batchDeletes[ObjectIdentifier(t.entity)].map { (t, $0) } }
            if ins.isEmpty && chg.isEmpty && del.isEmpty && batch.isEmpty { continue }
            guard handle.configuration.allowsSave else {
                throw StrataError(.readOnly, "The store \(handle.identifier) was opened with allowsSave: false; it cannot save changes.")
            }
            do {
                var decided: [(AnyObject, ModelBacking, RowID)] = []
                try handle.store.write { tx in
                    for (object, backing, table) in del {
                        guard let collection = table.collection else { continue }
                        try tx.delete(backing.rowID, in: collection, indexKeys: table.storedIndexKeys(row: backing.rowID, tx: tx))
                        for property in table.entity.externals {
                            if let blob = property.external(of: object)?.blob, blob != 0 { try? tx.deleteBlob(BlobID(rawValue: blob)) }
                        }
                    }
                    for (table, rows) in batch {
                        guard let collection = table.collection else { continue }
                        for row in rows.sorted() {
                            if try tx.delete(row, in: collection, indexKeys: table.storedIndexKeys(row: row, tx: tx)) {
                                deletedIDs.append(PersistentIdentifier(entityName: table.entity.name, storeIdentifier: handle.identifier, rowID: Int64(row)))
                            }
                        }
                    }
                    // Changes before inserts: an insert that upserts onto a changed object's row
                    // must win (the context registers the inserted object for that row), and a
                    // unique value a changed object gives up is free for an insert to take.
                    for (object, backing, table) in chg {
                        guard let collection = table.collection else { continue }
                        try put(object, row: backing.rowID, table: table, collection: collection, tx: tx)
                    }
                    for (object, backing, table) in ins {
                        guard let collection = table.collection else { continue }
                        let row: RowID
                        if table.entity.externals.isEmpty && !table.uniqueIndexes.isEmpty {
                            // Most inserts match no stored object: the engine's own unique check
                            // says so, without a lookup of each unique value first; a conflict
                            // it reports is the object to upsert onto. (With external values, a
                            // put that finds a conflict would already have written blobs.)
                            let record = try prepare(object, table: table, tx: tx)
                            guard let conflict = try record.bytes.withUnsafeBytes({
                                try tx.putUnlessConflicting($0, row: backing.rowID, in: collection, indexKeys: record.indexKeys)
                            }) else {
                                decided.append((object, backing, backing.rowID))
                                continue
                            }
                            row = table.uniqueIndexes.count == 1 ? conflict.existingRow : try upsertTarget(object, backing: backing, table: table, tx: tx)
                            rowRemap[ObjectIdentifier(table.entity), default: [:]][backing.rowID] = row
                            try put(record, of: object, row: row, table: table, collection: collection, tx: tx)
                            decided.append((object, backing, row))
                            continue
                        }
                        row = try upsertTarget(object, backing: backing, table: table, tx: tx)
                        let isNew = row == backing.rowID
                        if !isNew {
                            rowRemap[ObjectIdentifier(table.entity), default: [:]][backing.rowID] = row
                            // The stored record this upsert replaces loses its external values' blobs.
                            for blob in try externalBlobs(row: row, table: table, collection: collection, tx: tx) {
                                try? tx.deleteBlob(BlobID(rawValue: blob))
                            }
                        }
                        try put(object, row: row, table: table, collection: collection, tx: tx, isNew: isNew)
                        decided.append((object, backing, row))
                    }
                    // An upsert moved an insert to another row: records that refer to it are
                    // written again with the row it has now.
                    if !rowRemap.isEmpty {
                        for (object, backing, table) in chg where !table.entity.relationships.isEmpty {
                            guard let collection = table.collection else { continue }
                            try put(object, row: backing.rowID, table: table, collection: collection, tx: tx)
                        }
                        for (object, _, row) in decided {
                            guard let (_, table) = container.location(ofEntityNamed: backingOf(object)?.entity?.name ?? ""),
                                  !table.entity.relationships.isEmpty, let collection = table.collection else { continue }
                            try put(object, row: row, table: table, collection: collection, tx: tx)
                        }
                    }
                }
                takeovers += decided
            } catch {
                undoRuleEffects()
                throw StrataError.store(error, while: "save")
            }
        }
        // Committed: bring the objects' state up to date.
        for (object, property, blob) in externalWrites { property.setExternal(blob, of: object) }
        for object in deletedObjects {
            guard let backing = backingOf(object) else { continue }
            if !backing.wasInserted, let entity = backing.entity {
                deletedIDs.append(PersistentIdentifier(entityName: entity.name, storeIdentifier: backing.storeIdentifier, rowID: Int64(backing.rowID)))
            }
            unregister(backing)
            backing.status = .detached
            backing.context = nil
        }
        for (object, backing, row) in takeovers {
            if row != backing.rowID, let entity = backing.entity {
                unregister(backing)
                if let previous = registered[key(entity, row)] {
                    // The stored object this insert updated: the new object takes its place.
                    let old = previous.backing
                    registered.removeValue(forKey: key(entity, row))
                    old.status = .detached
                    old.context = nil
                    changed.remove(previous.object.takeUnretainedValue())
                }
                backing.rowID = row
                register(object, backing)
            }
            backing.status = .persisted
            backing.isChanged = false
            if let entity = backing.entity {
                insertedIDs.append(PersistentIdentifier(entityName: entity.name, storeIdentifier: backing.storeIdentifier, rowID: Int64(row)))
            }
        }
        if !rowRemap.isEmpty {
            for object in insertedObjects + changedObjects {
                guard let entity = backingOf(object)?.entity else { continue }
                for relationship in entity.relationships {
                    guard let remap = rowRemap[ObjectIdentifier(relationship.targetEntity)], let references = relationship.references(of: object) else { continue }
                    relationship.setReferences(references.map { if case .row(let r) = $0, let moved = remap[r] { .row(moved) } else { $0 } }, of: object)
                }
            }
        }
        for object in changedObjects {
            guard let backing = backingOf(object), let entity = backing.entity, backing.status == .persisted else { continue }
            backing.isChanged = false
            updatedIDs.append(PersistentIdentifier(entityName: entity.name, storeIdentifier: backing.storeIdentifier, rowID: Int64(backing.rowID)))
        }
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        batchDeletes.removeAll()
        NotificationCenter.default.post(name: ModelContext.didSave, object: self, userInfo: [
            NotificationKey.insertedIdentifiers.rawValue: insertedIDs,
            NotificationKey.updatedIdentifiers.rawValue: updatedIDs,
            NotificationKey.deletedIdentifiers.rawValue: deletedIDs,
        ])
    }

    /// The row an inserted object is saved to: its own, or that of the stored object with the
    /// same unique value (an upsert).
    private func upsertTarget(_ object: AnyObject, backing: ModelBacking, table: Table, tx: WriteTransaction) throws -> RowID {
        var target: RowID? = nil
        for (group, index) in zip(table.entity.uniqueGroups, table.uniqueIndexes) {
            let key = table.entity.key(of: group, object: object)
            guard let holder = try tx.lookup(key, in: index), holder != backing.rowID else { continue }
            if let t = target, t != holder {
                let names = group.map { table.entity.properties[$0].name }.joined(separator: ", ")
                throw StrataError(.uniqueConstraintViolation, "A new \(table.entity.name) matches two different stored objects on its unique attributes (\(names) matches another one than the first). Make the values agree or delete one of the stored objects.")
            }
            target = holder
        }
        return target ?? backing.rowID
    }

    /// The blobs a stored record's external values are kept in.
    private func externalBlobs(row: RowID, table: Table, collection: CollectionID, tx: WriteTransaction) throws -> [UInt64] {
        guard !table.entity.externals.isEmpty else { return [] }
        return try tx.withRecord(row, in: collection) { raw in
            let view = try RecordView(raw, layouts: table.layouts)
            return try table.entity.externals.compactMap { property -> UInt64? in
                // `[0x01][u64 blob id]` for a value in a blob (see Property.decodeValue).
                let field = try view.field(property.index)
                guard field.count == 9, field[0] == 1 else { return nil }
                return UInt64(littleEndian: field.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
            }
        } ?? []
    }

    /// A record encoded for a put, with its index keys.
    private struct PreparedRecord {
        let bytes: [UInt8]
        let indexKeys: [IndexKey]
    }

    /// Writes `object`'s record as `row` (`isNew`: a row that is not stored yet).
    private func put(_ object: AnyObject, row: RowID, table: Table, collection: CollectionID, tx: WriteTransaction, isNew: Bool = false) throws {
        try put(try prepare(object, table: table, tx: tx), of: object, row: row, table: table, collection: collection, tx: tx, isNew: isNew)
    }

    /// Writes the blobs of `object`'s external values set since the last save, and encodes its
    /// record (which does not depend on the row it goes to).
    private func prepare(_ object: AnyObject, table: Table, tx: WriteTransaction) throws -> PreparedRecord {
        // External values set since the last save go to new blobs (written and synced before
        // this transaction commits); the blobs they replace are deleted with it.
        for property in table.entity.externals {
            guard let (old, pending) = property.external(of: object), let bytes = pending,
                  savingExternal(object, property) == nil else { continue }
            if old != 0 { try? tx.deleteBlob(BlobID(rawValue: old)) }
            if bytes.count <= 16 {
                // nil and tiny values stay in the record.
                if old != 0 { externalWrites.append((object, property, 0)) }
                continue
            }
            let blob = try tx.putBlob(bytes)
            externalWrites.append((object, property, blob.rawValue))
        }
        return PreparedRecord(bytes: try RecordLayout.encode(object, entity: table.entity, layoutVersion: table.layouts.currentVersion),
                              indexKeys: table.indexKeys(for: object))
    }

    private func put(_ record: PreparedRecord, of object: AnyObject, row: RowID, table: Table, collection: CollectionID, tx: WriteTransaction,
                     isNew: Bool = false) throws {
        // The engine replaces a stored row's index entries given the keys it was saved with.
        let previous = isNew ? [] : try table.storedIndexKeys(row: row, tx: tx)
        do {
            try tx.put(record.bytes, row: row, in: collection, indexKeys: record.indexKeys, previousKeys: previous)
        } catch let error as StoreError where error.code == .uniqueConstraintViolation {
            let which = error.conflict.flatMap { c in zip(table.entity.uniqueGroups, table.uniqueIndexes).first { $0.1 == c.index }?.0 }
            let names = which.map { $0.map { table.entity.properties[$0].name }.joined(separator: ", ") } ?? "a unique attribute"
            let values = which.map { $0.map { "\(table.entity.properties[$0].anyValue(of: object).map { "\($0)" } ?? "nil")" }.joined(separator: ", ") } ?? ""
            throw StrataError(.uniqueConstraintViolation, "Another stored \(table.entity.name) already has \(names) = \(values); a changed object cannot take it. Change the value, or delete the other object first.", underlying: error)
        }
    }

    /// Runs `block`, then saves (SwiftData's `transaction(block:)`). If `block` throws, nothing
    /// is saved and the error is rethrown (the changes stay pending, as in SwiftData).
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Applies pending changes (inverse relationships are kept as they are set, so this only
    /// autosaves when `autosaveEnabled` is true). Same as SwiftData's `processPendingChanges()`.
    public func processPendingChanges() {
        if autosaveEnabled && hasChanges { try? save() }
    }
}

extension ModelContext {
    /// Applies the delete rules of every deleted object's relationships: `.cascade` deletes the
    /// related objects (and so on), `.nullify` removes the object from their inverse side,
    /// `.deny` refuses the save while related objects remain, `.noAction` leaves them.
    func applyDeleteRules() throws {
        var queue = deleted.objects
        var position = 0
        while position < queue.count {
            let object = queue[position]
            position += 1
            guard let backing = backingOf(object), let entity = backing.entity, !entity.relationships.isEmpty else { continue }
            for relationship in entity.relationships {
                let rows = relationship.rows(of: object)
                if rows.isEmpty { continue }
                switch relationship.relationship.deleteRule {
                case .deny:
                    let alive = rows.filter { row in
                        guard let target = relatedObject(relationship.targetEntity, row) else { return false }
                        return backingOf(target)?.status != .deleted
                    }
                    if !alive.isEmpty {
                        throw StrataError(.deleteDenied, "\(entity.name).\(relationship.name) has the .deny delete rule and still refers to \(alive.count) \(relationship.targetEntity.name) object(s); nothing was saved. Delete or detach them first.")
                    }
                case .cascade:
                    for row in rows {
                        guard let target = relatedObject(relationship.targetEntity, row),
                              let model = target as? any PersistentModel,
                              let b = backingOf(target), b.status != .deleted, b.status != .detached else { continue }
                        let wasInserted = b.status == .inserted
                        ruleUndo.append { [unowned self] in
                            self.deleted.remove(target)
                            b.wasInserted = false
                            if wasInserted { b.status = .inserted; self.inserted.append(target) } else {
                                b.status = .persisted
                                if b.isChanged { self.changed.append(target) }
                            }
                        }
                        delete(model)
                        queue.append(target)
                    }
                case .nullify:
                    guard let inverse = relationship.inverse(in: entity) else { continue }
                    for row in rows {
                        guard let target = relatedObject(relationship.targetEntity, row), backingOf(target)?.status != .deleted else { continue }
                        recordUnlink(inverse, target)
                        inverse.unlink(.row(backing.rowID), from: target)
                    }
                case .noAction:
                    continue
                }
            }
        }
    }

    /// Checks `minimumModelCount` / `maximumModelCount` of the to-many relationships of every
    /// object about to be saved.
    func checkRelationshipCounts() throws {
        for object in inserted.objects + changed.objects {
            guard let entity = backingOf(object)?.entity else { continue }
            for relationship in entity.relationships where relationship.isToMany {
                let count = relationship.rows(of: object).count
                if let minimum = relationship.relationship.minimumModelCount, minimum > 0, count < minimum {
                    throw StrataError(.relationshipCount, "\(entity.name).\(relationship.name) holds \(count) object(s); its minimumModelCount is \(minimum). Nothing was saved.")
                }
                if let maximum = relationship.relationship.maximumModelCount, maximum > 0, count > maximum {
                    throw StrataError(.relationshipCount, "\(entity.name).\(relationship.name) holds \(count) object(s); its maximumModelCount is \(maximum). Nothing was saved.")
                }
            }
        }
    }
}

extension ModelContext {
    /// The blob this save wrote for an external value of `object`, if any.
    func savingExternal(_ object: AnyObject, _ property: AnyProperty) -> UInt64? {
        externalWrites.last { $0.object === object && $0.property === property }?.blob
    }
}

extension ModelContext {
    /// An insert that will update a stored object (same unique value) takes over that object's
    /// relationships: objects the stored one referred to and the new one does not lose it from
    /// their inverse side, as if the relationship had been set on the stored object.
    func reconcileUpsertedRelationships() throws {
        let candidates = inserted.objects.compactMap { object -> (AnyObject, ModelBacking, Entity)? in
            guard let backing = backingOf(object), let entity = backing.entity,
                  !entity.relationships.isEmpty, !entity.uniqueGroups.isEmpty else { return nil }
            return (object, backing, entity)
        }
        guard !candidates.isEmpty else { return }
        for (object, backing, entity) in candidates {
            guard let (handle, table) = container.location(ofEntityNamed: entity.name) else { continue }
            let holder: RowID? = try handle.store.read { tx in
                for (group, index) in zip(entity.uniqueGroups, table.uniqueIndexes) {
                    if let row = try tx.lookup(entity.key(of: group, object: object), in: index), row != backing.rowID { return row }
                }
                return nil
            }
            guard let holder, let stored = relatedObject(entity, holder) else { continue }
            for relationship in entity.relationships {
                guard let inverse = relationship.inverse(in: entity) else { continue }
                let keep = Set(relationship.rows(of: object))
                for row in relationship.rows(of: stored) where !keep.contains(row) {
                    if let target = relatedObject(relationship.targetEntity, row) {
                        recordUnlink(inverse, target)
                        inverse.unlink(.row(holder), from: target)
                    }
                }
            }
        }
    }
}

extension ModelContext {
    /// Remembers a relationship's references on `target` before a delete rule or upsert edits them.
    func recordUnlink(_ property: RelationshipProperty, _ target: AnyObject) {
        let before = property.references(of: target)
        let backing = backingOf(target)
        let wasChanged = backing?.isChanged ?? false
        ruleUndo.append { [unowned self] in
            property.setReferences(before, of: target)
            if let backing, !wasChanged, backing.status == .persisted {
                backing.isChanged = false
                self.changed.remove(target)
            }
        }
    }

    /// Undoes, newest first, what the delete rules and upserts of a failed save changed.
    func undoRuleEffects() {
        for undo in ruleUndo.reversed() { undo() }
        ruleUndo = []
    }
}
