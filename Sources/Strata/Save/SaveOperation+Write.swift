import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension SaveOperation {
    /// Writes the blobs of external values set since the last save (written and synced before
    /// the transaction commits); the blobs they replace are deleted with it. Tiny and nil
    /// values stay in the record, and so does every value saved to a custom store: its
    /// snapshots carry them inline, and the bridge keeps records within a budget, where blobs
    /// kept by id would stay for the process's life (Docs/CustomStores.md).
    func writeBlobs() throws {
        try context.inserted.forEachBacking { try writeBlobs(of: $0) }
        for backing in changed { try writeBlobs(of: backing) }
    }

    private func writeBlobs(of backing: ModelBacking) throws {
        guard !backing.entity.externals.isEmpty else { return }
        let object = backing.object
        let (writer, _, store) = try storeWriter(for: backing.entity)
        let inline = store.handle.custom != nil
        for property in backing.entity.externals {
            let (old, pending) = property.external(of: object)
            guard let bytes = pending else { continue }
            if old != 0 { try? writer.deleteBlob(BlobID(rawValue: old)) }
            if bytes.count <= 16 || inline {
                if old != 0 { externalWrites.append((object, property, 0)) }
                continue
            }
            let blob = try writer.putBlob(bytes).rawValue
            blobs[ObjectIdentifier(object), default: [:]][property.index] = blob
            externalWrites.append((object, property, blob))
        }
    }

    /// The write phase: deletions first (they free unique values), then edits of stored rows,
    /// changes (a unique value a changed object gives up is free for an insert to take), and
    /// inserts.
    func write() throws {
        for store in stores {
            let count = stores.count == 1 ? inserted.count : inserted.reduce(0) { $0 + (store.handle.table(for: $1.entity) == nil ? 0 : 1) }
            store.decided.reserveCapacity(count)
        }
        try loadCustomStoreRecords()
        try writeDeletions()
        try applyEdits()
        for backing in changed { try writeChange(backing) }
        if !vanished.isEmpty { throw conflict(vanished) }
        for backing in inserted where backing.status == .inserted && !superseded.contains(ObjectKey(backing.object)) {
            try writeInsert(backing.object, backing)
        }
    }

    /// The stored records a custom store's bridge let go (`BridgeState.forgetOldRecords`) of
    /// the rows this save changes or deletes, read again from the store first: one fetch a
    /// model, where each row's write would have fetched its own (a server round trip a row).
    private func loadCustomStoreRecords() throws {
        guard container.handles.contains(where: { $0.custom != nil }), !changed.isEmpty || !deleting.isEmpty else { return }
        var rows: [ObjectIdentifier: (entity: Entity, bridge: DataStoreStorage?, rows: [RowID])] = [:]
        func add(_ entity: Entity, _ row: RowID) {
            let key = ObjectIdentifier(entity)
            if rows[key] == nil { rows[key] = (entity, location(entity)?.store.handle.custom, []) }
            if rows[key]?.bridge != nil { rows[key]?.rows.append(row) }
        }
        for backing in changed { add(backing.entity, backing.rowID) }
        if !deleting.isEmpty {
            let entities = modelEntities()
            for (model, deleted) in deleting {
                guard let entity = entities[model] else { continue }
                for row in deleted { add(entity, row) }
            }
        }
        for (_, run) in rows { try run.bridge?.load(run.rows, run.entity) }
    }

    /// The container's models, by type (`deleting`'s keys).
    private func modelEntities() -> [ObjectIdentifier: Entity] {
        Dictionary(container.handles.flatMap(\.tables).map { (ObjectIdentifier($0.entity), $0.entity) }, uniquingKeysWith: { a, _ in a })
    }

    /// The save changes or deletes objects whose rows another context or process deleted.
    private func conflict(_ objects: [PersistentIdentifier]) -> StrataError {
        let shown = objects.prefix(10).map { "\($0.entityName) \($0.rowID)" }.joined(separator: ", ")
        let more = objects.count > 10 ? " and \(objects.count - 10) more" : ""
        return StrataError(.saveConflict, "The save changes or deletes \(objects.count) object(s) that another context or process deleted after this context read them (\(shown)\(more)). Nothing was saved, and the context keeps its changes: call rollback() or fetch them again, then save.", objects: objects)
    }

    /// Deletes every row being deleted, with the index keys and blobs its record has.
    private func writeDeletions() throws {
        // (Most saves delete nothing: no map of the models made for them.)
        guard !deleting.isEmpty else { return }
        let entities = modelEntities()
        saved.deleted.reserveCapacity(deleting.values.reduce(0) { $0 + $1.count })
        for (model, rows) in deleting {
            guard let entity = entities[model] else { continue }
            let (writer, table) = try writer(for: entity)
            guard let collection = table.collection else { continue }
            let handle = location(entity)?.store.handle
            let scope = handle?.identifierScope(for: entity) ?? entity.temporaryScope
            let custom = handle?.custom
            // The versions a custom store's objects were read at go with their deletions.
            if custom != nil, let bridge = writer as? BridgeWriter {
                for backing in deleted where backing.entity === entity && backing.storeVersion != 0 {
                    bridge.expectVersion(backing.storeVersion, row: backing.rowID, in: collection)
                }
            }
            let history = location(entity)?.store.history
            history?.reserveRuns(rows.count)
            let preserved = history == nil ? [] : entity.preservedOnDeletion
            // What the record holds is read where the row is removed, in one search of its tree.
            let reads = table.hasIndexes || !entity.externals.isEmpty || !preserved.isEmpty
            // The keys of row after row, in the same arrays (the engine lets go of them first).
            var keys: [IndexKey] = []
            for row in rows.sorted() {
                var blobs: [UInt64] = []
                var tombstone: [(name: String, bytes: [UInt8])] = []
                let found = try writer.delete(row, in: collection) { record in
                    guard reads else { return [] }
                    let view = try RecordView(record, layouts: table.layouts)
                    try table.indexKeys(of: view, into: &keys)
                    if !entity.externals.isEmpty { blobs = try StoredRow.blobs(view, table: table) }
                    if !preserved.isEmpty { tombstone = try HistoryRecorder.tombstone(preserved, view: view) }
                    return keys
                }
                guard found else {
                    // Deleting an object whose row is gone is a conflict; a row a rule reached is not.
                    if deleted.prefix(requestedDeletions).contains(where: { $0.entity === entity && $0.rowID == row }) {
                        vanished.append(custom?.identifier(entity, row) ?? PersistentIdentifier(scope: scope, rowID: Int64(row)))
                    }
                    continue
                }
                history?.delete(entity, row, tombstone: tombstone)
                for blob in blobs { try? writer.deleteBlob(BlobID(rawValue: blob)) }
                saved.deleted.append(custom?.identifier(entity, row) ?? PersistentIdentifier(scope: scope, rowID: Int64(row)))
            }
        }
    }

    /// Writes a changed object over its stored row, found once for the keys it was stored
    /// with. A row that is gone (deleted elsewhere) is not written back: it is a conflict.
    private func writeChange(_ backing: ModelBacking) throws {
        let object = backing.object
        let (writer, table, store) = try storeWriter(for: backing.entity)
        guard let collection = table.collection else { return }
        if backing.unloaded != nil { _ = backing.loadUnloaded() }
        if backing.storeVersion != 0, let bridge = writer as? BridgeWriter {
            bridge.expectVersion(backing.storeVersion, row: backing.rowID, in: collection)
        }
        let record = try encode(object, table: table)
        var stored = false
        let held = try record.withUnsafeBytes { bytes in
            try writer.putUnlessHeld(bytes, row: backing.rowID, in: collection, indexKeys: indexKeys(of: object, table, store)) { old in
                stored = true
                return try indexKeys(ofStored: old, table, store)
            }
        }
        guard stored else {
            return vanished.append(store.handle.identifier(backing.entity, backing.rowID))
        }
        if let held { throw uniqueViolation(held, table: table, object: object) }
        store.history?.update(backing.entity, backing.rowID, changed: backing.changedProperties)
    }

    /// An object's index keys, for the engine's writer. A custom store's (the bridge's) keeps no
    /// index and is given none, old or new: each object's keys were made and dropped (1% of a
    /// 20k-object upsert's CPU on PostgreSQL, W6).
    private func indexKeys(of object: AnyObject, _ table: Table, _ store: StoreWork) -> [IndexKey] {
        guard store.handle.custom == nil else { return [] }
        // Made in the arrays of the last object's keys, which its write has let go of.
        table.indexKeys(for: object, into: &keyScratch)
        return keyScratch
    }

    /// The index keys of the record an update replaces (`old`), likewise none for a custom store.
    private func indexKeys(ofStored old: UnsafeRawBufferPointer, _ table: Table, _ store: StoreWork) throws -> [IndexKey] {
        table.hasIndexes && store.handle.custom == nil ? try table.indexKeys(of: RecordView(old, layouts: table.layouts)) : []
    }

    /// Writes an insert at the row prepare decided, or (a model without relationships) at its
    /// own row unless the store's unique check finds a stored object to update instead.
    private func writeInsert(_ object: AnyObject, _ backing: ModelBacking) throws {
        let (writer, table, store) = try storeWriter(for: backing.entity)
        guard let collection = table.collection else { return }
        if let decided = resolvedRows[ObjectKey(object)] {
            guard decided != backing.rowID else {
                store.history?.insert(backing.entity, decided)
                return try put(try encode(object, table: table), of: object, row: decided, keys: indexKeys(of: object, table, store),
                               previous: [], table: table, writer: writer)
            }
            return try replace(decided, with: try encode(object, table: table), of: object, keys: indexKeys(of: object, table, store),
                               table: table, writer: writer, store: store)
        }
        let record = try encode(object, table: table)
        let keys = indexKeys(of: object, table, store)
        guard let conflict = try record.withUnsafeBytes({
            try writer.putUnlessHeld($0, row: backing.rowID, in: collection, indexKeys: keys, previousKeys: [])
        }) else {
            store.history?.insert(backing.entity, backing.rowID)
            return store.decided.append((backing, backing.rowID))
        }
        let row = conflict.existingRow
        try confirmHolder(conflict, keys: keys, of: object, table: table, reader: writer)
        if table.uniqueIndexes.count > 1 {
            for (group, index) in zip(backing.entity.uniqueGroups, table.uniqueIndexes) {
                guard let holder = try writer.lookup(backing.entity.key(of: group, object: object), in: index), holder != backing.rowID else { continue }
                if holder != row { throw twoHolders(backing.entity, group) }
            }
        }
        movedRows[ObjectIdentifier(backing.entity), default: [:]][backing.rowID] = row
        try replace(row, with: record, of: object, keys: keys, table: table, writer: writer, store: store)
        store.decided.append((backing, row))
    }

    /// Writes an upsert's `record` over the stored row `row`. The stored record is read where
    /// it is replaced (one search of the row tree): the keys it was stored with, its blobs
    /// (deleted with it) and, with history on, the attributes `record` changes.
    private func replace(_ row: RowID, with record: [UInt8], of object: AnyObject, keys: [IndexKey], table: Table,
                         writer: any StorageWriter, store: StoreWork) throws {
        guard let collection = table.collection else { return }
        let entity = table.entity
        let history = store.history
        let reads = table.hasIndexes || !entity.externals.isEmpty || history != nil
        var stored = StoredRow.none
        var changed: PropertyBits?
        var existed = false
        let conflict = try record.withUnsafeBytes { bytes in
            let new = reads ? try RecordView(bytes) : nil
            return try writer.putUnlessHeld(bytes, row: row, in: collection, indexKeys: keys) { old in
                existed = true
                guard let new else { return [] }
                let view = try RecordView(old, layouts: table.layouts)
                stored = try StoredRow(view, table: table, replacedBy: new, recordKeys: keys)
                if history != nil { changed = try Self.changedAttributes(of: entity, from: view, to: new) }
                return stored.keys
            }
        }
        if let conflict { throw uniqueViolation(conflict, table: table, object: object) }
        if let changed { history?.update(entity, row, changed: changed) }
        // The row of an earlier insert of this save that this one took the place of (and that
        // was not written): this insert is the object's insert.
        if !existed { history?.insert(entity, row) }
        for blob in stored.blobs { try? writer.deleteBlob(BlobID(rawValue: blob)) }
    }

    /// The attributes whose stored bytes differ between two records, by property index.
    private static func changedAttributes(of entity: Entity, from old: RecordView, to new: RecordView) throws -> PropertyBits {
        var changed = PropertyBits()
        for index in entity.inlineFields where !sameBytes(try old.field(index), try new.field(index)) { changed.insert(index) }
        return changed
    }

    private func encode(_ object: AnyObject, table: Table) throws -> [UInt8] {
        // Made in the last object's record, which its write has let go of (the engine copies it).
        try RecordLayout.encode(object, entity: table.entity, layoutVersion: table.layouts.currentVersion,
                                RecordEncoding(movedRows: movedRows, blobs: blobs[ObjectIdentifier(object)] ?? [:]), into: &recordScratch)
        return recordScratch
    }

    private func put(_ record: [UInt8], of object: AnyObject, row: RowID, keys: [IndexKey], previous: [IndexKey], table: Table, writer: any StorageWriter) throws {
        guard let collection = table.collection else { return }
        guard let conflict = try record.withUnsafeBytes({ try writer.putUnlessHeld($0, row: row, in: collection, indexKeys: keys, previousKeys: previous) }) else { return }
        throw uniqueViolation(conflict, table: table, object: object)
    }

    /// A changed object or an upsert would take a unique value another stored row holds.
    private func uniqueViolation(_ conflict: StorageConflict, table: Table, object: AnyObject) -> StrataError {
        let entity = table.entity
        let which = zip(entity.uniqueGroups, table.uniqueIndexes).first { $0.1 == conflict.index }?.0
        let names = which.map { $0.map { entity.properties[$0].name }.joined(separator: ", ") } ?? "a unique attribute"
        // (A long value, such as a unique URL of 100,000 bytes, is shown by its start.)
        func shown(_ value: Any?) -> String {
            guard let value else { return "nil" }
            let text = "\(value)"
            return text.count <= 200 ? text : "\(text.prefix(100))… (\(text.count) characters)"
        }
        let values = which.map { $0.map { shown(entity.properties[$0].value(of: object)) }.joined(separator: ", ") } ?? ""
        return StrataError(.uniqueConstraintViolation, "Another stored \(entity.name) (row \(conflict.existingRow)) already has \(names) = \(values); a changed object cannot take it. Change the value, or delete the other object first.")
    }
}
