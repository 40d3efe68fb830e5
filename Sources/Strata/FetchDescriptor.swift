import Foundation

/// What to fetch: a predicate, a sort order, and paging. Same as SwiftData's `FetchDescriptor`.
///
/// ```swift
/// var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.budget ?? 0 > 1000 },
///                                        sortBy: [SortDescriptor(\.startDate, order: .reverse)])
/// descriptor.fetchLimit = 20
/// let trips = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: PersistentModel> {
    /// Which objects; nil for all. Any predicate Foundation can evaluate works.
    public var predicate: Predicate<T>?
    /// The order; empty for the order the objects were stored in.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many objects; nil or 0 for no limit (0 means "no limit" in Core Data,
    /// which SwiftData is built on).
    public var fetchLimit: Int?
    /// Skip this many objects first.
    public var fetchOffset: Int?
    /// Include unsaved inserts and changes of the context (default true, as in SwiftData).
    public var includePendingChanges: Bool = true
    /// Load only these properties; the others load when first read (a fault).
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// Relationships to load up front.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// The offset and limit as a fetch applies them.
    var paging: Paging { Paging(offset: fetchOffset, limit: fetchLimit) }
}

/// A descriptor's `fetchOffset` and `fetchLimit` made safe for arithmetic: any `Int` a caller
/// passes (`Int.max`, `Int.min`, negatives) pages without overflowing.
struct Paging {
    /// How many results to skip: 0 for nil or negative.
    let offset: Int
    /// At most this many results; nil for none (nil, zero or negative: Core Data's "no limit").
    let limit: Int?

    init(offset: Int?, limit: Int?) {
        self.offset = Swift.max(0, offset ?? 0)
        self.limit = limit.flatMap { $0 > 0 ? $0 : nil }
    }

    /// How many results in order must be found to serve the page (`offset + limit`), or nil
    /// when that is all of them (no limit, or a sum past `Int.max`).
    var needed: Int? {
        guard let limit else { return nil }
        let (sum, overflow) = offset.addingReportingOverflow(limit)
        return overflow ? nil : sum
    }

    /// The page of `all`.
    func apply<C: RandomAccessCollection>(_ all: C) -> [C.Element] where C.Index == Int {
        let start = all.startIndex + Swift.min(offset, all.count)
        let available = all.endIndex - start
        let end = start + Swift.min(available, limit ?? available)
        return Array(all[start..<end])
    }

    /// How many results a page of `total` results holds.
    func count(ofTotal total: Int) -> Int {
        let left = Swift.max(0, total - offset)
        return Swift.min(left, limit ?? left)
    }
}
