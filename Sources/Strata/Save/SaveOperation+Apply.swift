import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension SaveOperation {
    /// After every store committed: external values, deleted objects, inserts (and the stored
    /// objects they took the place of), and changed objects are brought up to date.
    func apply() {
        for (object, property, blob) in externalWrites {
            if let backing = context.backingOf(object) { property.setExternal(blob, of: object, backing: backing) }
        }
        for backing in deleted {
            context.unregister(backing)
            backing.detach()
        }
        // Sized once: a million inserts would otherwise grow the array by copying it, with the
        // old and new buffers alive together at the save's peak.
        saved.inserted.reserveCapacity(stores.reduce(0) { $0 + $1.decided.count })
        for store in stores {
            for (backing, row) in store.decided { applyInsert(backing.object, backing, row: row) }
            if !store.savedVersions.isEmpty { takeVersions(store.savedVersions, of: store.decided.lazy.map(\.backing), store) }
            store.decided = []
        }
        remapReferences()
        for backing in context.changed.backings {
            guard backing.status == .persisted, !superseded.contains(ObjectKey(backing.object)) else { continue }
            backing.isChanged = false
            saved.updated.append(identifier(backing))
        }
        for store in stores where !store.savedVersions.isEmpty {
            takeVersions(store.savedVersions, of: context.changed.backings.lazy.filter { $0.status == .persisted }, store)
        }
    }

    /// The versions a custom store gave the rows it saved, taken by their objects (those of
    /// other stores, and rows it gave none, keep none).
    private func takeVersions<S: Sequence<ModelBacking>>(_ versions: [CollectionID: [RowID: Int64]], of backings: S, _ store: StoreWork) {
        for backing in backings {
            guard let collection = store.handle.table(for: backing.entity)?.collection else { continue }
            backing.storeVersion = versions[collection]?[backing.rowID] ?? 0
        }
    }

    /// An insert saved at `row`: its own, or the row of the stored object it updated, whose
    /// registered object (if any) it replaces.
    private func applyInsert(_ object: AnyObject, _ backing: ModelBacking, row: RowID) {
        if row != backing.rowID {
            context.unregister(backing)
            if let previous = context.registeredBacking(backing.entity, row) {
                context.unregister(previous)
                previous.detach()
                context.changed.remove(previous.object)
            }
            backing.rowID = row
            context.register(backing)
        }
        backing.status = .persisted
        backing.isChanged = false
        saved.inserted.append(identifier(backing))
    }

    /// Relationships of the saved objects that name an insert by the row it moved from.
    private func remapReferences() {
        guard !movedRows.isEmpty else { return }
        for backing in inserted + context.changed.backings {
            let object = backing.object
            for relationship in backing.entity.relationships {
                guard let moved = movedRows[ObjectIdentifier(relationship.targetEntity)],
                      let references = relationship.references(of: object) else { continue }
                relationship.setReferences(references.map { if case .row(let r) = $0, let to = moved[r] { .row(to) } else { $0 } }, of: object)
            }
        }
    }

    private func identifier(_ backing: ModelBacking) -> PersistentIdentifier {
        backing.storedIdentifier ?? PersistentIdentifier(scope: backing.entity.temporaryScope, rowID: Int64(backing.rowID))
    }
}
