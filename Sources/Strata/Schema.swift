import Foundation
import StrataEngine

/// The set of model classes a container stores. Same as SwiftData's `Schema`.
///
/// ```swift
/// let schema = Schema([Trip.self, Stop.self])
/// let container = try ModelContainer(for: schema, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
/// ```
public final class Schema: Hashable, @unchecked Sendable {
    /// A schema's version, as in SwiftData's `Schema.Version`.
    public struct Version: Hashable, Codable, Sendable, Comparable, CustomStringConvertible {
        public let major: Int
        public let minor: Int
        public let patch: Int
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }
        public static func < (a: Self, b: Self) -> Bool { (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch) }
        public var description: String { "\(major).\(minor).\(patch)" }
    }

    /// The model classes, in the order given.
    public let types: [any PersistentModel.Type]
    public let version: Version

    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        var seen = Set<ObjectIdentifier>()
        self.types = types.filter { seen.insert(ObjectIdentifier($0)).inserted }
        self.version = version
    }

    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The names of the models (entities) in this schema.
    public var entityNames: [String] { types.map { String(describing: $0) } }

    /// The discovered entities, including models reachable through relationships (added as
    /// SwiftData adds them); throws a schema error naming the class and property at fault.
    func entities(includingRelated: Bool = true) throws -> [Strata.Entity] {
        if !includingRelated { return try types.map { try EntityRegistry.shared.discover($0) } }
        var result: [Strata.Entity] = []
        var seen = Set<ObjectIdentifier>()
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            let entity = try EntityRegistry.shared.discover(type)
            result.append(entity)
            queue += entity.relationships.map(\.targetType)
        }
        return result
    }

    public static func == (a: Schema, b: Schema) -> Bool {
        a.types.map(ObjectIdentifier.init) == b.types.map(ObjectIdentifier.init) && a.version == b.version
    }
    public func hash(into hasher: inout Hasher) {
        for t in types { hasher.combine(ObjectIdentifier(t)) }
        hasher.combine(version)
    }
}

/// How an entity is stored, as written in the store's metadata and compared on open.
struct StoredEntity: Codable, Equatable {
    struct StoredProperty: Codable, Equatable {
        var name: String
        var type: String
        var options: UInt16
    }
    var name: String
    var properties: [StoredProperty]
    var unique: [[String]]
    var indexes: [[String]]
    /// Every record layout, oldest first (nil in stores written before layouts were kept).
    var layouts: [[String]]? = nil
    /// The names each property had before it was renamed, oldest first, by its current name
    /// (only properties that were renamed; nil in stores written before former names were
    /// kept). They accumulate across renames, so records of any older layout map to the
    /// property whatever it was called then.
    var formerNames: [String: [String]]? = nil
    /// By property name: the encoded value (`Property.encodeValue`; `[0]`, no rows, for a
    /// relationship) that records of an older layout read for a property their layout lacks,
    /// fixed when the property was added, as SQLite's `ALTER TABLE ADD COLUMN` fixes a column's
    /// default for the rows that exist then. Only properties that some older layout lacks
    /// have one; nil in stores written before defaults were kept.
    var defaults: [String: Data]? = nil

    init(_ entity: Entity) {
        name = entity.name
        properties = entity.properties.map { StoredProperty(name: $0.name, type: $0.typeName, options: $0.declaration.options) }
        unique = entity.uniqueGroups.map { $0.map { entity.properties[$0].name } }
        indexes = entity.indexGroups.map { $0.map { entity.properties[$0].name } }
    }

    /// What differs from `other` (the stored one), in words a person can act on.
    func differences(from stored: StoredEntity) -> [String] {
        var out: [String] = []
        let mine = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })
        let theirs = Dictionary(uniqueKeysWithValues: stored.properties.map { ($0.name, $0) })
        for p in properties where theirs[p.name] == nil { out.append("\(name).\(p.name) is new") }
        for p in stored.properties where mine[p.name] == nil { out.append("\(name).\(p.name) was removed") }
        for p in properties {
            if let s = theirs[p.name], s.type != p.type { out.append("\(name).\(p.name) changed type from \(s.type) to \(p.type)") }
        }
        if properties.map(\.name) != stored.properties.map(\.name) && out.isEmpty {
            out.append("\(name)'s properties are in a different order")
        }
        if Set(unique) != Set(stored.unique) { out.append("\(name)'s unique constraints changed") }
        if Set(indexes) != Set(stored.indexes) { out.append("\(name)'s indexes changed") }
        return out
    }
}

struct StoredSchema: Codable, Equatable {
    var formatVersion = 1
    var entities: [StoredEntity]
}
