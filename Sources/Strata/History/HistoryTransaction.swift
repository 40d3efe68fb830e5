import Foundation
@_spi(StorageBackend) import StrataRecords

/// A transaction of a store's history: what one save changed in one store. Same as
/// SwiftData's `HistoryTransaction`.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    associatedtype TokenType: Comparable, Hashable, Identifiable, Sendable
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    var author: String? { get }
    var changes: [HistoryChange] { get }
    var storeIdentifier: String { get }
    var timestamp: Date { get }
    var token: TokenType { get }
    var transactionIdentifier: TransactionIdentifier { get }
}

/// One save's changes to one store, in the order they were written: deletions, then updates,
/// then inserts. Same as SwiftData's `DefaultHistoryTransaction`.
///
/// Differs from SwiftData: changes to models the reading container does not have in its
/// schema are left out of `changes` (`strata history` lists them).
public struct DefaultHistoryTransaction: HistoryTransaction {
    /// The token's value: the transaction's number in its store.
    public let transactionIdentifier: Int64
    public let token: DefaultHistoryToken
    public let changes: [HistoryChange]
    /// When the save committed.
    public let timestamp: Date
    /// The saving context's `author`.
    public let author: String?
    /// The store's identifier (`DefaultHistoryToken.storeIdentifier`).
    public let storeIdentifier: String
    /// The saving process's bundle identifier (on Linux: the main bundle's, or the process name).
    public let bundleIdentifier: String
    /// The saving process's id, in decimal.
    public let processIdentifier: String

    public var id: Int64 { transactionIdentifier }

    public static func == (a: Self, b: Self) -> Bool { a.token == b.token }
    public func hash(into hasher: inout Hasher) { hasher.combine(token) }
}

/// One change of a transaction. Same as SwiftData's `HistoryChange`: switch over it and
/// cast the payload to the model's type:
/// ```swift
/// switch change {
/// case .insert(let insert as DefaultHistoryInsert<Trip>): ...
/// case .update(let update as DefaultHistoryUpdate<Trip>): ...
/// case .delete(let delete as DefaultHistoryDelete<Trip>): ...
/// default: break
/// }
/// ```
public enum HistoryChange: Sendable {
    case insert(any HistoryInsert)
    case update(any HistoryUpdate)
    case delete(any HistoryDelete)

    /// The identifier of the object the change is about. Same as SwiftData.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let c): c.changedPersistentIdentifier
        case .update(let c): c.changedPersistentIdentifier
        case .delete(let c): c.changedPersistentIdentifier
        }
    }
}

/// An inserted object. Same as SwiftData's `HistoryInsert`.
public protocol HistoryInsert<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: Int { get }
    var transactionIdentifier: Int64 { get }
}

/// An updated object and the attributes that changed. Same as SwiftData's `HistoryUpdate`.
public protocol HistoryUpdate<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: Int { get }
    var transactionIdentifier: Int64 { get }
    var updatedAttributes: [HistoryAttribute<Model>] { get }
}

/// A deleted object and its tombstone. Same as SwiftData's `HistoryDelete`.
public protocol HistoryDelete<Model>: Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: Int { get }
    var transactionIdentifier: Int64 { get }
    var tombstone: HistoryTombstone<Model> { get }
}

/// Same as SwiftData's `DefaultHistoryInsert`.
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert, Hashable {
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's position in its transaction.
    public let changeIdentifier: Int
    public let transactionIdentifier: Int64
}

/// Same as SwiftData's `DefaultHistoryUpdate`.
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate, Hashable {
    public let changedPersistentIdentifier: PersistentIdentifier
    public let changeIdentifier: Int
    public let transactionIdentifier: Int64
    /// The attributes (and relationships) the save changed. An upsert that updated a stored
    /// object lists the attributes whose values differ.
    ///
    /// Differs from SwiftData, where these are key paths: Strata cannot make a model's key
    /// paths from its stored names, so each is a `HistoryAttribute` that compares equal to the
    /// model's key path: `update.updatedAttributes.contains(\.name)`,
    /// `attribute == \Trip.name`, `attribute.name == "name"`.
    public let updatedAttributes: [HistoryAttribute<Model>]
}

/// Same as SwiftData's `DefaultHistoryDelete`.
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete, Hashable {
    public let changedPersistentIdentifier: PersistentIdentifier
    public let changeIdentifier: Int
    public let transactionIdentifier: Int64
    /// The values of the model's `.preserveValueOnDeletion` attributes when it was deleted.
    public let tombstone: HistoryTombstone<Model>
}

/// An attribute an update changed, by name; compares equal to the model's key path of the
/// property. Strata extra (SwiftData's `updatedAttributes` holds key paths).
public struct HistoryAttribute<Model: PersistentModel>: Hashable, Sendable, CustomStringConvertible {
    /// The property's name in the schema.
    public let name: String

    public var description: String { name }

    /// True when `keyPath` is the model's key path of this property.
    public static func == (attribute: Self, keyPath: PartialKeyPath<Model>) -> Bool {
        EntityRegistry.shared.entity(for: Model.self)?.property(for: keyPath)?.name == attribute.name
    }

    public static func == (keyPath: PartialKeyPath<Model>, attribute: Self) -> Bool { attribute == keyPath }
}

extension Array {
    /// True when one of the attributes is `keyPath`'s property:
    /// `update.updatedAttributes.contains(\.name)`.
    public func contains<Model>(_ keyPath: PartialKeyPath<Model>) -> Bool where Element == HistoryAttribute<Model> {
        guard let name = EntityRegistry.shared.entity(for: Model.self)?.property(for: keyPath)?.name else { return false }
        return contains { $0.name == name }
    }
}

/// The preserved values of a deleted object: its `.preserveValueOnDeletion` attributes.
/// Same as SwiftData's `HistoryTombstone`: read a value with `tombstone[\.name]`.
public struct HistoryTombstone<Model: PersistentModel>: Sendable, Sequence, Hashable {
    /// The preserved attributes, by name, and their values.
    public let values: [(name: String, value: any Sendable)]

    init(_ values: [(name: String, value: any Sendable)]) { self.values = values }

    /// The value the attribute `keyPath` had when the object was deleted; nil when it was not
    /// preserved. Same as SwiftData.
    public subscript(keyPath: PartialKeyPath<Model>) -> (any Sendable)? {
        guard let name = EntityRegistry.shared.entity(for: Model.self)?.property(for: keyPath)?.name else { return nil }
        return values.first { $0.name == name }?.value
    }

    /// The value of the attribute named `name`. Strata extra.
    public subscript(name: String) -> (any Sendable)? { values.first { $0.name == name }?.value }

    public func makeIterator() -> IndexingIterator<[(name: String, value: any Sendable)]> { values.makeIterator() }

    public static func == (a: Self, b: Self) -> Bool {
        a.values.map(\.name) == b.values.map(\.name) && a.values.map { "\($0.value)" } == b.values.map { "\($0.value)" }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(values.map(\.name)) }
}
