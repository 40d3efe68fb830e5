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
