import Foundation
import Strata

/// What a kind of store does that not every kind does: a scenario that needs one is skipped, with
/// the reason the store gives, on a store that lacks it. Everything else is required of every store.
public enum ConformanceCapability: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An insert whose single unique attribute (`@Attribute(.unique)`, named `code` in every
    /// scenario model) matches a stored object updates that object (an upsert across saves).
    /// Within one save the context merges such inserts itself: that is required of every store.
    case resolvesUniqueValues
    /// An insert's unique value is resolved against the store as the same save's deletions and
    /// updates leave it: a value a deletion or an update gives up is free for the insert, and the
    /// insert wins over an update of the object it replaces.
    case resolvesUniqueValuesAfterTheSavesUpdates
    /// The same for a compound constraint (`static var uniqueConstraints`).
    case resolvesCompoundUniqueValues
    /// A changed object that takes a unique value another object holds fails the save with
    /// `StrataError.uniqueConstraintViolation`, saving nothing.
    case rejectsUniqueViolations
    /// A save that changes or deletes an object that another container on the same store (as
    /// another process would) deleted fails with `StrataError.saveConflict` naming it, saving
    /// nothing. (Another context of the same container: required of every store.)
    case detectsSaveConflicts
    /// Saves are recorded in Strata's history (`fetchHistory`).
    case recordsHistory
    /// `delete(model:where:)` for a model without relationships, which no context object holds,
    /// is sent to the store as a batch deletion (`DataStoreBatching`) that it carries out.
    case acceptsBatchDeletes
    /// A `Date` comes back exactly (sub-second, before 1970, `distantPast`, `distantFuture`).
    /// Without it, whole seconds are kept: every other scenario uses whole-second dates only.
    case exactDates
    /// NaN and infinities (`Double`, `Float`, `Decimal.nan`) are stored and come back.
    case nonFiniteNumbers
    /// A string with the character U+0000 is stored and comes back. (PostgreSQL's text cannot
    /// hold it: there the save fails with a typed error instead, saving nothing.)
    case nulInStrings
    /// A fetch without a sort gives the objects in the same order each time (so that pages of
    /// an unsorted fetch make the whole). Sorted fetches are required to page right everywhere.
    case stableUnsortedOrder
    /// An identifier saved by one container names the same object in another container on the
    /// same store (`model(for:)`, `persistentModelID ==` predicates).
    case stableIdentifiers
    /// A container's observers (`ResultsObserver`, `historyChanges()`, `HistoryObserver`) follow
    /// the commits another container on the same store makes (as another process would). (The
    /// commits of the container's own contexts: required of every store.) A custom store does it
    /// by being an `ObservableDataStore`.
    case followsOtherWriters
    /// A context reads the store (`fetchCount`, from another thread) while another context's save
    /// writes it, and finds each save whole or not at all.
    case readsDuringSaves
    /// `fetch(_:batchSize:)`'s later batches hold the objects as the fetch found them, even
    /// after another context deleted or changed them (the engine reads one snapshot; a custom
    /// store that does not fetch in batches answers every object at once). A store that fetches
    /// in batches (`DataStoreBatchedFetching`) reads each batch when it is first subscripted,
    /// as the rows are then, to hold one batch in memory.
    case batchesReadOneSnapshot

    public var description: String { rawValue }
}

/// How the scenarios get containers on one kind of store. The store-specific test file makes it:
///
/// ```swift
/// let engine = ConformanceStore(name: "engine") { schema, scenario in
///     let url = folder.appendingPathComponent("\(scenario)-\(UUID()).store")
///     return ConformanceSession(container: try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)]),
///                               reopen: { try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)]) })
/// }
/// for scenario in Conformance.scenarios { try Conformance.run(scenario.name, on: engine) }
/// ```
public struct ConformanceStore: Sendable {
    /// "engine", "json", "postgres"...
    public let name: String
    /// The capabilities this kind of store lacks, each with the reason (shown when a scenario
    /// that needs it is skipped). A store lacks nothing by default.
    public let lacks: [ConformanceCapability: String]
    /// A container for `schema` on a fresh, empty store for the scenario named `scenario`.
    /// Each call gives a new empty store (a scenario may call it more than once).
    public let fresh: @Sendable (_ schema: Schema, _ scenario: String) throws -> ConformanceSession
    /// What share of their random cases the two randomized scenarios (the planner's and the
    /// graph's differential tests) run on this store: 1, all of them, by default. A test store
    /// that answers every fetch by reading and sorting all its objects in memory may run fewer,
    /// so that the test run stays short; each phase still runs at least one case.
    public let randomCaseShare: Double

    public init(name: String, lacks: [ConformanceCapability: String] = [:], randomCaseShare: Double = 1,
                fresh: @escaping @Sendable (_ schema: Schema, _ scenario: String) throws -> ConformanceSession) {
        self.name = name
        self.lacks = lacks
        self.randomCaseShare = randomCaseShare
        self.fresh = fresh
    }

    /// Why this store skips a scenario that needs `requirements`, or nil if it runs it.
    public func skipReason(for requirements: Set<ConformanceCapability>) -> String? {
        let missing = requirements.filter { lacks[$0] != nil }.sorted { $0.rawValue < $1.rawValue }
        guard !missing.isEmpty else { return nil }
        return missing.map { "\(name) lacks \($0): \(lacks[$0]!)" }.joined(separator: "; ")
    }
}

/// One scenario's store: its first container, and how to open another container on the SAME
/// store (to check what was persisted, or to act as a second process would).
public struct ConformanceSession {
    public let container: ModelContainer
    public let reopen: () throws -> ModelContainer

    public init(container: ModelContainer, reopen: @escaping () throws -> ModelContainer) {
        self.container = container
        self.reopen = reopen
    }
}

/// A scenario: a name, the root test it comes from, what it needs of a store, and its body.
public struct ConformanceScenario: Sendable {
    public let name: String
    /// The root package test(s) it was ported from.
    public let origin: String
    public let requires: Set<ConformanceCapability>
    let body: Body

    enum Body: Sendable {
        /// Runs to its end on the caller's thread.
        case sync(@Sendable (ScenarioEnvironment) throws -> Void)
        /// Waits for events (Events.swift): runs on a `ScenarioActor`. `usesGlobalExecutor`: the
        /// events come through tasks Strata starts on Swift's global executor (`ResultsObserver`,
        /// `HistoryObserver`), so the blocking `run(_:)` cannot wait for them on a thread of it.
        case events(usesGlobalExecutor: Bool, @Sendable (ScenarioEnvironment, isolated ScenarioActor) async throws -> Void)
    }

    init(_ name: String, from origin: String, requires: Set<ConformanceCapability> = [],
         _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
        self.name = name
        self.origin = origin
        self.requires = requires
        self.body = .sync(body)
    }

    /// A scenario that waits for events, each for at most `Conformance.eventBound`.
    init(_ name: String, from origin: String, requires: Set<ConformanceCapability> = [], usesGlobalExecutor: Bool = false,
         events body: @escaping @Sendable (ScenarioEnvironment, isolated ScenarioActor) async throws -> Void) {
        self.name = name
        self.origin = origin
        self.requires = requires
        self.body = .events(usesGlobalExecutor: usesGlobalExecutor, body)
    }

    /// True for a scenario that waits for events (observers, history streams, model actors):
    /// run it with `await run(_:)`.
    public var waitsForEvents: Bool {
        if case .events = body { return true }
        return false
    }

    /// Runs the scenario on `store` (whether or not the store has what it requires). Every
    /// scenario can run this way; a store's test should, so that a scenario that waits for events
    /// never holds a thread of Swift's global executor while it waits.
    public func run(_ store: ConformanceStore) async throws {
        let environment = ScenarioEnvironment(store: store, scenario: name)
        switch body {
        case .sync(let body):
            try body(environment)
        case .events(_, let body):
            try await ScenarioActor.run(body, environment)
        }
    }

    /// Runs the scenario on `store`, blocking the calling thread until it ends. A scenario that
    /// waits for events whose events come through tasks of Swift's global executor (whose threads,
    /// one per core, the blocked caller may be one of) fails at once with a `ConformanceFailure`
    /// asking for `await run(_:)`, unless the caller is on the main thread or in no task.
    public func run(_ store: ConformanceStore) throws {
        let environment = ScenarioEnvironment(store: store, scenario: name)
        switch body {
        case .sync(let body):
            try body(environment)
        case .events(let usesGlobalExecutor, let body):
            if usesGlobalExecutor && !Thread.isMainThread && withUnsafeCurrentTask(body: { $0 != nil }) {
                throw ConformanceFailure("\(name) waits for events that tasks of Swift's global executor deliver: blocking a thread of that executor "
                                         + "while it waits can starve them (every thread waiting so). Run it with `try await scenario.run(store)` "
                                         + "from an async test", file: #filePath, line: #line)
            }
            try ScenarioActor.runBlocking(body, environment)
        }
    }
}

/// What a scenario ended with.
public enum ConformanceOutcome: Sendable, Equatable {
    case passed
    /// Not run: the store lacks a capability the scenario needs (the reason says which, and why).
    case skipped(reason: String)
}

/// A scenario's view of its store: fresh stores named after the scenario.
struct ScenarioEnvironment: Sendable {
    let store: ConformanceStore
    let scenario: String

    /// `count` random cases, as many as the store runs (`ConformanceStore.randomCaseShare`), at least one.
    func randomCases(_ count: Int) -> Int { scaledCases(count, store.randomCaseShare) }

    /// A fresh, empty store for these models. List every model the scenario uses, related ones
    /// too: a store whose configuration is given the schema (PostgreSQL's) keeps the listed models
    /// only (`ModelContainer`), and an object of another model is unknown to the container.
    func open(_ types: any PersistentModel.Type...) throws -> ConformanceSession {
        try store.fresh(Schema(types), scenario)
    }

    func lacks(_ capability: ConformanceCapability) -> Bool { store.lacks[capability] != nil }
}

/// `count` cases scaled by `share`, rounded, and at least one (a phase of a randomized scenario
/// always runs).
func scaledCases(_ count: Int, _ share: Double) -> Int { max(1, Int((Double(count) * share).rounded())) }
