import Foundation
import Testing
import Strata

/// Inputs at the edges: any `fetchLimit` / `fetchOffset` a caller can pass, identifiers of
/// models the container does not have, batched results read after the store changed, and the
/// unlabeled configurations spelling.
@Suite struct FetchEdgeTests {
    static let edges: [Int?] = [nil, Int.max, Int.max - 1, Int.min, -1, 0, 1, 3, 7]

    /// What Foundation-style paging gives on a plain array: offset below 0 is 0, a limit of 0 or
    /// below is no limit.
    static func page<E>(_ all: [E], offset: Int?, limit: Int?) -> [E] {
        let start = min(max(0, offset ?? 0), all.count)
        let rest = all[start...]
        guard let limit, limit > 0 else { return Array(rest) }
        return Array(rest.prefix(limit))
    }

    private func seeded(_ dir: TemporaryDirectory) throws -> ModelContainer {
        let container = try ModelContainer(for: Schema([Trip.self, Vehicle.self, Car.self, Bike.self]),
                                           configurations: [ModelConfiguration(url: dir.store())])
        let context = ModelContext(container)
        for i in 0..<6 {
            context.insert(Trip(name: "t\(i)", startDate: Date(timeIntervalSince1970: Double(5 - i) * 86_400)))
            context.insert(i % 2 == 0 ? Car(name: "v\(i)", seats: i) : Bike(name: "v\(i)", isElectric: true))
        }
        try context.save()
        return container
    }

    @Test(arguments: edges, edges)
    func anyLimitAndOffsetPagesWithoutTrapping(limit: Int?, offset: Int?) throws {
        let dir = TemporaryDirectory()
        let container = try seeded(dir)
        let context = ModelContext(container)
        // A pending insert, so that stored rows and unsaved objects are merged.
        context.insert(Trip(name: "t9", startDate: Date(timeIntervalSince1970: 9 * 86_400)))
        let predicates: [Predicate<Trip>?] = [nil, #Predicate { $0.name != "t1" }]
        let sorts: [[SortDescriptor<Trip>]] = [[], [SortDescriptor(\.startDate)], [SortDescriptor(\.name, order: .reverse)]]
        for predicate in predicates {
            for sortBy in sorts {
                var all = FetchDescriptor<Trip>(predicate: predicate, sortBy: sortBy)
                let expected = try context.fetch(all).map(\.name)
                all.fetchLimit = limit
                all.fetchOffset = offset
                let want = Self.page(expected, offset: offset, limit: limit)
                #expect(try context.fetch(all).map(\.name) == want)
                #expect(try context.fetchCount(all) == want.count)
                #expect(try context.fetchIdentifiers(all).count == want.count)
                #expect(try context.fetch(all, batchSize: 2).map(\.name) == want)
                var visited: [String] = []
                try context.enumerate(all, batchSize: limit ?? 2) { visited.append($0.name) }
                #expect(visited == want)
            }
        }
        // A fetch of a base class across its subclasses pages the merged results.
        var vehicles = FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)])
        let every = try context.fetch(vehicles).map(\.name)
        vehicles.fetchLimit = limit
        vehicles.fetchOffset = offset
        #expect(try context.fetch(vehicles).map(\.name) == Self.page(every, offset: offset, limit: limit))
        #expect(try context.fetchCount(vehicles) == Self.page(every, offset: offset, limit: limit).count)
    }

    /// `id == x` alone, on a unique `UUID`, is answered by the index's row without testing it
    /// (`QueryPart.lookupIsAnswer`). The context's unsaved changes still count: an object
    /// whose id changed or that was deleted is not found by its old id, and an inserted one is
    /// found. With a sort, a page or a count, the answers are the same.
    @Test func aUniqueKeyLookupIsTheAnswerAndUnsavedChangesStillCount() throws {
        let dir = TemporaryDirectory()
        let container = try seeded(dir)
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.count == 6)
        func names(_ id: UUID, sorted: Bool = false, offset: Int? = nil) throws -> [String] {
            var d = FetchDescriptor<Trip>(predicate: #Predicate { $0.id == id }, sortBy: sorted ? [SortDescriptor(\.startDate)] : [])
            d.fetchOffset = offset
            let found = try context.fetch(d).map(\.name)
            #expect(try context.fetchCount(d) == found.count)
            return found
        }
        for trip in trips {
            #expect(try names(trip.id) == [trip.name])
            #expect(try names(trip.id, sorted: true) == [trip.name])
            #expect(try names(trip.id, offset: 1) == [])
        }
        #expect(try names(UUID()) == [])
        // Unsaved: a changed id, a deletion, an insert.
        let old = trips[0].id, moved = UUID()
        trips[0].id = moved
        context.delete(trips[1])
        let added = Trip(name: "new", startDate: .now)
        context.insert(added)
        #expect(try names(old) == [])
        #expect(try names(moved) == [trips[0].name])
        #expect(try names(trips[1].id) == [])
        #expect(try names(added.id) == ["new"])
        // Another context sees the store as saved.
        let other = ModelContext(container)
        #expect(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == old })).map(\.name) == [trips[0].name])
        try context.save()
        #expect(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == old })).isEmpty)
        #expect(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.id == moved })).map(\.name) == [trips[0].name])
    }

    /// A unique-key equality that is only the first part of a conjunction is not the answer:
    /// the rest of the predicate is still tested on the index's row. (The left side of the
    /// root's `&&` begins at the root's own offset; until 2026-11-30 it was taken for the whole
    /// predicate, and `id == x && name.contains("nothing")` found the trip. The planner's
    /// differential test met it with seed 1661596767.)
    @Test func aUniqueKeyEqualityFirstInAConjunctionStillTestsTheRest() throws {
        let dir = TemporaryDirectory()
        let container = try seeded(dir)
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(trips.count == 6)
        for trip in trips {
            let id = trip.id, name = trip.name, rating = trip.rating, missing = trip.name + " (not this)"
            let cases: [(Predicate<Trip>, [String])] = [
                (#Predicate { $0.id == id && $0.name.contains(missing) }, []),
                (#Predicate { $0.id == id && $0.name == missing }, []),
                (#Predicate { ($0.id == id && $0.rating == -1) && $0.name == name }, []),
                (#Predicate { ($0.id == id && $0.name == name) && $0.rating == -1 }, []),
                (#Predicate { $0.name.contains(missing) && $0.id == id }, []),
                (#Predicate { $0.id == id && $0.name.contains(name) }, [name]),
                (#Predicate { ($0.id == id && $0.name == name) && $0.rating == rating }, [name]),
            ]
            for (predicate, expected) in cases {
                let descriptor = FetchDescriptor<Trip>(predicate: predicate)
                #expect(try context.fetch(descriptor).map(\.name) == expected)
                #expect(try context.fetchCount(descriptor) == expected.count)
                #expect(try ModelContext(container).fetch(descriptor).map(\.name) == expected)
            }
        }
    }

    @Test func modelForAnIdentifierOfAnotherSchemaIsNoModelOfThisOne() throws {
        let dir = TemporaryDirectory()
        let container = try seeded(dir)
        let context = ModelContext(container)
        // An identifier decoded from elsewhere, naming a model this container does not have.
        let json = #"{"entityName":"Spaceship","storeIdentifier":"/elsewhere.store","rowID":1}"#
        let foreign = try JSONDecoder().decode(PersistentIdentifier.self, from: Data(json.utf8))
        #expect(context.model(for: foreign) as? Trip == nil)
        #expect(try context.existingModel(for: foreign) == nil)
        let none: Trip? = context.registeredModel(for: foreign)
        #expect(none == nil)
    }

    // Row order, and an order an index gives: the batches after the first read rows then.
    @Test(arguments: [[], [SortDescriptor(\Trip.startDate, order: .reverse)]])
    func batchesReadTheSnapshotTheirFetchCameFrom(sortBy: [SortDescriptor<Trip>]) throws {
        let dir = TemporaryDirectory()
        let container = try seeded(dir)
        let results = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: sortBy), batchSize: 2)
        #expect(results.count == 6)
        #expect(results[0].name == "t0")          // the first batch is made
        // Another context deletes a row of a later batch and changes another, and saves.
        let other = ModelContext(container)
        try other.delete(model: Trip.self, where: #Predicate { $0.name == "t4" })
        let t5 = try #require(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t5" })).first)
        t5.rating = 42
        try other.save()
        // The later batches still hold the rows the fetch found, as they were then.
        #expect(results.map(\.name) == ["t0", "t1", "t2", "t3", "t4", "t5"])
        #expect(results[5].rating == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 5)
    }

    @Test func configurationsWithoutALabel() throws {
        let dir = TemporaryDirectory()
        let books = ModelConfiguration("books", schema: Schema([Book.self]), url: dir.store("books"))
        let authors = ModelConfiguration("authors", schema: Schema([Author.self]), url: dir.store("authors"))
        let container = try ModelContainer(for: Schema([Book.self, Author.self]), books, authors)
        #expect(container.configurations.map(\.name) == ["books", "authors"])
        let context = ModelContext(container)
        let author = Author(name: "Ada")
        context.insert(author)
        let book = Book(title: "Notes")
        context.insert(book)
        book.author = author
        try context.save()
        #expect(FileManager.default.fileExists(atPath: dir.store("books").path))
        #expect(FileManager.default.fileExists(atPath: dir.store("authors").path))
        // One configuration without a label too.
        let single = try ModelContainer(for: Schema([Trip.self]), ModelConfiguration(url: dir.store("trips")))
        #expect(single.configurations.count == 1)
    }
}
