import Foundation
import Strata

/// What Foundation-style paging gives on a plain array: an offset below 0 is 0, a limit of 0
/// or below is no limit.
func page<E>(_ all: [E], offset: Int?, limit: Int?) -> [E] {
    let start = min(max(0, offset ?? 0), all.count)
    let rest = all[start...]
    guard let limit, limit > 0 else { return Array(rest) }
    return Array(rest.prefix(limit))
}

/// Checks that a fetch sorted by `sortBy` gives the order Foundation's `sorted(using:)` gives.
func checkSorts(_ context: ModelContext, _ sortBy: [SortDescriptor<ConfTrip>], among all: [ConfTrip], expected: [String]? = nil,
                _ note: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
    let want = all.sorted(using: sortBy).map(\.name)
    let got = try context.fetch(FetchDescriptor<ConfTrip>(sortBy: sortBy)).map(\.name)
    try checkEqual(got, want, "as Foundation's sorted(using:) orders" + (note.isEmpty ? "" : "; \(note)"), file: file, line: line)
    if let expected { try checkEqual(got, expected, note, file: file, line: line) }
}

extension Conformance {
    static let fetchingScenarios: [ConformanceScenario] = [
        ConformanceScenario("sortsOnEveryKindAndSeveralKeys", from: "ContextTests.fetchCountAndIdentifiersAgreeWithFetch, UsagePatternTests.pagingThroughAList, PlannerDifferentialTests (sorted(using:) as the oracle)") { env in
            let s = try env.open(ConfTrip.self)
            try seedVariedTrips(ModelContext(s.container))
            let context = ModelContext(try s.reopen())
            let all = try context.fetch(FetchDescriptor<ConfTrip>())
            try checkSorts(context, [SortDescriptor(\.rating), SortDescriptor(\.startDate)], among: all,
                           expected: ["Lisbon", "Quito", "Łódź", "porto", "Rome", "São Paulo", "Oslo", "Évora", "bergen", "lisbon 2", "Kyoto", "Zürich"])
            try checkSorts(context, [SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.startDate)], among: all)
            try checkSorts(context, [SortDescriptor(\.rating), SortDescriptor(\.startDate, order: .reverse)], among: all)
            try checkSorts(context, [SortDescriptor(\.startDate)], among: all)
            try checkSorts(context, [SortDescriptor(\.startDate, order: .reverse)], among: all, "a date, descending")
            try checkSorts(context, [SortDescriptor(\.budget), SortDescriptor(\.startDate)], among: all, "an optional: nil first")
            try checkSorts(context, [SortDescriptor(\.budget, order: .reverse), SortDescriptor(\.startDate)], among: all, "an optional, descending: nil last")
            try checkSorts(context, [SortDescriptor(\.rating), SortDescriptor(\.budget, order: .reverse), SortDescriptor(\.startDate)], among: all, "three keys")
            let nilFirst = try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.budget), SortDescriptor(\.startDate)]))
            try checkEqual(nilFirst.prefix(4).map(\.name), ["Lisbon", "bergen", "Rome", "Zürich"], "nil budgets first, ascending")
            try checkEqual(nilFirst.last?.name, "São Paulo")
            // A sort with a predicate and with unsaved objects merged in.
            context.insert(ConfTrip(name: "unsaved", startDate: confDay(100), budget: 45, rating: 2))
            let merged = try context.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating == 2 }, sortBy: [SortDescriptor(\.budget, order: .reverse)]))
            try checkEqual(merged.map(\.name), ["Évora", "unsaved", "Oslo"])
        },

        ConformanceScenario("sortsStrings", from: "UsagePatternTests.searchingNonLatinText (sort), ContextTests.fetchCountAndIdentifiersAgreeWithFetch (sort by name)") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let words = ["b", "B", "a10", "a2", "Á", "apple", "Apple", "Zebra", "éclair", "eclair", "10", "9", "", " space", "Ωmega", "東京", "Łódź", "lodz"]
            for (i, word) in words.enumerated() { context.insert(ConfTrip(name: word, startDate: confDay(i), rating: i)) }
            try context.save()
            let reader = ModelContext(try s.reopen())
            let all = try reader.fetch(FetchDescriptor<ConfTrip>())
            try checkSorts(reader, [SortDescriptor(\.name)], among: all, "a String's default comparator")
            try checkSorts(reader, [SortDescriptor(\.name, order: .reverse)], among: all)
            try checkSorts(reader, [SortDescriptor(\.name, comparator: .lexical)], among: all, "lexical")
        },

        ConformanceScenario("sortByIdentifier", from: "IdentifierPredicateTests.sortingByIdentifierUsesTheRowsIdentity") { env in
            let s = try env.open(ConfTrip.self)
            let ids = try seedTrips(ModelContext(s.container), 5).map(\.persistentModelID)
            let context = ModelContext(s.container)
            try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.persistentModelID, order: .reverse)])).map(\.persistentModelID),
                           ids.sorted().reversed())
            try checkEqual(try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.persistentModelID)])).map(\.persistentModelID), ids.sorted())
        },

        ConformanceScenario("pagingWithLimitAndOffset", from: "ContextTests.pagingWithLimitAndOffset, ModelBasicsTests.fetchLimitZeroMeansNoLimit, JSONCustomStoreTests.limitAndOffset") { env in
            try pagesMakeTheWhole(env, sorts: [[SortDescriptor(\.rating)], [SortDescriptor(\.startDate, order: .reverse)], [SortDescriptor(\.name)]])
        },

        ConformanceScenario("pagingWithoutASort", from: "ContextTests.pagingWithLimitAndOffset (no sort)", requires: [.stableUnsortedOrder]) { env in
            try pagesMakeTheWhole(env, sorts: [[]])
        },

        ConformanceScenario("limitsAndOffsetsAtTheEdges", from: "FetchEdgeTests.anyLimitAndOffsetPagesWithoutTrapping") { env in
            try anyLimitAndOffsetPages(env, sorts: [[SortDescriptor(\.startDate)], [SortDescriptor(\.name, order: .reverse)]])
        },

        ConformanceScenario("limitsAndOffsetsAtTheEdgesWithoutASort", from: "FetchEdgeTests.anyLimitAndOffsetPagesWithoutTrapping (no sort)", requires: [.stableUnsortedOrder]) { env in
            try anyLimitAndOffsetPages(env, sorts: [[]])
        },

        ConformanceScenario("pagingFilteredSortedOnTwoKeys", from: "UsagePatternTests.pagingThroughAList") { env in
            let s = try env.open(ConfTrip.self)
            do {
                let context = ModelContext(s.container)
                for i in 0..<35 {
                    context.insert(ConfTrip(name: String(format: "trip %02d", i), startDate: Date(timeIntervalSince1970: 1_600_000_000 + Double(i) * 3600), rating: i % 5))
                }
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            func page(_ n: Int, size: Int = 10) throws -> [String] {
                var d = FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])
                d.fetchOffset = n * size
                d.fetchLimit = size
                return try context.fetch(d).map(\.name)
            }
            try checkEqual(try page(0), (25...34).reversed().map { String(format: "trip %02d", $0) })
            try checkEqual(try page(3), (0...4).reversed().map { String(format: "trip %02d", $0) })
            try checkEqual(try page(4), [])
            try checkEqual(try (0..<4).flatMap { try page($0) }, (0..<35).reversed().map { String(format: "trip %02d", $0) })
            var d = FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating >= 3 }, sortBy: [SortDescriptor(\.rating), SortDescriptor(\.name, order: .reverse)])
            d.fetchOffset = 5
            d.fetchLimit = 4
            try checkEqual(try context.fetch(d).map(\.name), ["trip 08", "trip 03", "trip 34", "trip 29"])
        },

        ConformanceScenario("fetchCountAndIdentifiersAgreeWithFetch", from: "ContextTests.fetchCountAndIdentifiersAgreeWithFetch, JSONCustomStoreTests.countAndIdentifiers") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try seedTrips(context, 20)
            context.insert(ConfTrip(name: "pending", startDate: confDay(-1), rating: 7))
            var paged = FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.rating), SortDescriptor(\.name)])
            paged.fetchOffset = 5
            paged.fetchLimit = 4
            let descriptors: [FetchDescriptor<ConfTrip>] = [
                FetchDescriptor(),
                FetchDescriptor(predicate: #Predicate { $0.rating >= 7 }),
                FetchDescriptor(predicate: #Predicate { $0.rating >= 7 }, sortBy: [SortDescriptor(\.startDate, order: .reverse)]),
                FetchDescriptor(predicate: #Predicate { $0.name.starts(with: "t1") }, sortBy: [SortDescriptor(\.name)]),
                paged,
            ]
            for (i, d) in descriptors.enumerated() {
                let objects = try context.fetch(d)
                try checkEqual(try context.fetchCount(d), objects.count, "descriptor \(i)")
                let ids = try context.fetchIdentifiers(d)
                try checkEqual(ids, objects.map(\.persistentModelID), "descriptor \(i)")
                for (id, object) in zip(ids, objects) { try checkIdentical(context.model(for: id) as? ConfTrip, object) }
            }
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 21)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating == 7 })), 2)
            let page = try context.fetch(paged)
            try checkEqual(page.map(\.rating), [5, 6, 7, 7])
            try check(page[2].name == "pending" && page[3].name == "t7", "ties sorted by the second key")
            // Without pending changes, and from another container.
            try context.save()
            let reader = ModelContext(try s.reopen())
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating >= 7 })), 14)
            try checkEqual(try reader.fetchIdentifiers(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating >= 7 })).count, 14)
        },

        ConformanceScenario("countingWithPredicates", from: "UsagePatternTests.countingWithPredicates") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            for i in 0..<30 {
                let t = ConfTrip(name: "t\(i)", startDate: confDay(i), budget: i % 3 == 0 ? nil : Double(i) * 10)
                t.status = ConfStatus.allCases[i % 3]
                t.tags = i % 2 == 0 ? ["even"] : []
                context.insert(t)
            }
            try context.save()
            let reader = ModelContext(try s.reopen())
            let done = ConfStatus.done
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.status == done })), 10)
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.budget == nil })), 10)
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { ($0.budget ?? 0) > 150 })), 10)
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.tags.contains("even") && $0.status != done })), 10)
            let cutoff = confDay(10)
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.startDate < cutoff })), 10)
            reader.insert(ConfTrip(name: "new", startDate: confDay(-100)))
            try checkEqual(try reader.fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.startDate < cutoff })), 11, "counts include unsaved work")
        },

        ConformanceScenario("batchedFetchCollection", from: "ContextTests.batchedFetchCollection") { env in
            let s = try env.open(ConfTrip.self)
            try seedTrips(ModelContext(s.container), 23)
            let context = ModelContext(try s.reopen())
            let descriptor = FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating != 5 }, sortBy: [SortDescriptor(\.rating, order: .reverse)])
            let all = try context.fetch(descriptor)
            let batched = try context.fetch(descriptor, batchSize: 4)
            try checkEqual(batched.count, 22)
            try checkEqual(batched.map(\.rating), all.map(\.rating))
            try check(batched[0].rating == 22 && batched[21].rating == 0)
            try checkIdentical(batched[13], all[13], "the registered object")
            try checkEqual(batched.reversed().map(\.rating), Array(all.map(\.rating).reversed()))
            try check(try context.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating > 100 }), batchSize: 3).isEmpty)
        },

        ConformanceScenario("batchedResultsKeepWhatTheFetchFound", from: "FetchEdgeTests.batchesReadTheSnapshotTheirFetchCameFrom",
                            requires: [.batchesReadOneSnapshot]) { env in
            try batchesKeepWhatTheirFetchFound(env, sortBy: [SortDescriptor(\ConfTrip.startDate, order: .reverse)])
        },

        ConformanceScenario("batchedResultsWithoutASortKeepWhatTheFetchFound", from: "FetchEdgeTests.batchesReadTheSnapshotTheirFetchCameFrom (no sort)",
                            requires: [.stableUnsortedOrder, .batchesReadOneSnapshot]) { env in
            try batchesKeepWhatTheirFetchFound(env, sortBy: [])
        },

        ConformanceScenario("enumerateVisitsEverything", from: "ContextTests.enumerateVisitsEverything, ContextTests.enumerateRethrowsTheBlocksError") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try seedTrips(context, 31)
            context.insert(ConfTrip(name: "pending", startDate: confDay(100), rating: 100))
            for batch in [1, 4, 31, 5000] {
                var seen: [Int] = []
                try context.enumerate(FetchDescriptor<ConfTrip>(), batchSize: batch) { seen.append($0.rating) }
                try checkEqual(seen.sorted(), Array(0...30) + [100], "batch size \(batch)")
            }
            var ordered: [Int] = []
            try context.enumerate(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating % 2 == 0 }, sortBy: [SortDescriptor(\.rating, order: .reverse)]), batchSize: 3) {
                ordered.append($0.rating)
            }
            try checkEqual(ordered, [100] + Array(stride(from: 30, through: 0, by: -2)))
            // Changes made while enumerating stay in the context and are saved.
            try context.enumerate(FetchDescriptor<ConfTrip>(), batchSize: 7) { $0.tags = ["seen"] }
            try context.save()
            try check(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>()).allSatisfy { $0.tags == ["seen"] }, "every change saved")
            // An error the block throws ends the enumeration and reaches the caller unchanged.
            struct Stop: Error {}
            var visited = 0
            try checkThrows("the block's error", matching: { $0 is Stop }) {
                try context.enumerate(FetchDescriptor<ConfTrip>(), batchSize: 3) { _ in
                    visited += 1
                    if visited == 5 { throw Stop() }
                }
            }
            try checkEqual(visited, 5)
        },

        ConformanceScenario("enumerateWhoseBlockSaves", from: "ContextTests.enumerateWhoseBlockSavesSeesItsSnapshot") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try seedTrips(context, 60)
            var seen: [Int] = []
            try context.enumerate(FetchDescriptor<ConfTrip>(), batchSize: 7) { trip in
                seen.append(trip.rating)
                trip.tags = ["seen"]
                if trip.rating % 3 == 0 { context.insert(ConfTrip(name: "extra", startDate: confDay(0), rating: 1000 + trip.rating)) }
                if trip.rating % 10 == 9 { context.delete(trip) }
                if trip.rating % 5 == 0 { try context.save() }
            }
            try context.save()
            try checkEqual(seen.sorted(), Array(0..<60), "each stored object once, none of the inserted")
            let stored = try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>())
            try checkEqual(stored.count, 60 - 6 + 20)
            try check(stored.filter { $0.rating < 60 }.allSatisfy { $0.tags == ["seen"] && $0.rating % 10 != 9 })
        },

        ConformanceScenario("includePendingChanges", from: "ContextTests.includePendingChanges, JSONCustomStoreTests.unsavedChangesAreInTheFetch") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 3)
            context.insert(ConfTrip(name: "unsaved", startDate: confDay(5), rating: 5))
            trips[0].name = "renamed"
            var withPending = byRating
            try check(withPending.includePendingChanges, "true by default, as in SwiftData")
            try checkEqual(names(try context.fetch(withPending)), ["renamed", "t1", "t2", "unsaved"])
            var storedOnly = withPending
            storedOnly.includePendingChanges = false
            let stored = try context.fetch(storedOnly)
            try check(stored.count == 3 && stored[0] === trips[0], "the registered object, even though the store has its old values")
            try checkEqual(try context.fetchCount(storedOnly), 3)
            withPending.predicate = #Predicate { $0.name == "renamed" }
            storedOnly.predicate = #Predicate { $0.name == "renamed" }
            try checkIdentical(try context.fetch(withPending).first, trips[0])
            try checkEqual(try context.fetch(storedOnly).count, 0)
            withPending.predicate = #Predicate { $0.name == "t0" }
            storedOnly.predicate = #Predicate { $0.name == "t0" }
            try checkEqual(try context.fetch(withPending).count, 0)
            try checkIdentical(try context.fetch(storedOnly).first, trips[0])
            withPending.predicate = #Predicate { $0.name == "unsaved" }
            storedOnly.predicate = #Predicate { $0.name == "unsaved" }
            try checkEqual(try context.fetchCount(withPending), 1)
            try checkEqual(try context.fetchCount(storedOnly), 0)
            // Unsaved inserts, changes and deletions in a sorted, limited fetch.
            context.delete(trips[1])
            var first = FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)])
            try checkEqual(names(try context.fetch(first)), ["renamed", "t2", "unsaved"])
            first.fetchLimit = 1
            try checkEqual(names(try context.fetch(first)), ["renamed"])
            first.fetchOffset = 1
            try checkEqual(names(try context.fetch(first)), ["t2"])
        },

        ConformanceScenario("propertiesToFetch", from: "PartialFetchTests.propertiesToFetchLoadsThoseAndTheRestOnAccess, PartialFetchTests.aChangedPartialObjectSavesWhatItDidNotLoad") { env in
            let s = try env.open(ConfTrip.self)
            do {
                let context = ModelContext(s.container)
                let trip = ConfTrip(name: "Lisbon", startDate: confDay(1), budget: 12.5)
                trip.tags = ["sea", "tram"]
                trip.address = ConfAddress(street: "Rua", city: "Lisboa")
                context.insert(trip)
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                var descriptor = FetchDescriptor<ConfTrip>()
                descriptor.propertiesToFetch = [\.name]
                let trip = try require(try context.fetch(descriptor).first)
                try checkEqual(trip.name, "Lisbon")
                try checkEqual(trip.tags, ["sea", "tram"], "a property left out loads when read")
                try checkEqual(trip.budget, 12.5)
                try check(!trip.hasChanges)
                trip.rating = 4
                try context.save()
            }
            do {
                let context = ModelContext(try s.reopen())
                var descriptor = FetchDescriptor<ConfTrip>()
                descriptor.propertiesToFetch = [\.rating]
                let trip = try require(try context.fetch(descriptor).first)
                trip.rating = 5        // set before anything else was read
                try context.save()
            }
            let again = try require(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>()).first)
            try checkEqual(again.rating, 5)
            try check(again.name == "Lisbon" && again.tags == ["sea", "tram"] && again.address?.city == "Lisboa" && again.budget == 12.5
                      && again.startDate == confDay(1), "what was not loaded is saved as it was")
        },

        ConformanceScenario("prefetchingRelationships", from: "PartialFetchTests.prefetchingReadsTheRelatedRowsWithTheFetch") { env in
            let s = try env.open(ConfVoyage.self, ConfPort.self)
            do {
                let context = ModelContext(s.container)
                for name in ["a", "b"] {
                    let voyage = ConfVoyage(name)
                    context.insert(voyage)
                    voyage.ports = (0..<3).map { ConfPort("\(name)\($0)") }
                }
                try context.save()
            }
            let context = ModelContext(try s.reopen())
            var descriptor = FetchDescriptor<ConfVoyage>(sortBy: [SortDescriptor(\.name)])
            descriptor.relationshipKeyPathsForPrefetching = [\.ports]
            let voyages = try context.fetch(descriptor)
            try checkEqual(voyages.map { $0.ports.map(\.city) }, [["a0", "a1", "a2"], ["b0", "b1", "b2"]])
            try check(voyages.allSatisfy { voyage in voyage.ports.allSatisfy { $0.voyage === voyage } })
            var ports = FetchDescriptor<ConfPort>(sortBy: [SortDescriptor(\.city)])
            ports.relationshipKeyPathsForPrefetching = [\.voyage]
            try checkEqual(try context.fetch(ports).map { $0.voyage?.name ?? "-" }, ["a", "a", "a", "b", "b", "b"])
        },
    ]

    /// Pages of 7 with each sort make the whole, with `fetchCount` agreeing; edges of paging.
    static func pagesMakeTheWhole(_ env: ScenarioEnvironment, sorts: [[SortDescriptor<ConfTrip>]]) throws {
        let s = try env.open(ConfTrip.self)
        try seedTrips(ModelContext(s.container), 30)
        let context = ModelContext(try s.reopen())
        for sort in sorts {
            let everything = try context.fetch(FetchDescriptor<ConfTrip>(sortBy: sort)).map(\.rating)
            try checkEqual(everything.count, 30)
            var pages: [Int] = []
            var offset = 0
            while true {
                var d = FetchDescriptor<ConfTrip>(sortBy: sort)
                d.fetchOffset = offset
                d.fetchLimit = 7
                let page = try context.fetch(d).map(\.rating)
                try checkEqual(try context.fetchCount(d), page.count, "fetchCount of a page")
                if page.isEmpty { break }
                try checkEqual(page.count, min(7, 30 - offset))
                pages += page
                offset += 7
            }
            try checkEqual(pages, everything, "the pages make the whole, sorted by \(sort.count) key(s)")
        }
        var beyond = FetchDescriptor<ConfTrip>(sortBy: sorts[0])
        beyond.fetchOffset = 31
        try checkEqual(try context.fetch(beyond).count, 0)
        try checkEqual(try context.fetchCount(beyond), 0)
        var zero = FetchDescriptor<ConfTrip>(sortBy: sorts[0])
        zero.fetchLimit = 0
        try checkEqual(try context.fetch(zero).count, 30, "fetchLimit 0 is no limit")
        try checkEqual(try context.fetchCount(zero), 30)
        var limitOnly = FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating >= 10 }, sortBy: [SortDescriptor(\.rating, order: .reverse)])
        limitOnly.fetchLimit = 3
        try checkEqual(try context.fetch(limitOnly).map(\.rating), [29, 28, 27])
    }

    /// Any limit and offset a caller can pass pages as Foundation would, with an unsaved object
    /// merged in, through fetch, fetchCount, fetchIdentifiers, batches and enumerate.
    static func anyLimitAndOffsetPages(_ env: ScenarioEnvironment, sorts: [[SortDescriptor<ConfTrip>]]) throws {
        let s = try env.open(ConfTrip.self)
        do {
            let context = ModelContext(s.container)
            for i in 0..<6 { context.insert(ConfTrip(name: "t\(i)", startDate: confDay(5 - i))) }
            try context.save()
        }
        let context = ModelContext(s.container)
        context.insert(ConfTrip(name: "t9", startDate: confDay(9)))
        let edges: [Int?] = [nil, Int.max, Int.min, -1, 0, 1, 3, 7]
        let predicates: [Predicate<ConfTrip>?] = [nil, #Predicate { $0.name != "t1" }]
        for predicate in predicates {
            for sortBy in sorts {
                let expected = try context.fetch(FetchDescriptor<ConfTrip>(predicate: predicate, sortBy: sortBy)).map(\.name)
                for limit in edges {
                    for offset in edges {
                        var d = FetchDescriptor<ConfTrip>(predicate: predicate, sortBy: sortBy)
                        d.fetchLimit = limit
                        d.fetchOffset = offset
                        let want = page(expected, offset: offset, limit: limit)
                        let note = "limit \(String(describing: limit)), offset \(String(describing: offset)), \(sortBy.count) sort key(s)"
                        try checkEqual(try context.fetch(d).map(\.name), want, note)
                        try checkEqual(try context.fetchCount(d), want.count, note)
                        try checkEqual(try context.fetchIdentifiers(d).count, want.count, note)
                        try checkEqual(try context.fetch(d, batchSize: 2).map(\.name), want, note)
                        var visited: [String] = []
                        try context.enumerate(d, batchSize: limit ?? 2) { visited.append($0.name) }
                        try checkEqual(visited, want, note)
                    }
                }
            }
        }
    }

    /// A batched fetch's later batches hold the objects the fetch found, as they were then.
    static func batchesKeepWhatTheirFetchFound(_ env: ScenarioEnvironment, sortBy: [SortDescriptor<ConfTrip>]) throws {
        let s = try env.open(ConfTrip.self)
        do {
            let context = ModelContext(s.container)
            for i in 0..<6 { context.insert(ConfTrip(name: "t\(i)", startDate: confDay(5 - i))) }
            try context.save()
        }
        let results = try ModelContext(s.container).fetch(FetchDescriptor<ConfTrip>(sortBy: sortBy), batchSize: 2)
        try checkEqual(results.count, 6)
        let first = results[0].name
        // Another context deletes an object of a later batch and changes another, and saves.
        let other = ModelContext(s.container)
        let later = try other.fetch(FetchDescriptor<ConfTrip>(sortBy: sortBy))
        try checkEqual(later.first?.name, first)
        other.delete(later[4])
        later[5].rating = 42
        try other.save()
        try checkEqual(results.map(\.name), later.map(\.name), "the later batches still hold the objects the fetch found")
        try checkEqual(results[5].rating, 0, "as they were then")
        try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 5)
    }
}
