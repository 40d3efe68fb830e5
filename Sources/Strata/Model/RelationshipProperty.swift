import Foundation
import StrataEngine

/// A relationship of a model class. Its record field holds the related row ids, in order
/// (`[varint count][varint row]...`): both sides of a relationship store their own list.
final class RelationshipProperty: PersistedProperty, @unchecked Sendable {
    let relationship: RelationshipDeclaration
    let targetType: any PersistentModel.Type
    let isToMany: Bool
    /// The property's declared type (`Model?`, `[Model]` or `[Model]?`).
    let declaredValueType: Any.Type
    /// Where the storage keeps its references, from the start of the object.
    private let referencesOffset: Int
    private let lock = NSLock()
    private var resolvedInverse: RelationshipProperty??

    init<Value: RelationshipValue>(name: String, offset: Int, index: Int, relationship: RelationshipDeclaration, valueType: Value.Type,
                                   referencesOffset: Int, link: StorageLink) {
        self.relationship = relationship
        self.targetType = Value.relatedType
        self.isToMany = Value.isToMany
        self.declaredValueType = Value.self
        self.referencesOffset = offset + referencesOffset
        // The former name (`originalName:`) renames a relationship in a lightweight migration
        // as it renames an attribute.
        super.init(name: name, offset: offset, index: index, declaration: AttributeDeclaration(originalName: relationship.originalName),
                   link: link)
    }

    /// The related model's entity.
    var targetEntity: Entity {
        // Discovered when the container was made; `discover` only looks it up then.
        EntityRegistry.shared.entity(for: targetType) ?? EntityRegistry.shared.discoverOrPlaceholder(targetType)
    }

    override var valueType: Any.Type { declaredValueType }
    override var typeName: String { "relationship(\(String(describing: targetType)),\(isToMany ? "many" : "one"))" }

    // MARK: The storage

    @inline(__always)
    private func slot(_ object: AnyObject) -> UnsafeMutablePointer<[RelatedReference]?> {
        UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()).advanced(by: referencesOffset)
            .assumingMemoryBound(to: [RelatedReference]?.self)
    }

    func references(of object: AnyObject) -> [RelatedReference]? { slot(object).pointee }
    func setReferences(_ references: [RelatedReference]?, of object: AnyObject) { slot(object).pointee = references }
    /// Appends a reference in place (no copy of the others); starts the list if it has none.
    func appendReference(_ reference: RelatedReference, to object: AnyObject) {
        let slot = slot(object)
        if slot.pointee == nil { slot.pointee = [reference] } else { slot.pointee?.append(reference) }
    }

    override func hasValue(_ object: AnyObject) -> Bool { references(of: object) != nil }
    override func clear(_ object: AnyObject) { setReferences(nil, of: object) }
    override func value(of object: AnyObject) -> Any? { rows(of: object) }
    override func fieldValue(_ field: UnsafeRawBufferPointer) throws -> Any { try RelationshipProperty.decodeRows(field) }

    /// The related row ids (objects not yet inserted have none and are left out).
    func rows(of object: AnyObject) -> [RowID] {
        let target = targetEntity
        return (references(of: object) ?? []).compactMap { reference in
            switch reference {
            case .row(let r): return r
            case .object(let o): return target.backing(of: o)?.rowID
            }
        }
    }

    // MARK: Records

    override func encode(_ object: AnyObject, into bytes: inout [UInt8], _ encoding: RecordEncoding) throws {
        let target = targetEntity
        let moved = encoding.movedRows[ObjectIdentifier(target)]
        let references = references(of: object) ?? []
        Varint.append(references.count, to: &bytes)
        for reference in references {
            var row: RowID
            switch reference {
            case .row(let r): row = r
            case .object(let o):
                guard let b = target.backing(of: o), b.status != .detached else {
                    throw StrataError(.invalidSchema, "\(String(describing: type(of: object))).\(name) refers to a \(target.name) that is not in the context; insert it first.")
                }
                row = b.rowID
            }
            if let moved, let to = moved[row] { row = to }
            Varint.append(Int(truncatingIfNeeded: row), to: &bytes)
        }
    }

    static func decodeRows(_ raw: UnsafeRawBufferPointer) throws -> [RowID] {
        var p = 0
        let n = try Varint.readCount(raw, &p, "a relationship")
        var rows: [RowID] = []
        rows.reserveCapacity(n)
        for _ in 0..<n { rows.append(RowID(try Varint.read(raw, &p))) }
        return rows
    }

    /// A relationship field listing `rows`.
    static func encodeRows<C: Collection>(_ rows: C, into bytes: inout [UInt8]) where C.Element == RowID {
        Varint.append(rows.count, to: &bytes)
        for r in rows { Varint.append(Int(truncatingIfNeeded: r), to: &bytes) }
    }

    override func decode(_ field: UnsafeRawBufferPointer, into object: AnyObject, backing: ModelBacking?) throws {
        setReferences(try RelationshipProperty.decodeRows(field).map { .row($0) }, of: object)
    }

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
}
