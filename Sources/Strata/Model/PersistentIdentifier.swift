import Foundation

/// Identifies one stored object: its model (entity), its store and its row.
/// Same as SwiftData's `PersistentIdentifier` (Hashable, Comparable, Codable, Sendable).
///
/// Two words: the row, and the model-and-store pair, which the identifiers of one model in one
/// store share (`IdentifierScope`), so that the identifiers a save reports for a million
/// objects take 16 bytes each.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    let scope: IdentifierScope
    /// The row id in the store; negative for a temporary identifier.
    public let rowID: Int64

    /// The model's name (its class name).
    public var entityName: String { scope.entityName }
    /// The store the object lives in: the identifier written in the store when it was made
    /// (it stays when the file moves); nil for a temporary identifier.
    public var storeIdentifier: String? { scope.storeIdentifier }

    init(entityName: String, storeIdentifier: String?, rowID: Int64) {
        self.init(scope: IdentifierScope(entityName: entityName, storeIdentifier: storeIdentifier), rowID: rowID)
    }

    init(scope: IdentifierScope, rowID: Int64) {
        self.scope = scope
        self.rowID = rowID
    }

    /// True for an object that was never inserted into a context.
    public var isTemporary: Bool { rowID < 0 }

    public static func == (a: Self, b: Self) -> Bool {
        a.rowID == b.rowID && (a.scope === b.scope || (a.entityName == b.entityName && a.storeIdentifier == b.storeIdentifier))
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(entityName)
        hasher.combine(storeIdentifier)
        hasher.combine(rowID)
    }

    public static func < (a: Self, b: Self) -> Bool {
        (a.entityName, a.storeIdentifier ?? "", a.rowID) < (b.entityName, b.storeIdentifier ?? "", b.rowID)
    }

    public var description: String { "\(entityName)/\(rowID)\(storeIdentifier.map { "@\($0)" } ?? "")" }

    private enum CodingKeys: String, CodingKey { case entityName, storeIdentifier, rowID }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(entityName: try c.decode(String.self, forKey: .entityName),
                  storeIdentifier: try c.decodeIfPresent(String.self, forKey: .storeIdentifier),
                  rowID: try c.decode(Int64.self, forKey: .rowID))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(entityName, forKey: .entityName)
        try c.encodeIfPresent(storeIdentifier, forKey: .storeIdentifier)
        try c.encode(rowID, forKey: .rowID)
    }
}

/// A model in a store, as its identifiers name it: one per table (`StoreHandle`), shared.
final class IdentifierScope: Sendable {
    let entityName: String
    let storeIdentifier: String?

    init(entityName: String, storeIdentifier: String?) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
    }
}
