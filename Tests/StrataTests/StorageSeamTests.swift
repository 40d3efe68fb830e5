import Foundation
import Testing
@_spi(StorageBackend) import Strata
import StrataEngine

// The storage seam (Sources/Strata/Storage/StorageBackend.swift) with a second backend
// (MemoryStorage.swift, written against the public SPI only): the same ModelContext, saves,
// fetches, upserts, delete rules and migrations, on stores StrataEngine never sees.

@Suite struct StorageSeamTests {
    private let url = URL(fileURLWithPath: "/seam/\(UUID().uuidString).store")

    private func container(_ provider: MemoryProvider) throws -> ModelContainer {
        try ModelContainer(for: Schema([Trip.self, Author.self, Book.self]), configurations: [ModelConfiguration(url: url)], storage: provider)
    }

    private func trips(_ context: ModelContext) {
        let base = Date(timeIntervalSinceReferenceDate: 0)
        for (i, name) in ["Lisbon", "Oslo", "Porto", "Rome", "Kyiv"].enumerated() {
            let trip = Trip(name: name, startDate: base.addingTimeInterval(Double(i) * 86_400))
            trip.rating = i
            context.insert(trip)
        }
    }

    @Test func aSecondBackendKeepsWhatAContextSaves() throws {
        let provider = MemoryProvider()
        do {
            let context = ModelContext(try container(provider))
            trips(context)
            try context.save()
        }
        // A new container on the same stores: what was saved, fetched by index and by scan.
        let context = ModelContext(try container(provider))
        let all = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(all.map(\.name) == ["Kyiv", "Lisbon", "Oslo", "Porto", "Rome"])
        let start = Date(timeIntervalSinceReferenceDate: 86_400)
        let later = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate > start }, sortBy: [SortDescriptor(\.startDate)]))
        #expect(later.map(\.name) == ["Porto", "Rome", "Kyiv"])
        let id = all[0].id
        #expect(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == id })).map(\.name) == ["Kyiv"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating >= 2 })) == 3)
        // A change, saved and read back.
        all[1].name = "Lisboa"
        try context.save()
        #expect(try ModelContext(try container(provider)).fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Lisboa" })).count == 1)
    }

    @Test func uniqueValuesUpsertAndConflictThroughTheSeam() throws {
        let provider = MemoryProvider()
        let context = ModelContext(try container(provider))
        trips(context)
        try context.save()
        let stored = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        // An insert with a stored unique id updates that object.
        let again = Trip(name: "Kyiv again", startDate: .now)
        again.id = stored[0].id
        context.insert(again)
        try context.save()
        let other = ModelContext(try container(provider))
        #expect(try other.fetchCount(FetchDescriptor<Trip>()) == 5)
        #expect(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Kyiv again" })).count == 1)
        // A changed object cannot take another's unique id: the save fails, nothing is written.
        let trips = try other.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        trips[1].id = trips[2].id
        let error = #expect(throws: StrataError.self) { try other.save() }
        #expect(error?.code == .uniqueConstraintViolation)
        #expect(try ModelContext(try container(provider)).fetchCount(FetchDescriptor<Trip>()) == 5)
    }

    @Test func deleteRulesWorkOnTheSecondBackendsRows() throws {
        let provider = MemoryProvider()
        do {
            let context = ModelContext(try container(provider))
            let author = Author(name: "Saramago")
            context.insert(author)
            author.books = [Book(title: "Ensaio"), Book(title: "Memorial")]
            try context.save()
        }
        let context = ModelContext(try container(provider))
        let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        context.delete(author)
        try context.save()
        // Nullify (the default rule): the books stay, without their author.
        let books = try ModelContext(try container(provider)).fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(books.map(\.title) == ["Ensaio", "Memorial"])
        #expect(books.allSatisfy { $0.author == nil })
    }

    @Test func aBackendThatEvaluatesQueriesSelectsTheRows() throws {
        var provider = MemoryProvider()
        provider.evaluatesQueries = true
        let context = ModelContext(try container(provider))
        trips(context)
        try context.save()
        let reader = ModelContext(try container(provider))
        let start = Date(timeIntervalSinceReferenceDate: 86_400)
        // Terms on two indexes (startDate, rating) and a condition no index has (name).
        let found = try reader.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate >= start && $0.rating < 4 && $0.name != "Oslo" },
                                                           sortBy: [SortDescriptor(\.name)]))
        #expect(found.map(\.name) == ["Porto", "Rome"])
        #expect(provider.stores.candidatesAsked == 1)
        // Without index terms the rows are read and filtered by the object layer.
        #expect(try reader.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Oslo" })).count == 1)
        #expect(provider.stores.candidatesAsked == 1)
    }

    @Test func aMigrationPlanRunsOnTheSecondBackendsCopy() throws {
        let provider = MemoryProvider()
        let config = ModelConfiguration(url: url)
        do {
            let context = ModelContext(try ModelContainer(for: Schema([TripsV1.Journey.self]), configurations: [config], storage: provider))
            context.insert(TripsV1.Journey(name: "Lisbon", budgetText: "12.5"))
            context.insert(TripsV1.Journey(name: "", budgetText: "1"))
            try context.save()
        }
        let container = try ModelContainer(for: Schema([TripsV3.Journey.self]), migrationPlan: TripsPlan.self, configurations: [config], storage: provider)
        let journeys = try ModelContext(container).fetch(FetchDescriptor<TripsV3.Journey>())
        #expect(journeys.map(\.name) == ["Lisbon"])
        #expect(journeys.map(\.budget) == [12.5])
        #expect(provider.stores.state(url.path + ".migrating") == nil, "the copy is gone once it took the store's place")
    }
}
