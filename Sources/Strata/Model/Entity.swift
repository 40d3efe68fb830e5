import Foundation
import Synchronization
import StrataEngine

/// What Strata knows about one model class: its persisted properties, unique constraints and
/// indexes, discovered from the class itself (an `init()` instance and its property wrappers).
final class Entity: @unchecked Sendable {
    let name: String
    let type: any PersistentModel.Type
    let properties: [AnyProperty]
    /// The relationship properties (also in `properties`).
    let relationships: [RelationshipProperty]
    /// The `.externalStorage` attributes.
    let externals: [AnyProperty]
    /// Predicates and sorts that fall back to objects use registered ones (relationships and
    /// external values load through the context).
    let needsRegisteredObjects: Bool
    let propertyIndex: [String: Int]
    /// Unique constraints (single `.unique` attributes and `uniqueConstraints`), as property indexes.
    let uniqueGroups: [[Int]]
    /// Secondary indexes from `static var indexes`, as property indexes.
    let indexGroups: [[Int]]
    private let makeInstance: () -> AnyObject
    private let probe: KeyPathProber

    init<T: PersistentModel>(_ type: T.Type) throws {
        let name = String(describing: T.self)
        self.name = name
        self.type = type
        self.makeInstance = { T() }
        let sample = T()
        var properties: [AnyProperty] = []
        for field in FieldReflection.fields(of: T.self) {
            if field.type is TransientStorage.Type { continue }
            if let relationship = field.type as? RelationshipStorage.Type {
                let propertyName = field.name.hasPrefix("_") ? String(field.name.dropFirst()) : field.name
                let declaration = Entity.relationshipDeclaration(of: relationship, in: sample, offset: field.offset)
                properties.append(relationship.makeRelationship(name: propertyName, offset: field.offset, index: properties.count, declaration: declaration))
                continue
            }
            guard let storage = field.type as? AttributeStorage.Type else {
                let shown = field.name.hasPrefix("_") ? String(field.name.dropFirst()) : field.name
                throw StrataError.schema("\(name).\(shown) is a stored property without @Attribute, @Relationship or @Transient. Mark it @Attribute to persist it or @Transient to keep it out of the store; nothing may be silently left unsaved.")
            }
            let propertyName = field.name.hasPrefix("_") ? String(field.name.dropFirst()) : field.name
            let declaration = Entity.declaration(of: storage, in: sample, offset: field.offset)
            do {
                properties.append(try storage.makeProperty(name: propertyName, offset: field.offset, index: properties.count, declaration: declaration))
            } catch let problem as SchemaProblem {
                throw StrataError.schema("\(name).\(problem.message)")
            }
        }
        guard !properties.isEmpty else {
            throw StrataError.schema("\(name) has no @Attribute or @Relationship property; a model needs at least one persisted property.")
        }
        self.properties = properties
        self.relationships = properties.compactMap { $0 as? RelationshipProperty }
        self.externals = properties.filter(\.isExternal)
        self.needsRegisteredObjects = !relationships.isEmpty || !externals.isEmpty
        self.propertyIndex = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.index) })
        let prober = KeyPathProber(T.self, properties: properties)
        self.probe = prober
        var unique: [[Int]] = properties.filter(\.isUnique).map { [$0.index] }
        for group in T.uniqueConstraints {
            let indexes = try group.map { kp -> Int in
                guard let p = prober.property(for: kp) else {
                    throw StrataError.schema("\(name).uniqueConstraints names a key path that is not an @Attribute property of \(name).")
                }
                return p
            }
            if !indexes.isEmpty && !unique.contains(indexes) { unique.append(indexes) }
        }
        var indexGroups: [[Int]] = []
        for group in T.indexes {
            let indexes = try group.map { kp -> Int in
                guard let p = prober.property(for: kp) else {
                    throw StrataError.schema("\(name).indexes names a key path that is not an @Attribute property of \(name).")
                }
                return p
            }
            if !indexes.isEmpty && !indexGroups.contains(indexes) && !unique.contains(indexes) { indexGroups.append(indexes) }
        }
        self.uniqueGroups = unique
        self.indexGroups = indexGroups
    }

    private static func relationshipDeclaration(of storage: RelationshipStorage.Type, in object: AnyObject, offset: Int) -> RelationshipDeclaration {
        func read<S: RelationshipStorage>(_: S.Type) -> RelationshipDeclaration {
            UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
                .advanced(by: offset).assumingMemoryBound(to: S.self).pointee.relationshipDeclaration
        }
        return read(storage)
    }

    private static func declaration(of storage: AttributeStorage.Type, in object: AnyObject, offset: Int) -> AttributeDeclaration {
        func read<S: AttributeStorage>(_: S.Type) -> AttributeDeclaration {
            UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
                .advanced(by: offset).assumingMemoryBound(to: S.self).pointee.attributeDeclaration
        }
        return read(storage)
    }

    /// A new, empty instance (the model's `init()`).
    func newInstance() -> AnyObject { makeInstance() }

    /// The property a key path of this model reads, if it is one property's own key path.
    func property(for keyPath: AnyKeyPath) -> AnyProperty? {
        probe.property(for: keyPath).map { properties[$0] }
    }

    /// The engine's name for a unique constraint's index.
    func uniqueIndexName(_ group: [Int]) -> String { "unique:" + group.map { properties[$0].name }.joined(separator: ",") }
    func indexName(_ group: [Int]) -> String { "index:" + group.map { properties[$0].name }.joined(separator: ",") }

    /// The index key of a group of properties for an object.
    func key(of group: [Int], object: AnyObject) -> [UInt8] {
        if group.count == 1 { return properties[group[0]].indexKey(of: object) }
        return group.reduce(into: []) { $0 += properties[$1].indexKey(of: object) }
    }
}

/// Maps key paths to properties by reading them on a probe instance whose attribute storages
/// are empty and marked: the getter's slow path records which property was read. The answer is
/// then checked by writing two distinct marker values into that property and reading them
/// back through the key path, so a computed property is never taken for a stored one.
final class KeyPathProber: @unchecked Sendable {
    private let lock = NSLock()
    private var cache: [AnyKeyPath: Int?] = [:]
    private let session = ProbeSession()
    private let probe: AnyObject
    private let properties: [AnyProperty]
    private let apply: (AnyKeyPath) -> Any?

    init<T: PersistentModel>(_ type: T.Type, properties: [AnyProperty]) {
        let probe = T()
        let session = self.session
        for p in properties {
            p.clearValue(of: probe)
            p.setBacking(ModelBacking(probeIndex: p.index, session: session), of: probe)
        }
        self.probe = probe
        self.properties = properties
        apply = { keyPath in
            guard let kp = keyPath as? PartialKeyPath<T> else { return nil }
            return probe[keyPath: kp]
        }
    }

    func property(for keyPath: AnyKeyPath) -> Int? {
        lock.withLock {
            if let known = cache[keyPath] { return known }
            session.hits.removeAll()
            _ = apply(keyPath)
            var found: Int? = nil
            if session.hits.count == 1, let hit = session.hits.first {
                let property = properties[hit]
                if let relationship = property as? RelationshipProperty {
                    // Relationships have no marker values: the key path's type must be the property's.
                    let confirmed = type(of: keyPath).valueType == relationship.declaredValueType
                    cache[keyPath] = .some(confirmed ? hit : nil)
                    return confirmed ? hit : nil
                }
                var confirmed = type(of: keyPath).valueType == property.valueType
                for variant in 0..<2 where confirmed {
                    guard property.setMarker(variant, on: probe), let read = apply(keyPath) else { confirmed = false; break }
                    confirmed = property.isMarker(variant, read)
                }
                property.clearValue(of: probe)
                if confirmed { found = hit }
            }
            cache[keyPath] = .some(found)
            return found
        }
    }
}

/// Where a probe's getters record what was read.
final class ProbeSession: @unchecked Sendable {
    var hits: [Int] = []
}
