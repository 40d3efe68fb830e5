import Foundation
@_spi(StorageBackend) import StrataRecords

/// A position in a store's history: the token of one transaction. Store it (it is `Codable`)
/// and fetch what came after it next time: `HistoryDescriptor` with
/// `#Predicate { $0.token > saved }`. Tokens of one store compare in commit order.
/// Same as SwiftData's `DefaultHistoryToken`.
public struct DefaultHistoryToken: Comparable, Codable, Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// The transaction's number in its store: it grows by one with each recorded transaction.
    public let tokenValue: Int64
    /// The identifier of the store the token belongs to (written in the store when it was
    /// made; it stays when the file is moved or copied).
    public let storeIdentifier: String

    public init(tokenValue: Int64, storeIdentifier: String) {
        self.tokenValue = tokenValue
        self.storeIdentifier = storeIdentifier
    }

    public var id: Self { self }

    /// Tokens of one store compare by their order; tokens of different stores by store first.
    public static func < (a: Self, b: Self) -> Bool {
        (a.storeIdentifier, a.tokenValue) < (b.storeIdentifier, b.tokenValue)
    }

    /// `<tokenValue>@<storeIdentifier>`, as `strata history --since` takes it.
    public var description: String { "\(tokenValue)@\(storeIdentifier)" }

    /// Reads `description`'s form (or a bare number, for `store`).
    public init?(_ text: String, store: String? = nil) {
        let parts = text.split(separator: "@", maxSplits: 1)
        guard let value = parts.first.flatMap({ Int64($0) }) else { return nil }
        guard let storeIdentifier = parts.count == 2 ? String(parts[1]) : store else { return nil }
        self.init(tokenValue: value, storeIdentifier: storeIdentifier)
    }
}
