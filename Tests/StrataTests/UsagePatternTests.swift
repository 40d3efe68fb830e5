import Foundation
import Testing
import Strata

// How applications written for SwiftData use a context, end to end on a store on disk:
// a repository that updates or inserts by id, a cache that replaces its contents, paging,
// counting, and a search box over non-Latin text.

/// A typical repository: fetch by id, update if found, insert otherwise.
struct TripRepository {
    let context: ModelContext

    func trip(id: UUID) throws -> Trip? {
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.id == id })
        descriptor.fetchLimit = 1
        return try context.fetch(descriptor).first
    }

    @discardableResult
    func save(id: UUID, name: String, rating: Int) throws -> Trip {
        if let existing = try trip(id: id) {
            existing.name = name
            existing.rating = rating
            try context.save()
            return existing
        }
        let trip = Trip(name: name, startDate: Date(timeIntervalSinceReferenceDate: 0))
        trip.id = id
        trip.rating = rating
        context.insert(trip)
        try context.save()
        return trip
    }
}

@Suite struct UsagePatternTests {
    @Test func repositoryUpdatesOrInserts() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let ids = (0..<5).map { _ in UUID() }
        do {
            let container = try ModelContainer(for: Trip.self, configurations: config)
            let repository = TripRepository(context: ModelContext(container))
            let first = try repository.save(id: ids[0], name: "first", rating: 1)
            for (i, id) in ids.enumerated() { try repository.save(id: id, name: "v1 \(i)", rating: i) }
            let again = try repository.save(id: ids[0], name: "v2 0", rating: 10)
            #expect(again === first, "the update changed the registered object")
            #expect(try repository.trip(id: ids[0])?.name == "v2 0")
            #expect(try repository.trip(id: UUID()) == nil)
            #expect(try repository.context.fetchCount(FetchDescriptor<Trip>()) == 5)
        }
        // A new process (container) sees the same, and keeps updating rather than duplicating.
        let container = try ModelContainer(for: Trip.self, configurations: config)
        let repository = TripRepository(context: ModelContext(container))
        #expect(try repository.trip(id: ids[0])?.rating == 10)
        try repository.save(id: ids[3], name: "v3 3", rating: 33)
        let all = try repository.context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(all.map(\.name) == ["v1 1", "v1 2", "v1 4", "v2 0", "v3 3"])
        #expect(Set(all.map(\.id)) == Set(ids))
    }

    @Test func replacingTheWholeContents() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let container = try ModelContainer(for: Trip.self, configurations: config)
        let context = ModelContext(container)
        // A cache refreshed from a server: each refresh replaces everything.
        func refresh(_ names: [String], ids: [UUID]? = nil) throws {
            try context.delete(model: Trip.self)
            for (i, name) in names.enumerated() {
                let t = Trip(name: name, startDate: Date(timeIntervalSinceReferenceDate: Double(i)))
                if let ids { t.id = ids[i] }
                context.insert(t)
            }
            // Before the save, this context already sees only the new contents.
            let pending = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
            #expect(pending.map(\.name) == names)
            try context.save()
        }
        let ids = (0..<3).map { _ in UUID() }
        try refresh(["a", "b", "c"], ids: ids)
        let held = try context.fetch(FetchDescriptor<Trip>())
        #expect(held.count == 3)
        try refresh(["d", "e"])
        #expect(held.allSatisfy { $0.modelContext == nil && !$0.isDeleted }, "deleted by the refresh, and saved")
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)])).map(\.name) == ["d", "e"])
        // Refreshing with the same unique ids as before the previous refresh: no conflict.
        try refresh(["a2", "b2", "c2"], ids: ids)
        try refresh(["a3", "b3", "c3"], ids: ids)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
        #expect(stored.map(\.name) == ["a3", "b3", "c3"])
        #expect(stored.map(\.id) == ids)
        try refresh([])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func pagingThroughAList() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        for i in 0..<35 {
            let t = Trip(name: String(format: "trip %02d", i), startDate: Date(timeIntervalSinceReferenceDate: Double(i) * 3600))
            t.rating = i % 5
            context.insert(t)
        }
        try context.save()
        func page(_ n: Int, size: Int = 10) throws -> [String] {
            var d = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])
            d.fetchOffset = n * size
            d.fetchLimit = size
            return try context.fetch(d).map(\.name)
        }
        #expect(try page(0) == (25...34).reversed().map { String(format: "trip %02d", $0) })
        #expect(try page(3) == (0...4).reversed().map { String(format: "trip %02d", $0) })
        #expect(try page(4).isEmpty)
        #expect(try (0..<4).flatMap { try page($0) } == (0..<35).reversed().map { String(format: "trip %02d", $0) })
        // Paging a filtered list, sorted on two keys.
        var d = FetchDescriptor<Trip>(predicate: #Predicate { $0.rating >= 3 }, sortBy: [SortDescriptor(\.rating), SortDescriptor(\.name, order: .reverse)])
        d.fetchOffset = 5
        d.fetchLimit = 4
        #expect(try context.fetch(d).map(\.name) == ["trip 08", "trip 03", "trip 34", "trip 29"])
    }

    @Test func countingWithPredicates() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<30 {
            let t = Trip(name: "t\(i)", startDate: Date(timeIntervalSinceReferenceDate: Double(i)), budget: i % 3 == 0 ? nil : Double(i) * 10)
            t.status = Status.allCases[i % 3]
            t.tags = i % 2 == 0 ? ["even"] : []
            context.insert(t)
        }
        try context.save()
        let done = Status.done
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.status == done })) == 10)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.budget == nil })) == 10)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { ($0.budget ?? 0) > 150 })) == 10)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.tags.contains("even") && $0.status != done })) == 10)
        let cutoff = Date(timeIntervalSinceReferenceDate: 10)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate < cutoff })) == 10)
        // Counts include unsaved work, as fetches do.
        context.insert(Trip(name: "new", startDate: .distantPast))
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate < cutoff })) == 11)
    }

    @Test func searchingNonLatinText() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let cities = ["Санкт-Петербург", "Москва", "Αθήνα", "Ηράκλειο", "São Paulo", "Zürich", "Kraków", "Besançon", "Łódź", "東京", "Crème Brûlée Café"]
        for (i, city) in cities.enumerated() {
            let t = Trip(name: city, startDate: Date(timeIntervalSinceReferenceDate: Double(i)))
            t.rating = i
            context.insert(t)
        }
        try context.save()
        func search(_ text: String) throws -> [String] {
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.localizedStandardContains(text) },
                                                    sortBy: [SortDescriptor(\.startDate)])).map(\.name)
        }
        #expect(try search("санкт") == ["Санкт-Петербург"])
        #expect(try search("ПЕТЕРБУРГ") == ["Санкт-Петербург"])
        #expect(try search("моск") == ["Москва"])
        #expect(try search("αθηνα") == ["Αθήνα"], "without the tonos")
        #expect(try search("ΗΡΑΚΛΕΙΟ") == ["Ηράκλειο"])
        #expect(try search("sao") == ["São Paulo"])
        #expect(try search("ZURICH") == ["Zürich"])
        #expect(try search("krakow") == ["Kraków"])
        #expect(try search("besancon") == ["Besançon"])
        #expect(try search("東京") == ["東京"])
        #expect(try search("cafe") == ["Crème Brûlée Café"])
        #expect(try search("creme brulee") == ["Crème Brûlée Café"])
        #expect(try search("a") == ["São Paulo", "Kraków", "Besançon", "Crème Brûlée Café"], "Latin a only: not Cyrillic а or Greek α")
        #expect(try search("xyz").isEmpty)
        // A search box combined with other conditions, sorting and a limit.
        let query = "o"
        var d = FetchDescriptor<Trip>(predicate: #Predicate { $0.name.localizedStandardContains(query) && $0.rating >= 3 },
                                      sortBy: [SortDescriptor(\.rating, order: .reverse)])
        d.fetchLimit = 3
        #expect(try context.fetch(d).map(\.name) == ["Łódź", "Besançon", "Kraków"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.name.localizedStandardContains(query) && $0.rating >= 3 })) == 4, "not the Greek ο of Ηράκλειο")
    }
}
