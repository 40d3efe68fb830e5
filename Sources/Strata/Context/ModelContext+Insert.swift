import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// Inserts a new object; it is saved by the next `save()`. Inserting an object that is
    /// already registered here does nothing. Same as SwiftData's `insert(_:)`; with a unique
    /// attribute, the save updates a stored object with the same value instead (an upsert).
    public func insert<T: PersistentModel>(_ model: T) {
        guard let entity = EntityRegistry.shared.entity(forClassOf: model) ?? (try? EntityRegistry.shared.discover(type(of: model))) else {
            preconditionFailure("\(T.self) cannot be discovered as a model.")
        }
        let existing = entity.backing(of: model)
        if let existing, existing.status != .detached, existing.context != nil {
            precondition(existing.context === self, "\(T.self) is registered in another ModelContext; insert it in one context only.")
            if existing.status == .deleted {
                // Inserting a deleted object again undoes the deletion.
                deleted.remove(model)
                existing.status = existing.wasInserted ? .inserted : .persisted
                existing.wasInserted = false
                if existing.status == .inserted { inserted.append(existing) } else if existing.isChanged { changed.append(existing) }
            }
            return
        }
        do {
            // The object's own class decides its model (a subclass instance typed as its base).
            let (handle, table) = try container.location(of: type(of: model))
            let backing = existing ?? ModelBacking(object: model, entity: table.entity)
            if existing == nil { table.entity.attach(backing, to: model) }
            backing.register(in: self, row: handle.allocateRow(table.entity), handle: handle, status: .inserted)
            register(backing)
            inserted.append(backing)
            if !table.entity.relationships.isEmpty { linkRelationships(of: model, backing: backing) }
            if autosaveEnabled { autosaveIfNeeded() }
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Marks an object for deletion by the next `save()`. Same as SwiftData's `delete(_:)`.
    public func delete<T: PersistentModel>(_ model: T) {
        guard let backing = model.backing, backing.context === self else { return }
        switch backing.status {
        case .inserted:
            inserted.remove(model)
            backing.wasInserted = true
            backing.status = .deleted
            deleted.append(backing)
        case .persisted:
            changed.remove(model)
            backing.status = .deleted
            deleted.append(backing)
        case .deleted, .detached:
            return
        }
        if autosaveEnabled { autosaveIfNeeded() }
    }

    /// Makes sure a related object is in this context (inserting it if it is new) and returns its backing.
    @discardableResult
    func insertRelated(_ object: AnyObject, entity: Entity) -> ModelBacking? {
        if let b = entity.backing(of: object), b.context === self, b.status != .detached { return b }
        guard let model = object as? any PersistentModel else { return nil }
        insert(model)
        return entity.backing(of: object)
    }

    /// After an object is registered: inserts the new objects its relationships hold, names
    /// them by row, and makes the inverse sides name this object by row too.
    func linkRelationships(of object: AnyObject, backing: ModelBacking) {
        let entity = backing.entity
        for relationship in entity.relationships {
            guard let references = relationship.references(of: object) else { continue }
            var rows: [RelatedReference] = []
            let inverses = relationship.inverses(in: entity)
            for reference in references {
                switch reference {
                case .row(let r):
                    rows.append(.row(r))
                case .object(let o):
                    guard let b = insertRelated(o, entity: relationship.targetEntity) else { continue }
                    rows.append(.row(b.rowID))
                    // The other side names this object already (by identity, set before the
                    // insert), in one of its lists; or the first declared takes it.
                    let ownerKey = RelationshipProperty.ReferenceKey.row(backing.rowID)
                    if !inverses.isEmpty, !inverses.contains(where: { $0.isLinked(o, to: object, ownerKey: ownerKey) }) {
                        inverses[0].link(object, ownerKey: ownerKey, into: o, back: relationship, context: self)
                    }
                }
            }
            relationship.setReferences(rows, of: object)
        }
    }
}
