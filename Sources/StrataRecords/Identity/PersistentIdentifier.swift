import Foundation

/// Identifies one stored object: its model (entity), its store and its row.
/// Same as SwiftData's `PersistentIdentifier` (Hashable, Comparable, Codable, Sendable).
///
/// Two words: the row, and the model-and-store pair, which the identifiers of one model in one
/// store share (`IdentifierScope`), so that the identifiers a save reports for a million
/// objects take 16 bytes each.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    package let scope: IdentifierScope
    /// The row id in the store; negative for a temporary identifier.
    public let rowID: Int64

    /// The model's name (its class name).
    public var entityName: String { scope.entityName }
    /// The store the object lives in: the identifier written in the store when it was made
    /// (it stays when the file moves); nil for a temporary identifier.
    public var storeIdentifier: String? { scope.storeIdentifier }

    package init(entityName: String, storeIdentifier: String?, rowID: Int64) {
        self.init(scope: IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier), rowID: rowID)
    }

    package init(scope: IdentifierScope, rowID: Int64) {
        self.scope = scope
        self.rowID = rowID
    }

    /// The primary key a custom store gave the object (`identifier(for:entityName:primaryKey:)`),
    /// as its description; nil for Strata's own stores, whose identifiers name a row.
    public var primaryKey: String? { scope.primaryKey }

    /// True for an object that was never saved to a store.
    public var isTemporary: Bool { rowID < 0 }

    /// The identifier a custom store gives an object it keeps: its store, its model and its
    /// primary key (compared by its description).
    ///
    /// ```swift
    /// let id = try PersistentIdentifier.identifier(for: store.identifier, entityName: "Trip", primaryKey: UUID())
    /// ```
    /// Same as SwiftData's `PersistentIdentifier.identifier(for:entityName:primaryKey:)`.
    public static func identifier<T>(for storeIdentifier: String, entityName: String, primaryKey: T) throws -> PersistentIdentifier
        where T: Comparable, T: CustomStringConvertible, T: Decodable, T: Encodable, T: Hashable {
        PersistentIdentifier(scope: IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey.description), rowID: 0)
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.rowID == b.rowID && (a.scope === b.scope
            || (a.entityName == b.entityName && a.storeIdentifier == b.storeIdentifier && a.primaryKey == b.primaryKey))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(scope.hash)
        hasher.combine(rowID)
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.entityName, a.storeIdentifier ?? "", a.primaryKey ?? "", a.rowID) < (b.entityName, b.storeIdentifier ?? "", b.primaryKey ?? "", b.rowID)
    }

    public var description: String {
        "\(entityName)/\(primaryKey ?? String(rowID))\(storeIdentifier.map { "@\($0)" } ?? "")"
    }

    private enum CodingKeys: String, CodingKey { case entityName, storeIdentifier, rowID, primaryKey }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(scope: IdentifierScope(entityName: try c.decode(String.self, forKey: .entityName),
                                         storeIdentifier: try c.decodeIfPresent(String.self, forKey: .storeIdentifier),
                                         primaryKey: try c.decodeIfPresent(String.self, forKey: .primaryKey)),
                  rowID: try c.decodeIfPresent(Int64.self, forKey: .rowID) ?? 0)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entityName, forKey: .entityName)
        try c.encodeIfPresent(storeIdentifier, forKey: .storeIdentifier)
        try c.encodeIfPresent(primaryKey, forKey: .primaryKey)
        try c.encode(rowID, forKey: .rowID)
    }
}

/// A model in a store, as its identifiers name it: one per table (`StoreHandle`), shared; or,
/// for an identifier a custom store made, that identifier's own, with its primary key.
package final class IdentifierScope: Sendable {
    package let entityName: String
    package let storeIdentifier: String?
    package let primaryKey: String?
    /// The three strings hashed once (equal scopes hash equally in a process): an identifier's
    /// hash is then this and its row, not three strings each time (a custom store's identifiers
    /// each have a scope, and a save hashes each several times).
    package let hash: Int

    package init(entityName: String, storeIdentifier: String?, primaryKey: String? = nil) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        var hasher = Hasher()
        hasher.combine(entityName)
        hasher.combine(storeIdentifier)
        hasher.combine(primaryKey)
        hash = hasher.finalize()
    }
}
