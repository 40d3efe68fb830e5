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
    /// `fetch(_:batchSize:)` on a store that fetches in batches reads the identifiers, then each
    /// batch when it is first subscripted: no record is kept in between, and one batch at most.
    @Test func fetchWithABatchSizeReadsEachBatchWhenItIsFirstRead() throws {
        let (container, configuration) = try seeded(25)
        // (This store refuses sorts and predicates, which the context then applies to whole
        // objects: the identifiers are read for a descriptor the store takes whole.)
        let expected = try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name)
        let reader = ModelContext(try ModelContainer(for: Journey.self, Leg.self, configurations: configuration))
        let fetchesBefore = configuration.count("fetch")
        let results = try reader.fetch(FetchDescriptor<Journey>(), batchSize: 4)
        #expect(results.count == 25)
        #expect(keptRecords(reader.container) == 0, "only identifiers were read")
        let afterIdentifiers = configuration.count("fetch")
        #expect(afterIdentifiers > fetchesBefore)
        // This store refuses the batch's predicate (identifiers), so a batch is two fetches: the
        // one refused and the one without it, of which the context keeps the batch only.
        #expect(results[5].name == expected[5])
        #expect(configuration.count("fetch") == afterIdentifiers + 2, "the batch of position 5")
        #expect(results[6].name == expected[6])
        #expect(configuration.count("fetch") == afterIdentifiers + 2, "the same batch")
        #expect(keptRecords(reader.container) == 0, "the batch's records were let go once its objects were made")
        #expect(results.map(\.name) == expected)
        // Batches 0 to 6 (the one read above maybe again): one read each, never the whole.
        #expect(configuration.count("fetch") <= afterIdentifiers + 2 * 8, "25 objects in 7 batches of at most 4")
        #expect(keptRecords(reader.container) == 0)
        var paged = FetchDescriptor<Journey>()
        paged.fetchOffset = 10
        paged.fetchLimit = 6
        #expect(try reader.fetch(paged, batchSize: 4).map(\.name) == Array(expected[10..<16]))
        // A batch whose first fetch fails (a dropped connection) is asked for once more.
        let again = try ModelContext(reader.container).fetch(FetchDescriptor<Journey>(), batchSize: 4)
        configuration.failNextFetch.withLock { $0 = StrataError(.storeFailure, "connection lost") }
        #expect(again[24].name == expected[24])
        #expect(configuration.failNextFetch.withLock { $0 == nil }, "the failure was met, and the second try answered")
        // A sort the store refuses: whole objects, sorted by the context.
        #expect(try reader.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name, order: .reverse)]), batchSize: 4).map(\.name) == expected.reversed())
    }

    /// A row another writer deletes after the identifiers were read is, when its batch is read,
    /// an object with the model's initial values, its identifier and `isDeleted`, never a trap;
    /// an unsaved change in the context makes the fetch read whole objects, as on any store.
    @Test func aRowDeletedBeforeItsBatchIsReadIsAPlaceholder() throws {
        let (container, configuration) = try seeded(12)
        let reader = ModelContext(try ModelContainer(for: Journey.self, Leg.self, configurations: configuration))
        let results = try reader.fetch(FetchDescriptor<Journey>(), batchSize: 4)
        let writer = ModelContext(container)
        let gone = try #require(try writer.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "j009" })).first)
        writer.delete(gone)
        try writer.save()
        #expect(results.map(\.name) == ["j000", "j001", "j002", "j003", "j004", "j005", "j006", "j007", "j008", "", "j010", "j011"])
        #expect(results.map(\.isDeleted) == (0..<12).map { $0 == 9 })
        #expect(results[9].persistentModelID == gone.persistentModelID)
        reader.insert(Journey("j100", day: 100))
        #expect(try reader.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]), batchSize: 4).map(\.name).last == "j100")
    }
}
