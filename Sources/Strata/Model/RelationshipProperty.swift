import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

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
    private var resolvedInverses: Inverses?

    /// The relationships of the related model that point back here, and what was wrong if an
    /// inferred inverse could be more than one.
    private struct Inverses {
        var properties: [RelationshipProperty]
        var ambiguous: [RelationshipProperty] = []
    }

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
    override var typeName: String { "relationship(\(TypeNames.plain(targetType)),\(isToMany ? "many" : "one"))" }

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

    /// The relationship of the related model that points back here (see `inverses(in:)`); of
    /// several, the first declared, which setting this to-one alone adds the owner to.
    func inverse(in entity: Entity) -> RelationshipProperty? { inverses(in: entity).first }

    /// The relationships of the related model that point back here: the declared `inverse:`;
    /// else those of the related model that declare this one as theirs (several to-manys may:
    /// `leadingPlants` and `trailingPlants`, both `inverse: \Plant.backyard`), in declaration
    /// order; else the only relationship of the related model back to this model that declares
    /// no inverse and that no other relationship here claims. `entity` owns this relationship.
    func inverses(in entity: Entity) -> [RelationshipProperty] {
        resolve(in: entity).properties
    }

    /// Throws a schema error when the inverse would be inferred and more than one relationship
    /// of the related model could be it: Strata never guesses which.
    func checkInverse(in entity: Entity) throws {
        let ambiguous = resolve(in: entity).ambiguous
        guard ambiguous.count > 1 else { return }
        let names = ambiguous.map { "\(targetEntity.name).\($0.name)" }.joined(separator: " and ")
        throw StrataError.schema("\(entity.name).\(name) could have \(names) as its inverse. Say which with @Relationship(inverse: \\\(targetEntity.name).<name>) on one side of each pair.")
    }

    private func resolve(in entity: Entity) -> Inverses {
        lock.lock()
        defer { lock.unlock() }
        if let known = resolvedInverses { return known }
        let target = targetEntity
        let found: Inverses
        if let keyPath = relationship.inverse {
            found = Inverses(properties: [target.property(for: keyPath) as? RelationshipProperty].compactMap { $0 })
        } else {
            let pointingHere = target.relationships.filter { $0.targetType == entity.type && !($0 === self) }
            let declared = pointingHere.filter { other in other.relationship.inverse.map { entity.property(for: $0) === self } ?? false }
            if !declared.isEmpty {
                found = Inverses(properties: declared)
            } else {
                // Inferred: one that names no inverse of its own, and that no other relationship
                // of this model names as its inverse.
                let claimed = entity.relationships.filter { !($0 === self) }.compactMap { other in
                    other.relationship.inverse.flatMap { target.property(for: $0) }
                }
                let candidates = pointingHere.filter { candidate in
                    candidate.relationship.inverse == nil && !claimed.contains { $0 === candidate }
                }
                found = candidates.count == 1 ? Inverses(properties: candidates) : Inverses(properties: [], ambiguous: candidates)
            }
        }
        resolvedInverses = found
        return found
    }
}
