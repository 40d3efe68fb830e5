import Foundation
@_spi(StorageBackend) import StrataRecords

/// An object's values at one moment, as a store receives and returns them.
///
/// Same as SwiftData's `DataStoreSnapshot`. A store may keep its own snapshot type; Strata
/// reads one by its `Codable` form, which must be `DefaultSnapshot`'s (a keyed container:
/// `persistentIdentifier`, then each persisted property by name).
public protocol DataStoreSnapshot: Codable, Sendable {
    var persistentIdentifier: PersistentIdentifier { get }
    init(from: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData])
    /// The same values under another identifier, with references to remapped identifiers
    /// (temporary to permanent) replaced.
    func copy(persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?) -> Self
}

/// What a snapshot is made from: an object's identifier and its persisted values.
///
/// Same as SwiftData's `BackingData` in role; Strata's gives the values by property name
/// (`snapshotValues`, Strata-only) rather than by key path.
public protocol BackingData: AnyObject {
    /// The object's identifier: temporary for an object not saved yet.
    var persistentModelID: PersistentIdentifier? { get }
    /// Strata-only: each persisted property's value by name; a relationship's is the
    /// identifiers of the related objects.
    var snapshotValues: [String: SnapshotValue] { get }
}

/// The keys of a snapshot's coded form. Same as SwiftData's `DataStoreSnapshotCodingKey`.
public enum DataStoreSnapshotCodingKey: CodingKey {
    case persistentIdentifier
    case modeledProperty(String)

    public var stringValue: String {
        switch self {
        case .persistentIdentifier: "persistentIdentifier"
        case .modeledProperty(let name): name
        }
    }

    public init?(stringValue: String) {
        self = stringValue == "persistentIdentifier" ? .persistentIdentifier : .modeledProperty(stringValue)
    }

    public var intValue: Int? { nil }
    public init?(intValue: Int) { nil }
}

/// The type of a value a snapshot holds. Same as SwiftData's `DataStoreSnapshotValue`.
public typealias DataStoreSnapshotValue = Codable & Sendable

/// An object's snapshot as Strata makes it: its identifier and each persisted property's value.
///
/// A store that keeps one column per attribute reads a value with `value(_:as:)` or
/// `values[name]`, and makes a snapshot from values with `init(persistentIdentifier:values:)`
/// (both Strata-only: SwiftData's `DefaultSnapshot` shows its values to no one).
///
/// ```swift
/// let name = try snapshot.value("name", as: String.self)
/// let stops = snapshot.relatedIdentifiers("stops")
/// ```
/// Same as SwiftData's `DefaultSnapshot`, with those additions.
public struct DefaultSnapshot: DataStoreSnapshot, Hashable {
    public let persistentIdentifier: PersistentIdentifier
    /// The values, by name or in a layout's order.
    let storage: Storage
    /// Strata-only: the store's version of the object when the snapshot was made, for
    /// optimistic locking (nil: the store keeps none). A store that keeps a version per object
    /// gives it in the snapshots it fetches. Strata keeps it with the object a context makes
    /// from the snapshot, and sends it back unchanged in that context's snapshots of the
    /// object's update or deletion: the version the context read, which the store compares with
    /// its own to refuse a change made over another writer's (Docs/CustomStores.md, "Versions").
    /// A store gives each saved object's new version in `DataStoreSaveChangesResult.savedVersions`.
    /// It is not part of the snapshot's values: equality, hashing and the coded form leave it out.
    ///
    /// Strata-only: SwiftData's snapshots carry no version.
    public let version: Int64?

    enum Storage: Sendable {
        case named([String: SnapshotValue])
        /// `layout.names[i]`'s value is `values[i]`.
        case positional(Layout, [SnapshotValue])
    }

    /// Strata-only: the names of a snapshot's values, in the order
    /// `init(persistentIdentifier:layout:values:)` takes them. A store that reads objects of
    /// a model from rows makes one layout per model and gives it to every snapshot: Strata then
    /// keeps the values by position, with no dictionary per object (Docs/CustomStores.md).
    ///
    /// Strata-only: SwiftData's snapshots show their values to no one.
    public final class Layout: Sendable {
        /// The properties' names, each once, in the order of a snapshot's values.
        public let names: [String]
        /// Each name's position, for `value(_:as:)` and `values`.
        let positions: [String: Int]

        /// A layout of these names. A name given twice keeps its first position.
        public init(_ names: [String]) {
            self.names = names
            positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }

        /// The position of `name`'s value (nil: the layout does not name it).
        public func position(of name: String) -> Int? { positions[name] }
    }

    /// Strata-only: the layout the snapshot was made with (nil: made from a dictionary of
    /// values). Strata makes the snapshots of a save this way, one layout per model: a store
    /// that writes columns finds each column's position once for a run of snapshots of one
    /// layout, and reads values with `value(at:)`.
    public var layout: Layout? {
        if case .positional(let layout, _) = storage { return layout }
        return nil
    }

    /// Strata-only: the value at `position` of the snapshot's layout (nil: no layout, or no
    /// such position).
    public func value(at position: Int) -> SnapshotValue? {
        guard case .positional(_, let values) = storage, values.indices.contains(position) else { return nil }
        return values[position]
    }

    /// Strata-only: each persisted property's value, by name. A relationship's is `.identifiers`.
    public var values: [String: SnapshotValue] {
        switch storage {
        case .named(let values): return values
        case .positional(let layout, let values):
            var named: [String: SnapshotValue] = [:]
            named.reserveCapacity(values.count)
            for (name, value) in zip(layout.names, values) where named[name] == nil { named[name] = value }
            return named
        }
    }

    /// Strata-only: a snapshot of these values.
    public init(persistentIdentifier: PersistentIdentifier, values: [String: SnapshotValue], version: Int64? = nil) {
        self.persistentIdentifier = persistentIdentifier
        storage = .named(values)
        self.version = version
    }

    /// Strata-only: a snapshot whose values are `values`, named in order by `layout`
    /// (`layout.names[i]` names `values[i]`). The same snapshot as the one made from the
    /// dictionary of those names and values, made and kept with less work. Values beyond the
    /// layout's names, or names beyond the values, are not part of it: Strata reports a
    /// snapshot of the wrong length as a store's error when it keeps it.
    public init(persistentIdentifier: PersistentIdentifier, layout: Layout, values: [SnapshotValue], version: Int64? = nil) {
        self.persistentIdentifier = persistentIdentifier
        storage = .positional(layout, values)
        self.version = version
    }

    /// Strata-only: the same snapshot with `version` as its version.
    public func withVersion(_ version: Int64?) -> DefaultSnapshot {
        switch storage {
        case .named(let values): DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values, version: version)
        case .positional(let layout, let values): DefaultSnapshot(persistentIdentifier: persistentIdentifier, layout: layout, values: values, version: version)
        }
    }

    public static func == (a: DefaultSnapshot, b: DefaultSnapshot) -> Bool {
        a.persistentIdentifier == b.persistentIdentifier && a.values == b.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(persistentIdentifier)
        hasher.combine(values)
    }

    public init(from backingData: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData]) {
        self.init(persistentIdentifier: backingData.persistentModelID ?? PersistentIdentifier(entityName: "", storeIdentifier: nil, rowID: -1),
                  values: backingData.snapshotValues)
    }

    public func copy(persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]? = [:]) -> DefaultSnapshot {
        func remapped(_ value: SnapshotValue) -> SnapshotValue {
            guard let remap = remappedIdentifiers, !remap.isEmpty, case .identifiers(let ids) = value else { return value }
            return .identifiers(ids.map { remap[$0] ?? $0 })
        }
        switch storage {
        case .named(let values): return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values.mapValues(remapped), version: version)
        case .positional(let layout, let values): return DefaultSnapshot(persistentIdentifier: persistentIdentifier, layout: layout, values: values.map(remapped), version: version)
        }
    }

    /// Strata-only: property `name`'s value as a `V` (nil when the snapshot has no such property).
    /// Throws when the value is not a `V`.
    public func value<V: Decodable>(_ name: String, as type: V.Type) throws -> V? {
        guard let value = self[name] else { return nil }
        return try value.decode(V.self)
    }

    /// Strata-only: the objects relationship `name` refers to.
    public func relatedIdentifiers(_ name: String) -> [PersistentIdentifier] {
        if case .identifiers(let ids)? = self[name] { return ids }
        return []
    }

    /// Strata-only: property `name`'s value (nil when the snapshot has none), read without
    /// making `values`: `snapshot["title"]` is `snapshot.values["title"]`.
    public subscript(name: String) -> SnapshotValue? {
        switch storage {
        case .named(let values): return values[name]
        case .positional(let layout, let values):
            guard let i = layout.positions[name], i < values.count else { return nil }
            return values[i]
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        persistentIdentifier = try c.decode(PersistentIdentifier.self, forKey: .persistentIdentifier)
        var values: [String: SnapshotValue] = [:]
        for key in c.allKeys {
            guard case .modeledProperty(let name) = key else { continue }
            values[name] = try c.decode(SnapshotValue.self, forKey: key)
        }
        storage = .named(values)
        version = nil
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
        let values = self.values
        for name in values.keys.sorted() {
            if let value = values[name] { try c.encode(value, forKey: .modeledProperty(name)) }
        }
    }
}
