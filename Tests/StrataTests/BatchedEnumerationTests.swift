// enumerate on a custom store that fetches in batches (DataStoreBatchedFetching): the store is
// asked for batches, the context holds one batch of records at a time, and offset, limit,
// unsaved deletions and a block's error behave as in any enumeration.
import Foundation
import Testing
@testable import Strata

@Suite struct BatchedEnumerationTests {
    func seeded(_ count: Int) throws -> (ModelContainer, CountingStoreConfiguration) {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let context = ModelContext(container)
        for i in 0..<count { context.insert(Journey(String(format: "j%03d", i), day: i)) }
        try context.save()
        return (container, configuration)
    }

    /// The records the container's bridge keeps for Journey.
    func keptRecords(_ container: ModelContainer) -> Int {
        container.handles.compactMap(\.custom).reduce(0) { sum, bridge in
            sum + bridge.withState { $0.tables["Journey"]?.records.count ?? 0 }
        }
    }

    @Test func theStoreIsReadABatchAtATimeAndEachBatchIsLetGo() throws {
        let (container, configuration) = try seeded(25)
        let reader = ModelContext(try ModelContainer(for: Journey.self, Leg.self, configurations: configuration))
        let readerContainer = reader.container
        var names: [String] = []
        var mostKept = 0
        try reader.enumerate(FetchDescriptor<Journey>(), batchSize: 4) { journey in
            names.append(journey.name)
            mostKept = max(mostKept, keptRecords(readerContainer))
        }
        #expect(names.count == 25)
        #expect(Set(names).count == 25)
        #expect(configuration.count("batchedFetch") == 1)
        #expect(configuration.count("batch") == 7, "25 objects in batches of 4")
        #expect(mostKept <= 4, "one batch of records at a time, not \(mostKept)")
        #expect(keptRecords(readerContainer) == 0)
        _ = container
    }

    @Test func offsetAndLimitGoToTheStoreUnlessTheContextDeletedSome() throws {
        let (container, configuration) = try seeded(20)
        let all = try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name)
        var paged = FetchDescriptor<Journey>()
        paged.fetchOffset = 3
        paged.fetchLimit = 5
        var names: [String] = []
        let context = ModelContext(container)
        try context.enumerate(paged, batchSize: 2) { names.append($0.name) }
        #expect(names == Array(all[3..<8]))
        #expect(configuration.count("batch") == 3, "the store paged: 5 objects in batches of 2")
        // An unsaved deletion: the context skips it and pages itself.
        let gone = try #require(try context.fetch(FetchDescriptor<Journey>()).first { $0.name == all[4] })
        context.delete(gone)
        names = []
        try context.enumerate(paged, batchSize: 2) { names.append($0.name) }
        #expect(names == Array(all.filter { $0 != all[4] }[3..<8]))
    }

    /// A page deep in the order is read as that page from a store that pages its fetches,
    /// when nothing unsaved can change it; otherwise the store gives offset + limit rows (or all
    /// of them, when it refuses a part) and the context pages. Every answer is the same.
    @Test func aFetchsOffsetGoesToTheStoreWhenNothingUnsavedCanChangeThePage() throws {
        let (container, configuration) = try seeded(30)
        let all = try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name)
        var paged = FetchDescriptor<Journey>()
        paged.fetchOffset = 20
        paged.fetchLimit = 4
        func asked() -> (offset: Int?, limit: Int?)? { configuration.askedPaging.withLock { $0.last } }
        let context = ModelContext(container)
        #expect(try context.fetch(paged).map(\.name) == Array(all[20..<24]))
        #expect(asked()?.offset == 20 && asked()?.limit == 4, "the store was asked for the page")
        #expect(try context.fetchIdentifiers(paged).count == 4)
        #expect(try context.fetchCount(paged) == 4)
        // The offset alone, past the end, and a limit of 0 (no limit).
        paged.fetchLimit = 0
        #expect(try context.fetch(paged).map(\.name) == Array(all[20...]))
        paged.fetchOffset = 40
        #expect(try context.fetch(paged).isEmpty)
        #expect(try context.fetchCount(paged) == 0)
        // An unsaved insert could be on the page: the context pages.
        paged.fetchOffset = 20
        paged.fetchLimit = 4
        context.insert(Journey("new", day: 99))
        #expect(try context.fetch(paged).count == 4)
        #expect(asked()?.offset == nil && asked()?.limit == 24, "offset + limit rows, paged by the context")
        context.rollback()
        // A predicate the store refuses: all rows, filtered and paged here.
        var filtered = FetchDescriptor<Journey>(predicate: #Predicate { $0.name != "j021" })
        filtered.fetchOffset = 20
        filtered.fetchLimit = 4
        #expect(try context.fetch(filtered).map(\.name) == Array(all.filter { $0 != "j021" }[20..<24]))
        #expect(try context.fetchCount(filtered) == 4)
    }

    @Test func aDescriptorTheStoreRefusesIsFetchedWholeAndABlocksErrorStopsIt() throws {
        let (container, configuration) = try seeded(10)
        let context = ModelContext(container)
        var names: [String] = []
        // The counting store refuses predicates: the context fetches and filters itself.
        try context.enumerate(FetchDescriptor<Journey>(predicate: #Predicate { $0.name >= "j005" }), batchSize: 3) { names.append($0.name) }
        #expect(names.sorted() == ["j005", "j006", "j007", "j008", "j009"])
        #expect(configuration.count("batch") == 0)
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            try context.enumerate(FetchDescriptor<Journey>(), batchSize: 3) { _ in
                seen += 1
                if seen == 4 { throw Stop() }
            }
        }
        #expect(seen == 4)
        #expect(configuration.count("batch") == 2, "no batch read after the block stopped")
    }
}
