// The macro spelling of Tests/StrataTests/ModelBasicsTests.swift: the same tests, word for word,
// on models written as SwiftData writes them (TestModels.swift). Keep the two files in step.

import Foundation
import Testing
import StrataData

@Suite struct ModelBasicsTests {
    @Test func insertSaveFetchReopen() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let day = Date(timeIntervalSinceReferenceDate: 700_000_000.123456)
        var firstID: UUID
        do {
            let container = try ModelContainer(for: Trip.self, configurations: config)
            let context = ModelContext(container)
            let trip = Trip(name: "Lisbon", startDate: day, budget: 9.99)
            trip.tags = ["sea", "food"]
            trip.address = Address(street: "Rua", city: "Lisboa")
            firstID = trip.id
            context.insert(trip)
            #expect(context.hasChanges)
            #expect(context.insertedModelsArray.count == 1)
            try context.save()
            #expect(!context.hasChanges)
            let all = try context.fetch(FetchDescriptor<Trip>())
            #expect(all.count == 1)
            #expect(all.first === trip)
        }
        let container = try ModelContainer(for: Trip.self, configurations: config)
        let context = ModelContext(container)
        let all = try context.fetch(FetchDescriptor<Trip>())
        #expect(all.count == 1)
        let trip = try #require(all.first)
        #expect(trip.id == firstID)
        #expect(trip.name == "Lisbon")
        #expect(trip.startDate == day)
        #expect(trip.budget == 9.99)
        #expect(trip.tags == ["sea", "food"])
        #expect(trip.address == Address(street: "Rua", city: "Lisboa"))
        let byID = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == firstID }))
        #expect(byID.count == 1 && byID.first === trip)
    }

    @Test func uniqueUpsert() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let a = Trip(name: "A", startDate: .now)
        context.insert(a)
        try context.save()
        let b = Trip(name: "B", startDate: .now)
        b.id = a.id
        context.insert(b)
        try context.save()
        let all = try context.fetch(FetchDescriptor<Trip>())
        #expect(all.count == 1)
        #expect(all.first?.name == "B")
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    // (unmarkedPropertyIsASchemaError has no counterpart: @Model persists every stored property.)

    @Test func fetchLimitZeroMeansNoLimit() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<3 { context.insert(Trip(name: "t\(i)", startDate: .now)) }
        try context.save()
        var descriptor = FetchDescriptor<Trip>()
        descriptor.fetchLimit = 0
        #expect(try context.fetch(descriptor).count == 3)
        #expect(try context.fetchCount(descriptor) == 3)
    }
}
