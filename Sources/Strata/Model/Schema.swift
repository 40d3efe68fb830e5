import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

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
        self.types = Schema.distinct(types)
        self.version = version
    }

    /// `types` without repeats, in order. A list searched, not a `Set`: a set's storage of
    /// `ObjectIdentifier`s cost a fresh process's open runtime conformance lookups (with
    /// `Entity`'s key-path list, 0.4M instructions of W8 with `@Model`), and a schema is short.
    static func distinct(_ types: [any PersistentModel.Type]) -> [any PersistentModel.Type] {
        var seen: [ObjectIdentifier] = []
        seen.reserveCapacity(types.count)
        return types.filter { type in
            let id = ObjectIdentifier(type)
            if seen.contains(id) { return false }
            seen.append(id)
            return true
        }
    }

    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The names of the models (entities) in this schema.
    public var entityNames: [String] { types.map { TypeNames.plain($0) } }

    /// The discovered entities, including models reachable through relationships (added as
    /// SwiftData adds them); throws a schema error naming the class and property at fault.
    func entities(includingRelated: Bool = true) throws -> [Strata.Entity] {
        if !includingRelated { return try types.map { try EntityRegistry.shared.discover($0) } }
        var result: [Strata.Entity] = []
        var seen: [ObjectIdentifier] = []   // (not a `Set`: see `distinct`)
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            let id = ObjectIdentifier(type)
            guard !seen.contains(id) else { continue }
            seen.append(id)
            let entity = try EntityRegistry.shared.discover(type)
            result.append(entity)
            queue += entity.relationships.map(\.targetType)
        }
        for entity in result {
            for relationship in entity.relationships { try relationship.checkInverse(in: entity) }
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
