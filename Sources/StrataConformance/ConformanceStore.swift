import Foundation
import Strata

/// What a kind of store does that not every kind does: a scenario that needs one is skipped, with
/// the reason the store gives, on a store that lacks it. Everything else is required of every store.
public enum ConformanceCapability: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// An insert whose single unique attribute (`@Attribute(.unique)`, named `code` in every
    /// scenario model) matches a stored object updates that object (an upsert across saves).
    /// Within one save the context merges such inserts itself: that is required of every store.
    case resolvesUniqueValues
    /// An insert's unique value is resolved against the store as the same save's updates leave
    /// it: a value an update gives up is free for the insert, and the insert wins over an update
    /// of the object it replaces.
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

    public init(name: String, lacks: [ConformanceCapability: String] = [:],
                fresh: @escaping @Sendable (_ schema: Schema, _ scenario: String) throws -> ConformanceSession) {
        self.name = name
        self.lacks = lacks
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
    let body: @Sendable (ScenarioEnvironment) throws -> Void

    init(_ name: String, from origin: String, requires: Set<ConformanceCapability> = [],
         _ body: @escaping @Sendable (ScenarioEnvironment) throws -> Void) {
        self.name = name
        self.origin = origin
        self.requires = requires
        self.body = body
    }

    /// Runs the scenario on `store` (whether or not the store has what it requires).
    public func run(_ store: ConformanceStore) throws {
        try body(ScenarioEnvironment(store: store, scenario: name))
    }
}

/// What a scenario ended with.
public enum ConformanceOutcome: Sendable, Equatable {
    case passed
    /// Not run: the store lacks a capability the scenario needs (the reason says which, and why).
    case skipped(reason: String)
}

/// A scenario's view of its store: fresh stores named after the scenario.
struct ScenarioEnvironment {
    let store: ConformanceStore
    let scenario: String

    /// A fresh, empty store for these models (and, as always, the models they reach).
    func open(_ types: any PersistentModel.Type...) throws -> ConformanceSession {
        try store.fresh(Schema(types), scenario)
    }

    func lacks(_ capability: ConformanceCapability) -> Bool { store.lacks[capability] != nil }
}
