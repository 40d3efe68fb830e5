import Foundation

/// Identifies one stored object: its model (entity), its store and its row.
/// Same as SwiftData's `PersistentIdentifier` (Hashable, Comparable, Codable, Sendable).
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The model's name (its class name).
    public let entityName: String
    /// The store (configuration) the object lives in; nil for a temporary identifier.
    public let storeIdentifier: String?
    /// The row id in the store; negative for a temporary identifier.
    public let rowID: Int64

    init(entityName: String, storeIdentifier: String?, rowID: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.rowID = rowID
    }

    /// True for an object that was never inserted into a context.
    public var isTemporary: Bool { rowID < 0 }

    public static func < (a: Self, b: Self) -> Bool {
        (a.entityName, a.storeIdentifier ?? "", a.rowID) < (b.entityName, b.storeIdentifier ?? "", b.rowID)
    }

    public var description: String { "\(entityName)/\(rowID)\(storeIdentifier.map { "@\($0)" } ?? "")" }
}
