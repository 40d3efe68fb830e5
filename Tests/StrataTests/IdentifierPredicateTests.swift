import Foundation
import Testing
import Strata

/// `#Predicate { $0.persistentModelID == id }` and friends, on models with and without
/// relationships (those without were answered from throwaway objects that had no identity).
@Suite struct IdentifierPredicateTests {
    /// Five trips, saved; the context that saved them keeps them registered.
    private func seeded(_ dir: TemporaryDirectory) throws -> (ModelContainer, [PersistentIdentifier], ModelContext, [Trip]) {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let trips = (0..<5).map { Trip(name: "t\($0)", startDate: Date(timeIntervalSince1970: Double($0) * 86_400)) }
        for trip in trips { context.insert(trip) }
        try context.save()
        return (container, trips.map(\.persistentModelID), context, trips)
    }

    @Test(arguments: [false, true])
    func fetchAndCountByIdentifier(freshContext: Bool) throws {
        let dir = TemporaryDirectory()
        let (container, ids, seeding, trips) = try seeded(dir)
        let id = ids[2]
        let context = freshContext ? ModelContext(container) : seeding
        defer { withExtendedLifetime(trips) {} }
        let found = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(found.map(\.name) == ["t2"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.persistentModelID == id })) == 1)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.persistentModelID != id })) == 4)
        // With another condition, and with the identifier on the right.
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.persistentModelID == id && $0.name == "t2" })) == 1)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.persistentModelID == id && $0.name == "t3" })) == 0)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { id == $0.persistentModelID })) == 1)
        // A list of identifiers.
        let some = [ids[0], ids[4]]
        let listed = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { some.contains($0.persistentModelID) }, sortBy: [SortDescriptor(\.name)]))
        #expect(listed.map(\.name) == ["t0", "t4"])
        #expect(try context.fetchIdentifiers(FetchDescriptor<Trip>(predicate: #Predicate { some.contains($0.persistentModelID) })) == [ids[0], ids[4]])
    }

    @Test func sortingByIdentifierUsesTheRowsIdentity() throws {
        let dir = TemporaryDirectory()
        let (container, ids, _, _) = try seeded(dir)
        let sorted = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.persistentModelID, order: .reverse)]))
        #expect(sorted.map(\.persistentModelID) == ids.sorted().reversed())
    }

    @Test(arguments: [false, true])
    func deleteByIdentifier(freshContext: Bool) throws {
        let dir = TemporaryDirectory()
        let (container, ids, seeding, trips) = try seeded(dir)
        let id = ids[1]
        let context = freshContext ? ModelContext(container) : seeding
        defer { withExtendedLifetime(trips) {} }
        try context.delete(model: Trip.self, where: #Predicate { $0.persistentModelID == id })
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["t0", "t2", "t3", "t4"])
    }

    @Test func anIdentifierOfAnotherModelOrStoreFindsNothing() throws {
        let dir = TemporaryDirectory()
        let (container, ids, _, _) = try seeded(dir)
        let other = try ModelContainer(for: Person.self, configurations: ModelConfiguration(url: dir.store("people")))
        let otherContext = ModelContext(other)
        otherContext.insert(Person(first: "a", last: "b", email: "c"))
        try otherContext.save()
        let personID = try #require(try otherContext.fetchIdentifiers(FetchDescriptor<Person>()).first)
        // Same row number, other model and store: not a Trip.
        #expect(personID.rowID == ids[0].rowID)
        let wrong = [personID]
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { wrong.contains($0.persistentModelID) })) == 0)
    }

    @Test func subclassesAreFoundThroughTheBaseByIdentifier() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Schema([Vehicle.self, Car.self, Bike.self]), configurations: [ModelConfiguration(url: dir.store())])
        let context = ModelContext(container)
        let car = Car(name: "sedan", seats: 5)
        context.insert(Vehicle(name: "cart", wheels: 3))
        context.insert(car)
        context.insert(Bike(name: "ebike", isElectric: true))
        try context.save()
        let id = car.persistentModelID
        let found = try ModelContext(container).fetch(FetchDescriptor<Vehicle>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(found.map(\.name) == ["sedan"])
        #expect(found.first is Car)
    }
}
