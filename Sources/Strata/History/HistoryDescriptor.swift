import Foundation
import StrataRecords

/// Which transactions `fetchHistory(_:)` returns and in what order, or which
/// `deleteHistory(_:)` deletes: a predicate over the transaction (`token`, `author`,
/// `timestamp`, ...), a sort (default: commit order) and a limit. Same as SwiftData's
/// `HistoryDescriptor`.
///
/// ```swift
/// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved })
/// descriptor.fetchLimit = 100
/// let transactions = try context.fetchHistory(descriptor)
/// ```
public struct HistoryDescriptor<TransactionType: HistoryTransaction> {
    public var predicate: Predicate<TransactionType>?
    public var sortBy: [SortDescriptor<TransactionType>]
    /// At most this many transactions (the first ones in the sort order).
    public var fetchLimit: Int?

    public init(predicate: Predicate<TransactionType>? = nil) {
        self.predicate = predicate
        self.sortBy = []
        self.fetchLimit = nil
    }

    public init(predicate: Predicate<TransactionType>? = nil, sortBy: [SortDescriptor<TransactionType>]) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = nil
    }
}

/// How much history a store keeps. Strata extra, set on the configuration:
/// `configuration.historyRetention = .transactions(100_000)` or `.off` (no history is
/// recorded; `fetchHistory` returns what earlier saves recorded). Each save that records a
/// transaction past the limit prunes the oldest ones in the same commit, a batch at a time;
/// fetching after a pruned token throws `historyTokenExpired`.
public struct HistoryRetention: Hashable, Sendable, CustomStringConvertible {
    /// The most transactions kept (nil: no limit); 0 records none.
    public let limit: Int?

    /// The last 10,000 transactions (the default).
    public static let `default` = HistoryRetention(limit: 10_000)
    /// No history is recorded.
    public static let off = HistoryRetention(limit: 0)
    /// Every transaction is kept until `deleteHistory(_:)` deletes it.
    public static let unlimited = HistoryRetention(limit: nil)
    /// The last `count` transactions.
    public static func transactions(_ count: Int) -> HistoryRetention { HistoryRetention(limit: max(0, count)) }

    public var isRecording: Bool { limit != 0 }

    public var description: String { limit.map { $0 == 0 ? "off" : "last \($0) transactions" } ?? "unlimited" }
}
