import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// Keeping both sides of a relationship in step in memory, as SwiftData does: setting one side
// updates the other at once, and the observers of both sides are told.

extension RelationshipProperty {
    /// How a reference names an object: its row once registered, else its identity.
    enum ReferenceKey: Hashable {
        case row(RowID)
        case object(ObjectIdentifier)

        /// The reference to a row this key names, if it names one.
        var rowReference: RelatedReference? {
            if case .row(let r) = self { return .row(r) }
            return nil
        }
    }

    static func key(of object: AnyObject, entity: Entity) -> ReferenceKey {
        if let b = entity.backing(of: object), b.status != .detached, b.context != nil { return .row(b.rowID) }
        return .object(ObjectIdentifier(object))
    }

    func key(of reference: RelatedReference) -> ReferenceKey {
        switch reference {
        case .row(let r): return .row(r)
        case .object(let o): return RelationshipProperty.key(of: o, entity: targetEntity)
        }
    }

    func object(of reference: RelatedReference, context: ModelContext?) -> AnyObject? {
        switch reference {
        case .object(let o): return o
        case .row(let r): return context?.relatedObject(targetEntity, r)
        }
    }

    /// Sets this relationship of `owner` to `objects` and keeps the inverse side in step, for
    /// registered and new objects alike. An owner that is new but now refers to an object of a
    /// context is inserted into that context (and its new related objects with it).
    func assign(_ objects: [AnyObject], to owner: AnyObject, backing ownerBacking: ModelBacking) {
        ownerBacking.loadIfPartial()
        let ownerEntity = ownerBacking.entity
        if ownerBacking.status == .detached || ownerBacking.context == nil,
           let context = objects.lazy.compactMap({ self.targetEntity.backing(of: $0) }).first(where: { $0.status != .detached })?.context,
           let model = owner as? any PersistentModel {
            context.insert(model)
        }
        let context = ownerBacking.status == .detached ? nil : ownerBacking.context
        let old = references(of: owner) ?? []
        var new: [RelatedReference] = []
        new.reserveCapacity(objects.count)
        // A to-many holds an object once, where it was first put (as SwiftData's does): setting
        // the inverse to-one may have put it there already before the list is assigned with it.
        var newKeys = Set<ReferenceKey>(minimumCapacity: objects.count)
        for object in objects {
            let reference: RelatedReference
            if let context, let b = context.insertRelated(object, entity: targetEntity) {
                reference = .row(b.rowID)
            } else {
                reference = .object(object)
            }
            if newKeys.insert(key(of: reference)).inserted { new.append(reference) }
        }
        setReferences(new, of: owner)
        ownerBacking.relationshipDidChange(index)
        let inverses = inverses(in: ownerEntity)
        guard !inverses.isEmpty else { return }
        let ownerKey = RelationshipProperty.key(of: owner, entity: ownerEntity)
        let oldKeys = Set(old.map(key(of:)))
        for reference in old where !newKeys.contains(key(of: reference)) {
            guard let target = object(of: reference, context: context) else { continue }
            for inverse in inverses { inverse.unlink(ownerKey, from: target) }
        }
        for reference in new where !oldKeys.contains(key(of: reference)) {
            guard let target = object(of: reference, context: context) else { continue }
            // Of several inverse lists (a to-one that two to-manys name as their inverse), one
            // that holds the owner already keeps it; else the first declared takes it.
            if inverses.count > 1, inverses.contains(where: { $0.isLinked(target, to: owner, ownerKey: ownerKey) }) { continue }
            inverses[0].link(owner, ownerKey: ownerKey, into: target, back: self, context: context)
        }
    }

    /// Removes the owner named by `ownerKey` from this relationship of `object`.
    func unlink(_ ownerKey: ReferenceKey, from object: AnyObject) {
        targetOwnerBacking(object)?.loadIfPartial()
        guard var references = references(of: object) else { return }
        let before = references.count
        references.removeAll { key(of: $0) == ownerKey }
        guard references.count != before else { return }
        setReferences(references, of: object)
        targetOwnerBacking(object)?.relationshipDidChange(index)
    }

    /// Adds `owner` to this relationship of `object`; for a to-one, the object it pointed to
    /// before loses `object` from its side (`back`).
    func link(_ owner: AnyObject, ownerKey: ReferenceKey, into object: AnyObject, back: RelationshipProperty, context: ModelContext?) {
        targetOwnerBacking(object)?.loadIfPartial()
        if isLinked(object, to: owner, ownerKey: ownerKey) { return }
        if !isToMany {
            // A to-one holds one owner: the previous one loses this object, from each of its
            // lists that name this to-one as their inverse.
            let objectKey = RelationshipProperty.key(of: object, entity: back.targetEntity)
            let lists = inverses(in: back.targetEntity)
            for reference in references(of: object) ?? [] {
                guard let previous = self.object(of: reference, context: context) else { continue }
                for list in lists.isEmpty ? [back] : lists { list.unlink(objectKey, from: previous) }
            }
            setReferences([], of: object)
        }
        // In place: a copy of the list per link made linking n children quadratic too.
        appendReference(ownerKey.rowReference ?? .object(owner), to: object)
        targetOwnerBacking(object)?.relationshipDidChange(index)
    }

    /// True when `object` already refers to `owner`: to its row, or to the object itself. (One
    /// object per row in a context, so no other object can stand for the owner's row: the
    /// check makes no key per reference, which made linking n children quadratic in cost.)
    func isLinked(_ object: AnyObject, to owner: AnyObject, ownerKey: ReferenceKey) -> Bool {
        guard let references = references(of: object) else { return false }
        return references.contains { reference in
            switch reference {
            case .row(let r): return ownerKey == .row(r)
            case .object(let o): return o === owner
            }
        }
    }

    /// The backing of an object this relationship belongs to (an object of the related model).
    private func targetOwnerBacking(_ object: AnyObject) -> ModelBacking? {
        EntityRegistry.shared.entity(forClassOf: object)?.backing(of: object)
    }
}
