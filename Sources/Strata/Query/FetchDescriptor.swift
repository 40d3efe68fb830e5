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
    public var predicate: Predicate<T>? {
        didSet { predicateParts = predicate.map(PredicateParts.init) }
    }
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

    /// The predicate's parts as the query layer reads them (`PredicateParts`).
    @usableFromInline var predicateParts: PredicateParts?

    @inlinable
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.predicateParts = predicate.map(PredicateParts.init)
    }

    /// The offset and limit as a fetch applies them.
    var paging: Paging { Paging(offset: fetchOffset, limit: fetchLimit) }
}

/// What the query layer reads of a predicate, taken apart where its model type is known (the
/// descriptor's initializer is inlined into the caller, so it is specialized there): a fetch
/// then copies no `Predicate<T>`, which in generic code looks up type metadata for every copy.
@usableFromInline
struct PredicateParts {
    /// The expression tree, the input variable's identity, and the predicate evaluated on an
    /// object of the model.
    @usableFromInline let expression: any StandardPredicateExpression<Bool>
    @usableFromInline let input: PredicateExpressions.VariableID
    @usableFromInline let evaluate: (AnyObject) throws -> Bool

    @inlinable
    init<T: PersistentModel>(_ predicate: Predicate<T>) {
        expression = predicate.expression
        input = predicate.variable.key
        evaluate = { object in try predicate.evaluate(unsafeDowncast(object, to: T.self)) }
    }
}
