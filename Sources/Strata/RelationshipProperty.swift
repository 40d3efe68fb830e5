import Foundation
import StrataEngine

/// Field offsets inside a `Relationship<Value>` storage, found once per value type so that the
/// rest of the code reads and writes the storage without generics.
enum RelationshipStorageAccess<Value: RelationshipValue> {
    static var referencesOffset: Int { MemoryLayout<Relationship<Value>>.offset(of: \Relationship<Value>.references) ?? 0 }
    static var backingOffset: Int { MemoryLayout<Relationship<Value>>.offset(of: \Relationship<Value>.backing) ?? 0 }
    static var propertyOffset: Int { MemoryLayout<Relationship<Value>>.offset(of: \Relationship<Value>.property) ?? 0 }
}

/// A relationship of a model class. Its record field holds the related row ids, in order
/// (`[varint count][varint row]...`): both sides of a relationship store their own list.
final class RelationshipProperty: AnyProperty, @unchecked Sendable {
    let relationship: RelationshipDeclaration
    let targetType: any PersistentModel.Type
    let isToMany: Bool
    /// The property's declared type (`Model?` or `[Model]`).
    let declaredValueType: Any.Type
    private let referencesOffset: Int
    private let backingOffset: Int
    private let propertyOffset: Int
    private let lock = NSLock()
    private var resolvedInverse: RelationshipProperty??

    init<Value: RelationshipValue>(name: String, offset: Int, index: Int, relationship: RelationshipDeclaration,
                                   storage: RelationshipStorageAccess<Value>.Type) {
        self.relationship = relationship
        self.targetType = Value.relatedType
        self.isToMany = Value.isToMany
        self.declaredValueType = Value.self
        self.referencesOffset = offset + storage.referencesOffset
        self.backingOffset = offset + storage.backingOffset
        self.propertyOffset = offset + storage.propertyOffset
        // The former name (`originalName:`) renames a relationship in a lightweight migration
        // as it renames an attribute.
        super.init(name: name, offset: offset, index: index, declaration: AttributeDeclaration(originalName: relationship.originalName))
    }

    /// The related model's entity.
    var targetEntity: Entity {
        // Discovered when the container was made; `discover` only looks it up then.
        EntityRegistry.shared.entity(for: targetType) ?? EntityRegistry.shared.discoverOrPlaceholder(targetType)
    }

    override var valueType: Any.Type { [RowID].self }
    override var typeName: String { "relationship(\(String(describing: targetType)),\(isToMany ? "many" : "one"))" }

    // MARK: Raw storage

    @inline(__always)
    private func base(_ object: AnyObject) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    func references(of object: AnyObject) -> [RelatedReference]? {
        base(object).advanced(by: referencesOffset).assumingMemoryBound(to: [RelatedReference]?.self).pointee
    }

    func setReferences(_ references: [RelatedReference]?, of object: AnyObject) {
        base(object).advanced(by: referencesOffset).assumingMemoryBound(to: [RelatedReference]?.self).pointee = references
    }

    override func setBacking(_ backing: ModelBacking?, of object: AnyObject) {
        base(object).advanced(by: backingOffset).assumingMemoryBound(to: ModelBacking?.self).pointee = backing
        base(object).advanced(by: propertyOffset).assumingMemoryBound(to: RelationshipProperty?.self).pointee = backing == nil ? nil : self
    }

    override func backing(of object: AnyObject) -> ModelBacking? {
        base(object).advanced(by: backingOffset).assumingMemoryBound(to: ModelBacking?.self).pointee
    }

    override func hasValue(_ object: AnyObject) -> Bool { references(of: object) != nil }
    override func clearValue(of object: AnyObject) { setReferences(nil, of: object) }

    /// The related row ids (objects not yet inserted have none and are left out).
    func rows(of object: AnyObject) -> [RowID] {
        (references(of: object) ?? []).compactMap { reference in
            switch reference {
            case .row(let r): return r
            case .object(let o): return targetEntity.backing(of: o)?.rowID
            }
        }
    }

    // MARK: Records

    override func encodeValue(of object: AnyObject, into bytes: inout [UInt8]) throws {
        let remap = backing(of: object)?.context?.rowRemap[ObjectIdentifier(targetEntity)]
        let rows = try (references(of: object) ?? []).map { reference -> RowID in
            switch reference {
            case .row(let r): return remap?[r] ?? r
            case .object(let o):
                guard let b = targetEntity.backing(of: o), b.status != .detached else {
                    throw StrataError(.invalidSchema, "\(String(describing: type(of: object))).\(name) refers to a \(targetEntity.name) that is not in the context; insert it first.")
                }
                return remap?[b.rowID] ?? b.rowID
            }
        }
        Varint.append(rows.count, to: &bytes)
        for r in rows { Varint.append(Int(truncatingIfNeeded: r), to: &bytes) }
    }

    static func decodeRows(_ raw: UnsafeRawBufferPointer) throws -> [RowID] {
        var p = 0
        let n = try Varint.read(raw, &p)
        guard n <= raw.count else { throw decodingFailure("a relationship count past the end") }
        var rows: [RowID] = []
        rows.reserveCapacity(n)
        for _ in 0..<n { rows.append(RowID(try Varint.read(raw, &p))) }
        return rows
    }

    override func decodeValue(_ raw: UnsafeRawBufferPointer, into object: AnyObject) throws {
        setReferences(try RelationshipProperty.decodeRows(raw).map { .row($0) }, of: object)
    }

    override func indexKey(of object: AnyObject) -> [UInt8] { [] }
    override func indexKey(fromField raw: UnsafeRawBufferPointer) throws -> [UInt8] { [] }
    override func anyValue(of object: AnyObject) -> Any? { rows(of: object) }
    override func anyValue(fromField raw: UnsafeRawBufferPointer) throws -> Any { try RelationshipProperty.decodeRows(raw) }
    override func anyRowReader() -> Any { 0 }
    override func copyValue(from source: AnyObject, to target: AnyObject) { setReferences(references(of: source), of: target) }
    override func valuesEqual(_ a: AnyObject, _ b: AnyObject) -> Bool { rows(of: a) == rows(of: b) }
    override func setMarker(_ variant: Int, on object: AnyObject) -> Bool { false }
    override func isMarker(_ variant: Int, _ value: Any) -> Bool { false }
    override func indexKey(forAny value: Any) -> [UInt8]? { nil }

    // MARK: Inverse

    /// The relationship of the related model that points back here: the declared `inverse:`,
    /// or the only relationship of the related model back to this one (declared there either
    /// way).
    func inverse(in entity: Entity) -> RelationshipProperty? {
        lock.lock()
        defer { lock.unlock() }
        if let known = resolvedInverse { return known }
        let target = targetEntity
        var found: RelationshipProperty? = nil
        if let keyPath = relationship.inverse {
            found = target.property(for: keyPath) as? RelationshipProperty
        } else {
            // Declared on the other side?
            let pointingHere = target.relationships.filter { $0.targetType == entity.type && !($0 === self) }
            if let declared = pointingHere.first(where: { other in
                other.relationship.inverse.map { entity.property(for: $0) === self } ?? false
            }) {
                found = declared
            } else if pointingHere.count == 1 {
                found = pointingHere[0]
            }
        }
        resolvedInverse = .some(found)
        return found
    }

    /// How a reference names an object: its row once registered, else its identity.
    enum ReferenceKey: Hashable {
        case row(RowID)
        case object(ObjectIdentifier)
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
    func assign(_ objects: [AnyObject], to owner: AnyObject, ownerEntity: Entity) {
        var ownerBacking = ownerEntity.backing(of: owner).flatMap { $0.status == .detached || $0.context == nil ? nil : $0 }
        if ownerBacking == nil,
           let context = objects.lazy.compactMap({ self.targetEntity.backing(of: $0) }).first(where: { $0.status != .detached })?.context,
           let model = owner as? any PersistentModel {
            context.insert(model)
            ownerBacking = ownerEntity.backing(of: owner)
        }
        let context = ownerBacking?.context
        let old = references(of: owner) ?? []
        var new: [RelatedReference] = []
        for object in objects {
            if let context, let b = context.insertRelated(object, entity: targetEntity) {
                new.append(.row(b.rowID))
            } else {
                new.append(.object(object))
            }
        }
        ownerBacking?.willChange()
        setReferences(new, of: owner)
        guard let inverse = inverse(in: ownerEntity) else { return }
        let ownerKey = RelationshipProperty.key(of: owner, entity: ownerEntity)
        let newKeys = Set(new.map(key(of:)))
        let oldKeys = Set(old.map(key(of:)))
        for reference in old where !newKeys.contains(key(of: reference)) {
            if let target = object(of: reference, context: context) { inverse.unlink(ownerKey, from: target) }
        }
        for reference in new where !oldKeys.contains(key(of: reference)) {
            if let target = object(of: reference, context: context) {
                inverse.link(owner, ownerKey: ownerKey, into: target, back: self, context: context)
            }
        }
    }

    /// Removes the owner named by `ownerKey` from this relationship of `object`.
    func unlink(_ ownerKey: ReferenceKey, from object: AnyObject) {
        guard var references = references(of: object) else { return }
        let before = references.count
        references.removeAll { key(of: $0) == ownerKey }
        guard references.count != before else { return }
        backing(of: object)?.willChange()
        setReferences(references, of: object)
    }

    /// Adds `owner` to this relationship of `object`; for a to-one, the object it pointed to
    /// before loses `object` from its side (`back`).
    func link(_ owner: AnyObject, ownerKey: ReferenceKey, into object: AnyObject, back: RelationshipProperty, context: ModelContext?) {
        var references = references(of: object) ?? []
        if references.contains(where: { key(of: $0) == ownerKey }) { return }
        backing(of: object)?.willChange()
        if !isToMany {
            // A to-one holds one owner: the previous one loses this object.
            let objectKey = RelationshipProperty.key(of: object, entity: back.targetEntity)
            for reference in references {
                if let previous = self.object(of: reference, context: context) { back.unlink(objectKey, from: previous) }
            }
            references = []
        }
        if case .row(let r) = ownerKey { references.append(.row(r)) } else { references.append(.object(owner)) }
        setReferences(references, of: object)
    }
}

extension Entity {
    /// The backing of an object of this entity, if it is registered.
    func backing(of object: AnyObject) -> ModelBacking? {
        for p in properties { if let b = p.backing(of: object) { return b } }
        return nil
    }
}
