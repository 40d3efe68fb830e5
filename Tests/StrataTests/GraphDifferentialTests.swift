import Foundation
import Testing
import Strata
import StrataConformance
import StrataTestSupport

// The differential test of PlannerDifferentialTests, extended to object graphs: owners with
// pets (one-to-many, cascade), pets with tags (many-to-many), owners with a friend
// (self-referential to-one without an inverse). A seeded random graph is saved to an on-disk
// store and reopened; random predicates through relationships (to-one key paths, to-many
// subqueries, `persistentModelID`), random sorts (including by a to-one key path) and pages
// are answered by Strata and by Foundation (`filter { try predicate.evaluate($0) }`,
// `sorted(using:)`, offset, limit) over the same objects. Between rounds, random mutations
// (either side of a relationship, cascades, batch deletes) are mirrored in a plain shadow
// graph, and after every save and every reopen the objects must match the shadow: both sides
// of every relationship agree, to-many orders are kept, nothing dangles.
//
// The harness is StrataConformance's (GraphDifferential.swift), which also runs it on every kind
// of store. Replay a failure with the printed seed: `STRATA_SEED=<seed> swift test --filter GraphDifferential`;
// STRATA_GRAPH_SCALE=<n> runs n times the cases, STRATA_GRAPH_TIMING=1 prints the time of each phase.
@Suite struct GraphDifferentialTests {
    @Test func randomGraphPredicatesSortsAndMutationsMatchFoundation() throws {
        let started = ContinuousClock.now
        let h = GraphHarness()
        print("graph differential seed", h.seed)
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store("graph"))
        let schema = Schema([GOwner.self, GPet.self, GTag.self])
        // STRATA_GRAPH_SCALE=10 runs ten times the cases (the default keeps it to seconds in debug).
        let scale = ProcessInfo.processInfo.environment["STRATA_GRAPH_SCALE"].flatMap { Double($0) } ?? 1
        try h.runSessions(open: { try ModelContainer(for: schema, configurations: config) }, scale: scale)
        let elapsed = ContinuousClock.now - started
        print("graph differential: \(h.summary), in \(elapsed)")
        for failure in h.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(h.failures.isEmpty)
    }
}
