import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// Writes every insert, change and deletion as one transaction per store, durable when it
    /// returns (with the default `.full` durability). All of it or none of it is saved.
    ///
    /// Inserting an object whose unique attribute (or compound unique constraint) matches a
    /// stored object updates that object instead (an upsert); of two new objects with the same
    /// unique value in one save, the later wins. Deleting an object applies its relationships'
    /// delete rules, to registered objects and to stored rows alike (a cascade over rows never
    /// makes their objects). Same as SwiftData's `save()`.
    ///
    /// - Throws: `StrataError` `.uniqueConstraintViolation` when a changed object would take a
    ///   unique value another object holds, `.deleteDenied`, `.relationshipCount`, `.readOnly`,
    ///   `.unsetProperty`, `.storeFailure` (full disk, I/O error); the context keeps its unsaved
    ///   changes. After a full disk, free some space and call `save()` again: the store reopens
    ///   its file and goes on.
    public func save() throws {
        guard hasChanges else { return }
        NotificationCenter.default.post(name: ModelContext.willSave, object: self)
        if !storeBatchDeletes.isEmpty { try sendStoreBatchDeletes() }
        let saved = try SaveOperation(self).run()
        inserted.removeAll()
        changed.removeAll()
        deleted.removeAll()
        batchDeletes.removeAll()
        storeBatchDeletes.removeAll()
        rowCache.removeAll()
        NotificationCenter.default.post(name: ModelContext.didSave, object: self,
                                        userInfo: DidSaveInfo.make(inserted: saved.inserted, updated: saved.updated, deleted: saved.deleted))
    }

    /// Deletes every object of `model` that `predicate` selects (all without a predicate), in
    /// the store and without making objects; the deletion is saved by the next `save()`, which
    /// applies the delete rules of their relationships to the rows. Same as SwiftData's
    /// `delete(model:where:includeSubclasses:)`.
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true) throws {
        if try deleteInStore(model: model, where: predicate, includeSubclasses: includeSubclasses) { return }
        try deleteRowByRow(model: model, where: predicate, includeSubclasses: includeSubclasses)
    }

    /// `delete(model:where:)` by the rows it selects: each object of this context among them is
    /// deleted as `delete(_:)` does, the others go into the model's batch of rows.
    /// With `storedOnly`, the context's unsaved objects are left alone.
    private func deleteRowByRow<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>?, includeSubclasses: Bool, storedOnly: Bool = false) throws {
        var descriptor = FetchDescriptor<T>(predicate: predicate)
        descriptor.includePendingChanges = false
        do {
            for run in try runs(descriptor, includeSubclasses: includeSubclasses) {
                var rows: [RowID] = []
                try run.handle.storage.read { reader in
                    var stored = try StoredRows(run, excluded: [], reader: reader)
                    try stored.visit(reader) { row, _ in rows.append(row); return true }
                }
                // Unsaved objects the predicate selects go too.
                for backing in inserted.backings where !storedOnly {
                    guard let t = backing.object as? T, backing.entity === run.entity else { continue }
                    if try predicate.map({ try $0.evaluate(t) }) ?? true { delete(t) }
                }
                // Rows without objects go into one set, added to the batch once (and the
                // registry is not asked about each row when the model has no objects in it).
                let registered = hasRegisteredObjects(of: run.entity)
                var batch = RowSet()
                for row in rows {
                    if registered, let object = registeredObject(run.entity, row) as? T {
                        delete(object)
                    } else {
                        batch.insert(row)
                    }
                }
                let model = ObjectIdentifier(run.entity)
                if batchDeletes[model] == nil {
                    if !batch.isEmpty { batchDeletes[model] = batch }
                } else {
                    for row in batch { batchDeletes[model, default: []].insert(row) }
                }
            }
        } catch { throw StrataError.store(error, while: "delete \(T.self) objects") }
    }
}

/// A `delete(model:where:)` a custom store that is `DataStoreBatching` does itself at the next
/// save (`send`), unless the context reads before then: the read first turns it into a deletion
/// of the rows it selects (`deleteRowByRow`), so that no fetch or count shows them.
struct StoreBatchDelete {
    let send: (any AnyDataStore, EditingState) throws -> Void
    let deleteRowByRow: (ModelContext) throws -> Void
}

extension ModelContext {
    /// Hands `delete(model:where:)` to a custom store that deletes by predicate itself
    /// (`DataStoreBatching`), sent at the next save before its changes (unless a read comes
    /// first: `applyStoreBatchDeletes`): when the model has no
    /// subclasses to reach, no relationship rule to apply and no object in this context (the
    /// store cannot tell the context which of them it deleted). Unsaved inserts the predicate
    /// selects are deleted here. False when the rows are to be deleted one by one instead.
    func deleteInStore<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>?, includeSubclasses: Bool) throws -> Bool {
        guard let (handle, table) = try? container.location(of: T.self), let custom = handle.custom, custom.box.isBatching,
              (try? container.locations(of: T.self, includeSubclasses: includeSubclasses).count) == 1,
              table.entity.relationships.allSatisfy({ $0.relationship.deleteRule == .noAction }),
              !hasRegisteredObjects(of: table.entity) else { return false }
        for backing in inserted.backings where backing.entity === table.entity {
            if let object = backing.object as? T, try predicate.map({ try $0.evaluate(object) }) ?? true { delete(object) }
        }
        storeBatchDeletes[ObjectIdentifier(handle), default: []].append(StoreBatchDelete(
            send: { store, editingState in
                _ = try store.delete(T.self, where: predicate, includeSubclasses: includeSubclasses, editingState)
            },
            deleteRowByRow: { context in
                // The context's unsaved objects it selected were deleted above, when it was asked;
                // objects inserted since are not its to delete.
                try context.deleteRowByRow(model: T.self, where: predicate, includeSubclasses: includeSubclasses, storedOnly: true)
            }))
        return true
    }

    /// At a save, before its changes: each deletion handed to a custom store is sent, as a
    /// request of its own (a save that fails after it does not bring its objects back;
    /// Docs/CustomStores.md). One the store declines, as it does not evaluate its predicate
    /// (`DataStoreError.preferInMemoryFilter`), becomes a deletion of the
    /// rows it selects, saved with the changes. One that fails stays pending with those after it.
    func sendStoreBatchDeletes() throws {
        var declined: [(store: ObjectIdentifier, delete: StoreBatchDelete)] = []
        // After a failure: the declined ones are pending again, before the unsent ones.
        func keepDeclined(from first: Int = 0) {
            for (store, delete) in declined[first...].reversed() { storeBatchDeletes[store, default: []].insert(delete, at: 0) }
        }
        for handle in container.handles {
            let store = ObjectIdentifier(handle)
            guard let deletes = storeBatchDeletes[store], let bridge = handle.custom else { continue }
            guard handle.configuration.allowsSave else {
                keepDeclined()
                throw StrataError(.readOnly, "The store \(handle.location) was opened with allowsSave: false; it cannot save changes.")
            }
            try bridge.sendingBatchDeletes(author: author) { send in
                for (i, delete) in deletes.enumerated() {
                    do {
                        if try !send(delete) { declined.append((store, delete)) }
                    } catch {
                        storeBatchDeletes[store] = Array(deletes[i...])
                        keepDeclined()
                        throw error
                    }
                }
            }
            storeBatchDeletes[store] = nil
        }
        for (i, item) in declined.enumerated() {
            do { try item.delete.deleteRowByRow(self) } catch {
                keepDeclined(from: i)
                throw error
            }
        }
    }

    /// Before a read: the deletions handed to custom stores for the next save become
    /// deletions of the rows they select, which every read leaves out (as on the engine).
    /// One that fails (the store could not be read) stays pending with those after it, so the
    /// next save still deletes what was asked.
    func applyStoreBatchDeletes() throws {
        // Taken out first: each deletion reads (`runs`), which must not apply them again.
        let pending = storeBatchDeletes
        storeBatchDeletes.removeAll()
        var applied = Set<ObjectIdentifier>()
        for (store, deletes) in pending {
            for (i, delete) in deletes.enumerated() {
                do {
                    try delete.deleteRowByRow(self)
                } catch {
                    for (other, rest) in pending where other != store && !applied.contains(other) { storeBatchDeletes[other] = rest }
                    storeBatchDeletes[store] = Array(deletes[i...])
                    throw error
                }
            }
            applied.insert(store)
        }
    }
}

/// `didSave`'s user info: a copy of one dictionary made once, its three values set through
/// indexes found then. A dictionary literal hashed its three `AnyHashable` string keys on every
/// save, about 4,000 instructions of a one-object save's 150,000 (W2, Docs/Benchmarks.md, "Costs").
private enum DidSaveInfo {
    nonisolated(unsafe) static let template: (info: [AnyHashable: Any], slots: [Dictionary<AnyHashable, Any>.Index]) = {
        let keys = [ModelContext.NotificationKey.insertedIdentifiers, .updatedIdentifiers, .deletedIdentifiers].map { AnyHashable($0.rawValue) }
        var info: [AnyHashable: Any] = [:]
        for key in keys { info[key] = [PersistentIdentifier]() }
        return (info, keys.compactMap { info.index(forKey: $0) })
    }()

    static func make(inserted: [PersistentIdentifier], updated: [PersistentIdentifier], deleted: [PersistentIdentifier]) -> [AnyHashable: Any] {
        let template = DidSaveInfo.template
        var info = template.info
        info.values[template.slots[0]] = inserted
        info.values[template.slots[1]] = updated
        info.values[template.slots[2]] = deleted
        return info
    }
}
