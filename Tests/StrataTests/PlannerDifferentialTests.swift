import Foundation
import Testing
import Strata
import StrataConformance
import StrataTestSupport

// The query planner against Foundation: thousands of random `#Predicate`s, sort orders and
// pages, each answered by Strata (index lookups, ranges, compiled record filters, the slow
// path, pending changes) and by Foundation on a plain array of the same objects
// (`filter { try predicate.evaluate($0) }`, `sorted(using:)`, offset, limit). The answers
// must be identical: same objects, same order.
//
// The harness is StrataConformance's (Differential.swift), which also runs it, with fewer cases,
// on every kind of store. Replay a failure with the printed seed:
// `STRATA_SEED=<seed> swift test --filter PlannerDifferential`.
@Suite struct PlannerDifferentialTests {
    @Test func randomPredicatesSortsAndPagesMatchFoundation() throws {
        let started = ContinuousClock.now
        let h = DifferentialHarness()
        print("seed", h.seed)
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store("differential"))
        let open = { try ModelContainer(for: DiffItem.self, configurations: config) }
        try h.runPhases(first: open, reopen: open, objects: 100, counts: (stored: 900, pending: 900, afterSave: 300))

        let elapsed = ContinuousClock.now - started
        print("differential: \(h.cases) cases in \(elapsed)")
        for failure in h.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(h.failures.isEmpty)
    }

    /// `localizedStandardContains` itself, against what Foundation on Apple platforms answers
    /// (the differential test cannot check it: both sides call the same function).
    @Test func localizedStandardContainsIsCaseAndDiacriticInsensitive() throws {
        let container = try ModelContainer(for: DiffItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        var rng = SeededGenerator(seed: 1)
        for (i, title) in ["Le Café de Flore", "Cafe\u{301} au lait", "Москва — столица", "Ελληνικά", "plain", "ZÜRICH"].enumerated() {
            let o = DiffItem()
            o.uid = rng.uuid()
            o.serial = i
            o.title = title
            context.insert(o)
        }
        try context.save()
        func titles(_ search: String) throws -> [String] {
            try context.fetch(FetchDescriptor<DiffItem>(predicate: #Predicate { $0.title.localizedStandardContains(search) },
                                                        sortBy: [SortDescriptor(\.serial)])).map(\.title)
        }
        #expect(try titles("cafe") == ["Le Café de Flore", "Cafe\u{301} au lait"])
        #expect(try titles("CAFÉ") == ["Le Café de Flore", "Cafe\u{301} au lait"])
        #expect(try titles("москва") == ["Москва — столица"])
        #expect(try titles("ΕΛΛΗΝΙΚΑ") == ["Ελληνικά"])
        #expect(try titles("ελληνικα") == ["Ελληνικά"])
        #expect(try titles("zurich") == ["ZÜRICH"])
        #expect(try titles("xyz") == [])
        #expect(try titles("") == [])
    }
}
