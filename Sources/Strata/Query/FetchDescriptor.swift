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
        @inlinable get { predicateParts.flatMap { $0.predicate as? Predicate<T> } }
        @inlinable set { predicateParts = PredicateParts(newValue) }
    }
    /// The order; empty for the order the objects were stored in.
    public var sortBy: [SortDescriptor<T>] {
        @inlinable get { sorts }
        @inlinable set {
            sorts = newValue
            flags.sortCount = newValue.count
        }
    }
    /// At most this many objects; nil or 0 for no limit (0 means "no limit" in Core Data,
    /// which SwiftData is built on).
    public var fetchLimit: Int?
    /// Skip this many objects first.
    public var fetchOffset: Int?
    /// Include unsaved inserts and changes of the context (default true, as in SwiftData).
    public var includePendingChanges: Bool {
        @inlinable @inline(__always) get { flags.includePendingChanges }
        @inlinable set { flags.includePendingChanges = newValue }
    }
    /// Load only these properties; the others load when first read (a fault).
    public var propertiesToFetch: [PartialKeyPath<T>] {
        @inlinable get { loadedKeyPaths.map { unsafeDowncast($0, to: PartialKeyPath<T>.self) } }
        @inlinable set { loadedKeyPaths = newValue }
    }
    /// Relationships to load up front.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] {
        @inlinable get { prefetchedKeyPaths.map { unsafeDowncast($0, to: PartialKeyPath<T>.self) } }
        @inlinable set { prefetchedKeyPaths = newValue }
    }

    // What the query layer reads, kept in types that are not generic: generic code that reads
    // a `Predicate<T>` or counts a `[PartialKeyPath<T>]` looks up type metadata each time
    // (Docs/Benchmarks.md, "Costs"), and a copy of a `Predicate<T>` (whose
    // parameter pack has no fixed layout) goes through value witnesses.
    //
    // The accessors are inlinable for the same reason: a call of a generic accessor takes
    // `FetchDescriptor<T>`'s metadata, looked up by name in the caller.
    //
    // Six stored values, no more. A struct of seven or more (counting the fields of the
    // structs inside it) is copied and destroyed through its type's value witnesses, and a
    // descriptor made in the caller then makes the caller look up `FetchDescriptor<T>`'s
    // metadata by name, which checks `T: PersistentModel` by a scan of every protocol
    // conformance loaded: about 250k instructions, a tenth of a fresh process's open and first
    // fetch (W8). So the two key-path lists share one box, and `sortBy.count` and
    // `includePendingChanges` one integer. (Found by compiling callers with `-emit-assembly`
    // and counting their calls of "outlined init with copy of FetchDescriptor"; Docs/Benchmarks.md.)
    /// The predicate's parts (`PredicateParts`).
    @usableFromInline var predicateParts: PredicateParts?
    /// `sortBy`.
    @usableFromInline var sorts: [SortDescriptor<T>]
    /// `sortBy.count` and `includePendingChanges`.
    @usableFromInline var flags: FetchFlags
    /// Both key-path lists, nil while both are empty.
    @usableFromInline var keyPaths: FetchKeyPaths?

    /// `sortBy.count`. (Always inlined, as the other accessors the query layer reads: a call of
    /// a getter from unspecialized generic code looks `FetchDescriptor<T>`'s metadata up, about
    /// 160 instructions, W3.)
    var sortCount: Int {
        @inline(__always) get { flags.sortCount }
    }
    /// `propertiesToFetch` and `relationshipKeyPathsForPrefetching`, as the key paths they are.
    @usableFromInline var loadedKeyPaths: [AnyKeyPath] {
        @inlinable @inline(__always) get { keyPaths?.loaded ?? [] }
        @inlinable set { keyPaths = FetchKeyPaths(loaded: newValue, prefetched: prefetchedKeyPaths) }
    }
    @usableFromInline var prefetchedKeyPaths: [AnyKeyPath] {
        @inlinable @inline(__always) get { keyPaths?.prefetched ?? [] }
        @inlinable set { keyPaths = FetchKeyPaths(loaded: loadedKeyPaths, prefetched: newValue) }
    }

    @inlinable
    public init(predicate: consuming Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicateParts = PredicateParts(consume predicate)
        self.sorts = sortBy
        self.flags = FetchFlags(sortCount: sortBy.count)
    }

    /// The offset and limit as a fetch applies them.
    var paging: Paging { Paging(offset: fetchOffset, limit: fetchLimit) }
}

/// A descriptor's `sortBy.count` and `includePendingChanges`, in one stored value (see
/// `FetchDescriptor`'s fields): the count shifted left by one, and the low bit set when pending
/// changes are left out.
@usableFromInline
struct FetchFlags {
    @usableFromInline var bits: Int

    @inlinable
    init(sortCount: Int) { bits = sortCount << 1 }

    @usableFromInline var sortCount: Int {
        @inlinable @inline(__always) get { bits >> 1 }
        @inlinable set { bits = newValue << 1 | bits & 1 }
    }

    @usableFromInline var includePendingChanges: Bool {
        @inlinable @inline(__always) get { bits & 1 == 0 }
        @inlinable set { bits = bits & ~1 | (newValue ? 0 : 1) }
    }
}

/// A descriptor's `propertiesToFetch` and `relationshipKeyPathsForPrefetching` (immutable:
/// a change makes a new box, so copies of a descriptor never share a change).
@usableFromInline
final class FetchKeyPaths {
    @usableFromInline let loaded: [AnyKeyPath]
    @usableFromInline let prefetched: [AnyKeyPath]

    @inlinable
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
