import Foundation
import Synchronization

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
    public var primaryKey: String? { scope.keyIsRow ? String(rowID) : scope.primaryKey }

    /// True for an identifier a custom store made (`primaryKey` is not nil), without writing
    /// the key out.
    package var hasPrimaryKey: Bool { scope.keyIsRow || scope.primaryKey != nil }

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
        // A positive `Int64` or `Int` key (a PostgreSQL row's `bigint` id) is the row as it is:
        // not written out as text and read back for each identifier a fetch makes. The same
        // identifier as from its description.
        if T.self == Int64.self || T.self == Int.self {
            let key = T.self == Int64.self ? unsafeBitCast(primaryKey, to: Int64.self) : Int64(unsafeBitCast(primaryKey, to: Int.self))
            if key > 0 {
                return PersistentIdentifier(scope: IdentifierScope.keyedByRow(entityName: entityName, storeIdentifier: storeIdentifier), rowID: key)
            }
        }
        return PersistentIdentifier(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey.description)
    }

    /// A custom store's identifier, by its primary key's description. A key that is a positive
    /// integer written plainly (`42`, not `042`) is kept as the row, under the scope that all
    /// such identifiers of the model in the store share: made without an allocation, hashed
    /// and compared as a row (a PostgreSQL store's identifiers are its rows' `bigint` ids).
    /// Any other key gets a scope of its own, as it is compared by its text.
    package init(entityName: String, storeIdentifier: String?, primaryKey: String) {
        if let row = IdentifierScope.row(primaryKey) {
            self.init(scope: IdentifierScope.keyedByRow(entityName: entityName, storeIdentifier: storeIdentifier), rowID: row)
        } else {
            self.init(scope: IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey), rowID: 0)
        }
    }

    public static func == (a: Self, b: Self) -> Bool {
        // Equal scopes hash equally: scopes of one hash are compared by their strings.
        a.rowID == b.rowID && (a.scope === b.scope
            || (a.scope.hash == b.scope.hash && a.scope.keyIsRow == b.scope.keyIsRow && a.entityName == b.entityName
                && a.storeIdentifier == b.storeIdentifier && a.scope.primaryKey == b.scope.primaryKey))
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
        let entityName = try c.decode(String.self, forKey: .entityName)
        let storeIdentifier = try c.decodeIfPresent(String.self, forKey: .storeIdentifier)
        if let primaryKey = try c.decodeIfPresent(String.self, forKey: .primaryKey) {
            // As `identifier(for:entityName:primaryKey:)` makes it (an integer key's row was
            // written as 0 before such keys were kept as rows).
            self.init(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey)
        } else {
            self.init(scope: IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier),
                      rowID: try c.decodeIfPresent(Int64.self, forKey: .rowID) ?? 0)
        }
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
    /// A custom store's scope whose identifiers' primary keys are their rows (positive
    /// integers, `keyedByRow`).
    package let keyIsRow: Bool
    /// The three strings hashed once (equal scopes hash equally in a process): an identifier's
    /// hash is then this and its row, not three strings each time (a custom store's identifiers
    /// each have a scope, and a save hashes each several times).
    package let hash: Int

    package convenience init(entityName: String, storeIdentifier: String?, primaryKey: String? = nil) {
        self.init(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: primaryKey, keyIsRow: false)
    }

    private init(entityName: String, storeIdentifier: String?, primaryKey: String?, keyIsRow: Bool) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        self.keyIsRow = keyIsRow
        var hasher = Hasher()
        hasher.combine(entityName)
        hasher.combine(storeIdentifier)
        hasher.combine(primaryKey)
        hasher.combine(keyIsRow)
        hash = hasher.finalize()
    }

    /// The row a primary key's description names: a positive integer without a sign or a
    /// leading zero, that fits an `Int64`.
    package static func row(_ key: String) -> Int64? {
        var key = key
        return key.withUTF8 { bytes -> Int64? in
            guard let first = bytes.first, first >= UInt8(ascii: "1"), first <= UInt8(ascii: "9"), bytes.count <= 19 else { return nil }
            var value: Int64 = 0
            for byte in bytes {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                guard !o1, !o2 else { return nil }
                value = next
            }
            return value
        }
    }

    private struct Key: Hashable {
        let entityName: String
        let storeIdentifier: String?
    }

    private struct KeyedByRow {
        var scopes: [Key: IdentifierScope] = [:]
        /// The scope asked for last: a fetch asks for one model's, row after row, with the same
        /// strings, which compare equal at once (same storage) where hashing them took a
        /// tenth of each identifier.
        var last: IdentifierScope?
    }

    private static let keyedByRow = Mutex(KeyedByRow())

    /// The scope of a model's identifiers in a custom store whose primary keys are rows, one
    /// for the process's life.
    package static func keyedByRow(entityName: String, storeIdentifier: String?) -> IdentifierScope {
        keyedByRow.withLock { state in
            if let last = state.last, last.entityName == entityName, last.storeIdentifier == storeIdentifier { return last }
            let key = Key(entityName: entityName, storeIdentifier: storeIdentifier)
            if let found = state.scopes[key] {
                state.last = found
                return found
            }
            let scope = IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: nil, keyIsRow: true)
            state.scopes[key] = scope
            state.last = scope
            return scope
        }
    }
}
