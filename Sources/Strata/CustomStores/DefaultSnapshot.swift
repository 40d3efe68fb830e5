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
    /// Strata-only: each persisted property's value, by name. A relationship's is `.identifiers`.
    public let values: [String: SnapshotValue]

    /// Strata-only: a snapshot of these values.
    public init(persistentIdentifier: PersistentIdentifier, values: [String: SnapshotValue]) {
        self.persistentIdentifier = persistentIdentifier
        self.values = values
    }

    public init(from backingData: any BackingData, relatedBackingDatas: inout [PersistentIdentifier: any BackingData]) {
        self.init(persistentIdentifier: backingData.persistentModelID ?? PersistentIdentifier(entityName: "", storeIdentifier: nil, rowID: -1),
                  values: backingData.snapshotValues)
    }

    public func copy(persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]? = [:]) -> DefaultSnapshot {
        guard let remap = remappedIdentifiers, !remap.isEmpty else { return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values) }
        return DefaultSnapshot(persistentIdentifier: persistentIdentifier, values: values.mapValues { value in
            guard case .identifiers(let ids) = value else { return value }
            return .identifiers(ids.map { remap[$0] ?? $0 })
        })
    }

    /// Strata-only: property `name`'s value as a `V` (nil when the snapshot has no such property).
    /// Throws when the value is not a `V`.
    public func value<V: Decodable>(_ name: String, as type: V.Type) throws -> V? {
        guard let value = values[name] else { return nil }
        return try value.decode(V.self)
    }

    /// Strata-only: the objects relationship `name` refers to.
    public func relatedIdentifiers(_ name: String) -> [PersistentIdentifier] {
        if case .identifiers(let ids)? = values[name] { return ids }
        return []
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        persistentIdentifier = try c.decode(PersistentIdentifier.self, forKey: .persistentIdentifier)
        var values: [String: SnapshotValue] = [:]
        for key in c.allKeys {
            guard case .modeledProperty(let name) = key else { continue }
            values[name] = try c.decode(SnapshotValue.self, forKey: key)
        }
        self.values = values
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DataStoreSnapshotCodingKey.self)
        try c.encode(persistentIdentifier, forKey: .persistentIdentifier)
        for name in values.keys.sorted() {
            if let value = values[name] { try c.encode(value, forKey: .modeledProperty(name)) }
        }
    }
}
