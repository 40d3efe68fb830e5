import Foundation
@_spi(StorageBackend) import StrataRecords

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
