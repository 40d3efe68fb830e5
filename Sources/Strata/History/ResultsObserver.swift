import Foundation
import Observation
@_spi(StorageBackend) import StrataRecords

/// The results of a `FetchDescriptor`, kept up to date: after every save through any context
/// of the container, and every commit another container or another process makes to the
/// store (noticed within about 20 ms, `Docs/History.md`), `results` is fetched again and its
/// observers told. Each fetch reads one whole commit, so the results never show part of a
/// save. The non-UI form of `@Query`. Same as SwiftData's `ResultsObserver` (iOS 27).
///
/// ```swift
/// @MainActor final class TripList {
///     let observer: ResultsObserver<Trip, Never>
///     init(container: ModelContainer) throws {
///         observer = try ResultsObserver(fetchDescriptor: FetchDescriptor(sortBy: [SortDescriptor(\.name)]),
///                                        modelContainer: container)
///     }
/// }
/// ```
/// Make it on the actor that reads it (the main actor, or an actor of your own): it refetches
/// there. With `sectionBy:` (a `String` or `String?` key path), `sections` groups the results
/// by it, and the key path is the first sort. Differs from SwiftData: unsaved changes of its own context show at the next
/// commit, not before; an observer made from a container fetches through a new context each
/// time, so its objects hold the committed values, while one made from a context fetches
/// through that context (whose registered objects keep their values, as any fetch does).
public final class ResultsObserver<Element: PersistentModel, SectionTitle: Hashable>: Observable {
    private let registrar = ObservationRegistrar()
    private let container: ModelContainer
    /// The context fetches go through (nil: a new one of the container for each).
    private let givenContext: ModelContext?
    private var descriptor: FetchDescriptor<Element>
    private var current: FetchResultsCollection<Element>
    /// The hub generation the current results were fetched at.
    private(set) var generation: UInt64
    /// The hub's identifier of this observer's follower.
    private var follower: UInt64?
    /// The section key path's value of an object, and its sort (put first), when sectioned.
    private let sectionTitle: ((Element) -> SectionTitle)?
    private let sectionSort: SortDescriptor<Element>?
    private var currentSections: SectionedResults<Element, SectionTitle>?

    /// The context the results were fetched through. Same as SwiftData.
    public var modelContext: ModelContext { givenContext ?? lastContext }
    private var lastContext: ModelContext

    /// The results, as of the last commit. Same as SwiftData.
    public var results: FetchResultsCollection<Element> {
        get {
            registrar.access(self, keyPath: \.results)
            return current
        }
        set {
            registrar.withMutation(of: self, keyPath: \.results) { current = newValue }
        }
    }

    /// The results in sections by `sectionBy`, ordered by their first appearance; nil for an
    /// observer made without `sectionBy` (`SectionTitle == Never`). Same as SwiftData.
    public var sections: SectionedResults<Element, SectionTitle>? {
        get {
            registrar.access(self, keyPath: \.sections)
            return currentSections
        }
        set {
            registrar.withMutation(of: self, keyPath: \.sections) { currentSections = newValue }
        }
    }

    /// Why the last refetch failed (a failing disk, a lost server connection, a store being
    /// replaced), nil when it succeeded: `results` then still holds what the last successful
    /// fetch found, as of an older commit, and the next commit fetches again. Observable, so a
    /// view can say the results are stale rather than show them as current. Strata extra.
    public var fetchError: (any Error)? {
        registrar.access(self, keyPath: \.fetchError)
        return lastError
    }
    private var lastError: (any Error)?

    /// The descriptor the results follow. Same as SwiftData.
    public var fetchDescriptor: FetchDescriptor<Element> { descriptor }

    /// The predicate of the descriptor; setting it fetches again. Same as SwiftData.
    public var filterBy: Predicate<Element>? {
        get { descriptor.predicate }
        set {
            descriptor.predicate = newValue
            refresh()
        }
    }

    /// The sort of the descriptor (with the section key path first, when sectioned); setting
    /// it fetches again. Same as SwiftData.
    public var sortBy: [SortDescriptor<Element>] {
        get { descriptor.sortBy }
        set {
            descriptor.sortBy = Self.sorted(newValue, sectionSort)
            refresh()
        }
    }

    init(descriptor: FetchDescriptor<Element>, container: ModelContainer, context: ModelContext?, isolation: isolated (any Actor)?,
         sectionTitle: ((Element) -> SectionTitle)? = nil, sectionSort: SortDescriptor<Element>? = nil) throws {
        self.container = container
        self.givenContext = context
        var descriptor = descriptor
        descriptor.sortBy = Self.sorted(descriptor.sortBy, sectionSort)
        self.descriptor = descriptor
        self.sectionTitle = sectionTitle
        self.sectionSort = sectionSort
        self.generation = container.changeHub.generation
        let fetching = context ?? ModelContext(container)
        self.lastContext = fetching
        self.current = try fetching.fetch(descriptor, batchSize: Self.batchSize)
        self.currentSections = sectionTitle.map { SectionedResults(current, title: $0) }
        follower = startFollowing(self, container.changeHub, since: generation, isolation: isolation)
    }

    /// `sort` with the section's sort first (once).
    private static func sorted(_ sort: [SortDescriptor<Element>], _ section: SortDescriptor<Element>?) -> [SortDescriptor<Element>] {
        guard let section else { return sort }
        return [section] + sort.filter { $0 != section }
    }

    deinit { if let follower { container.changeHub.unfollow(follower) } }

    static var batchSize: Int { 1000 }

    /// Fetches again. When the fetch fails, the results are kept and `fetchError` says why;
    /// the next commit tries again.
    func refresh() {
        let generation = container.changeHub.generation
        let fetching = givenContext ?? ModelContext(container)
        let fetched: FetchResultsCollection<Element>
        do {
            fetched = try fetching.fetch(descriptor, batchSize: Self.batchSize)
        } catch {
            registrar.withMutation(of: self, keyPath: \.fetchError) { lastError = error }
            return
        }
        if lastError != nil { registrar.withMutation(of: self, keyPath: \.fetchError) { lastError = nil } }
        self.generation = generation
        lastContext = fetching
        results = fetched
        if let sectionTitle { sections = SectionedResults(fetched, title: sectionTitle) }
    }
}

extension ResultsObserver where SectionTitle == Never {
    /// An observer of `fetchDescriptor`'s results through `modelContext`. Same as SwiftData's
    /// `init(fetchDescriptor:modelContext:isolation:)`.
    /// - Throws: what the first fetch throws.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContext: ModelContext,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContext.container, context: modelContext, isolation: isolation)
    }

    /// An observer of `fetchDescriptor`'s results in `modelContainer`'s stores, through
    /// contexts of its own. Same as SwiftData's `init(fetchDescriptor:modelContainer:isolation:)`.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContainer: ModelContainer,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContainer, context: nil, isolation: isolation)
    }

    /// An observer of the objects `filterBy` selects, in `sortBy`'s order. Same as SwiftData's
    /// `init(filterBy:sortBy:modelContext:)`.
    public convenience init(filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>] = [], modelContext: ModelContext,
                            isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy), container: modelContext.container,
                      context: modelContext, isolation: isolation)
    }
}

extension ResultsObserver where SectionTitle == String {
    /// An observer of `fetchDescriptor`'s results through `modelContext`, in sections by
    /// `sectionBy` (its sort put first). Same as SwiftData's
    /// `init(fetchDescriptor:sectionBy:modelContext:isolation:)`.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String> & Sendable,
                            modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContext.container, context: modelContext, isolation: isolation,
                      sectionTitle: { $0[keyPath: sectionBy] }, sectionSort: SortDescriptor(sectionBy))
    }

    /// The same through contexts of its own of `modelContainer`. Same as SwiftData's
    /// `init(fetchDescriptor:sectionBy:modelContainer:isolation:)`.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String> & Sendable,
                            modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContainer, context: nil, isolation: isolation,
                      sectionTitle: { $0[keyPath: sectionBy] }, sectionSort: SortDescriptor(sectionBy))
    }
}

extension ResultsObserver where SectionTitle == String? {
    /// An observer in sections by an optional `sectionBy` (objects without a value form the
    /// section titled nil). Same as SwiftData's `init(fetchDescriptor:sectionBy:modelContext:isolation:)`.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?> & Sendable,
                            modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContext.container, context: modelContext, isolation: isolation,
                      sectionTitle: { $0[keyPath: sectionBy] }, sectionSort: SortDescriptor(sectionBy))
    }

    /// The same through contexts of its own of `modelContainer`. Same as SwiftData's
    /// `init(fetchDescriptor:sectionBy:modelContainer:isolation:)`.
    public convenience init(fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?> & Sendable,
                            modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation) throws {
        try self.init(descriptor: fetchDescriptor, container: modelContainer, context: nil, isolation: isolation,
                      sectionTitle: { $0[keyPath: sectionBy] }, sectionSort: SortDescriptor(sectionBy))
    }
}

/// What the follower calls (not generic, so that it captures no model type).
protocol RefetchingObserver: AnyObject {
    func refresh()
}

extension ResultsObserver: RefetchingObserver {}

/// The observer, unretained, for its follower.
private final class WeakObserver: @unchecked Sendable {
    weak var observer: (any RefetchingObserver)?
    init(_ observer: any RefetchingObserver) { self.observer = observer }
}

/// Registers the observer with the hub: each commit from now on refetches on its actor (see
/// `CommitFollower`), and one now if the hub saw a commit since `generation`, the results'.
/// Returns the identifier to unfollow with.
private func startFollowing(_ observer: any RefetchingObserver, _ hub: ChangeHub, since generation: UInt64,
                            isolation: isolated (any Actor)?) -> UInt64 {
    let weak = WeakObserver(observer)
    return hub.follow(CommitFollower(isolation: isolation) { weak.observer?.refresh() }, since: generation)
}
