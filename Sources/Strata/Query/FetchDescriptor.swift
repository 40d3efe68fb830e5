import Foundation
@_spi(StorageBackend) import StrataRecords

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
        get { predicateParts.flatMap { $0.predicate as? Predicate<T> } }
        set { predicateParts = PredicateParts(newValue) }
    }
    /// The order; empty for the order the objects were stored in.
    public var sortBy: [SortDescriptor<T>] {
        didSet { sortCount = sortBy.count }
    }
    /// At most this many objects; nil or 0 for no limit (0 means "no limit" in Core Data,
    /// which SwiftData is built on).
    public var fetchLimit: Int?
    /// Skip this many objects first.
    public var fetchOffset: Int?
    /// Include unsaved inserts and changes of the context (default true, as in SwiftData).
    public var includePendingChanges: Bool = true
    /// Load only these properties; the others load when first read (a fault).
    public var propertiesToFetch: [PartialKeyPath<T>] {
        get { loadedKeyPaths.map { unsafeDowncast($0, to: PartialKeyPath<T>.self) } }
        set { loadedKeyPaths = newValue }
    }
    /// Relationships to load up front.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] {
        get { prefetchedKeyPaths.map { unsafeDowncast($0, to: PartialKeyPath<T>.self) } }
        set { prefetchedKeyPaths = newValue }
    }

    // What the query layer reads, kept in types that are not generic: generic code that reads
    // a `Predicate<T>` or counts a `[PartialKeyPath<T>]` looks up type metadata each time
    // (Docs/Benchmarks.md, "Costs"), and a copy of a `Predicate<T>` (whose
    // parameter pack has no fixed layout) goes through value witnesses.
    /// The predicate's parts (`PredicateParts`).
    @usableFromInline var predicateParts: PredicateParts?
    /// `sortBy.count`.
    @usableFromInline var sortCount: Int
    /// `propertiesToFetch` and `relationshipKeyPathsForPrefetching`, as the key paths they are.
    var loadedKeyPaths: [AnyKeyPath] {
        get { keyPaths?.loaded ?? [] }
        set { keyPaths = FetchKeyPaths(loaded: newValue, prefetched: prefetchedKeyPaths) }
    }
    var prefetchedKeyPaths: [AnyKeyPath] {
        get { keyPaths?.prefetched ?? [] }
        set { keyPaths = FetchKeyPaths(loaded: loadedKeyPaths, prefetched: newValue) }
    }
    /// Both lists in one box, nil while both are empty: a descriptor with more than three
    /// reference-counted fields is copied through its type's value witness, and the caller
    /// looks up `FetchDescriptor<T>`'s metadata for it, which checks `T: PersistentModel` by
    /// a scan of every protocol conformance loaded (about 250k instructions, a tenth of a
    /// fresh process's first fetch, W8).
    @usableFromInline var keyPaths: FetchKeyPaths?

    @inlinable
    public init(predicate: consuming Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicateParts = PredicateParts(consume predicate)
        self.sortBy = sortBy
        self.sortCount = sortBy.count
    }

    /// The offset and limit as a fetch applies them.
    var paging: Paging { Paging(offset: fetchOffset, limit: fetchLimit) }
}

/// A descriptor's `propertiesToFetch` and `relationshipKeyPathsForPrefetching` (immutable:
/// a change makes a new box, so copies of a descriptor never share a change).
@usableFromInline
final class FetchKeyPaths {
    let loaded: [AnyKeyPath]
    let prefetched: [AnyKeyPath]

    init?(loaded: [AnyKeyPath], prefetched: [AnyKeyPath]) {
        if loaded.isEmpty && prefetched.isEmpty { return nil }
        self.loaded = loaded
        self.prefetched = prefetched
    }
}

/// What the query layer reads of a predicate, taken apart where its model type is known (the
/// descriptor's initializer is inlined into the caller, so it is specialized there). Not
/// generic: a fetch reads it, and a descriptor going away releases it, without looking up
/// type metadata.
@usableFromInline
final class PredicateParts {
    /// The expression tree, its type (the query cache's key) and the input variable's identity.
    @usableFromInline let expression: any StandardPredicateExpression<Bool>
    @usableFromInline let expressionType: ObjectIdentifier
    @usableFromInline let input: PredicateExpressions.VariableID
    /// The `Predicate<T>` itself, for `FetchDescriptor.predicate` and evaluation on objects.
    /// As `Any`, so that releasing it uses the value witnesses the existential carries.
    @usableFromInline let predicate: Any

    /// Nil for no predicate. (The predicate is taken, not copied: a copy of a `Predicate<T>`
    /// goes through value witnesses even where `T` is known.)
    @inlinable
    init?<T: PersistentModel>(_ predicate: consuming Predicate<T>?) {
        guard let predicate = consume predicate else { return nil }
        expression = predicate.expression
        expressionType = ObjectIdentifier(type(of: expression))
        input = predicate.variable.key
        self.predicate = consume predicate
    }

    /// The predicate as a function of an object of model `T` (the slow path, and unsaved objects).
    func evaluator<T: PersistentModel>(_: T.Type) -> (AnyObject) throws -> Bool {
        let predicate = predicate as? Predicate<T>
        precondition(predicate != nil, "A fetch of \(T.self) was given a predicate of another model.")
        return { object in try predicate.unsafelyUnwrapped.evaluate(unsafeDowncast(object, to: T.self)) }
    }
}
