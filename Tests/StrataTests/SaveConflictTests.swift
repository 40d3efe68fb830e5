// A save that changes or deletes an object another context (or process) deleted after this
// context read it fails with a typed conflict naming the objects, writes nothing, and leaves
// the context's changes in place (Core Data's default): a deleted object never comes back.
import Foundation
import Testing
import Strata

@Suite struct SaveConflictTests {
    let dir = TemporaryDirectory()

    private func threeTrips() throws -> (ModelContainer, [Trip]) {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let trips = (0..<3).map { Trip(name: "trip \($0)", startDate: Date(timeIntervalSince1970: Double($0))) }
        for trip in trips { context.insert(trip) }
        try context.save()
        return (container, trips)
    }

    private func storedNames(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    @Test func changingAnObjectAnotherContextDeletedIsAConflict() throws {
        let (container, trips) = try threeTrips()
        let a = trips[0].modelContext!
        let b = ModelContext(container)
        let id = trips[0].persistentModelID
        let other = try #require(b.model(for: id) as? Trip)
        b.delete(other)
        try b.save()

        trips[0].name = "changed after the delete"
        trips[1].name = "changed too"
        var thrown: StrataError?
        do { try a.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(thrown?.objects == [id])
        #expect(thrown?.message.contains("Trip") == true)
        // Nothing was written: the deleted trip is not back, the other change is not saved.
        #expect(try storedNames(container) == ["trip 1", "trip 2"])
        // The context keeps its changes, for the caller to roll back or refetch.
        #expect(a.hasChanges)
        #expect(trips[0].name == "changed after the delete")
        #expect(trips[1].name == "changed too")
        a.rollback()
        #expect(!a.hasChanges)
        #expect(try storedNames(container) == ["trip 1", "trip 2"])
    }

    @Test func theSameSaveGoesThroughOnceTheConflictIsResolved() throws {
        let (container, trips) = try threeTrips()
        let a = trips[0].modelContext!
        let b = ModelContext(container)
        b.delete(try #require(b.model(for: trips[0].persistentModelID) as? Trip))
        try b.save()
        trips[0].name = "lost"
        trips[1].name = "kept"
        #expect(throws: StrataError.self) { try a.save() }
        // The caller gives up the change to the deleted object and saves the rest.
        a.delete(trips[0])
        #expect(throws: StrataError.self) { try a.save() }   // deleting it is a conflict too
        a.rollback()
        trips[1].name = "kept"
        try a.save()
        #expect(try storedNames(container) == ["kept", "trip 2"])
    }

    @Test func deletingAnObjectAnotherContextDeletedIsAConflict() throws {
        let (container, trips) = try threeTrips()
        let a = trips[0].modelContext!
        let b = ModelContext(container)
        b.delete(try #require(b.model(for: trips[2].persistentModelID) as? Trip))
        try b.save()
        a.delete(trips[2])
        trips[0].name = "renamed"
        var thrown: StrataError?
        do { try a.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict)
        #expect(thrown?.objects == [trips[2].persistentModelID])
        #expect(try storedNames(container) == ["trip 0", "trip 1"])
        #expect(a.hasChanges)
    }

    /// Objects a delete rule reaches whose rows are already gone are not a conflict: the rule
    /// only asks for what it finds.
    @Test func aDeletionByAnotherContextOfAnObjectThatWasNotChangedIsNoConflict() throws {
        let (container, trips) = try threeTrips()
        let a = trips[0].modelContext!
        let b = ModelContext(container)
        b.delete(try #require(b.model(for: trips[0].persistentModelID) as? Trip))
        try b.save()
        trips[1].name = "renamed"        // trip 0, deleted by b, is held but unchanged
        try a.save()
        #expect(try storedNames(container) == ["renamed", "trip 2"])
    }
}
