// Optimistic locking through the custom-store API (`DefaultSnapshot.version`): the version an
// update or deletion is sent with is the one its context read, whatever the bridge or other
// contexts read since, so a change made over another writer's is a conflict and never a lost
// update. Until 2026-12-01 StrataPostgres kept one version per row for a whole container (the
// last one read), and another context's later read hid the other writer's change.
import Foundation
import Testing
@testable import Strata

@Suite struct CustomStoreVersionTests {
    /// A container on a counting store that keeps versions, its bridge keeping `budget` bytes
    /// of records (nil: the default).
    private func open(budget: Int? = nil) throws -> (CountingStoreConfiguration, ModelContainer) {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]), keepsVersions: true)
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        if let budget { for handle in container.handles { handle.custom?.recordBudget = budget } }
        let seed = ModelContext(container)
        seed.insert(Journey("Lisbon", day: 1))
        seed.insert(Journey("Porto", day: 2))
        try seed.save()
        return (configuration, container)
    }

    private func journey(_ name: String, in context: ModelContext) throws -> Journey {
        try #require(try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name })).first)
    }

    private func names(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.start)])).map(\.name)
    }

    private func saveConflict(_ context: ModelContext) -> StrataError? {
        do { try context.save() } catch let error as StrataError { return error } catch { return nil }
        return nil
    }

    @Test(arguments: [nil, 0] as [Int?])
    func aStaleUpdateIsAConflictEvenAfterAnotherContextReadTheRowAgain(budget: Int?) throws {
        let (configuration, container) = try open(budget: budget)
        let a = ModelContext(container)
        let lisbon = try journey("Lisbon", in: a)
        // Another writer changes the row...
        configuration.changeElsewhere(lisbon.persistentModelID) { $0["name"] = .string("Lisboa") }
        // ...and another context of this container reads it, changed (the bridge now holds
        // the new version; with a budget of 0 it holds nothing, and the save reads it again).
        #expect(try journey("Lisboa", in: ModelContext(container)).name == "Lisboa")
        lisbon.budget = 100
        let thrown = saveConflict(a)
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(thrown?.objects == [lisbon.persistentModelID])
        #expect(try names(container) == ["Lisboa", "Porto"], "never a lost update")
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [1], "sent at the version the context read")
        // Read again, the object saves.
        a.rollback()
        let fresh = try journey("Lisboa", in: a)
        fresh.budget = 100
        try a.save()
        #expect(try journey("Lisboa", in: ModelContext(container)).budget == 100)
    }

    @Test(arguments: [nil, 0] as [Int?])
    func aStaleDeletionIsAConflictAndTheRowStays(budget: Int?) throws {
        let (configuration, container) = try open(budget: budget)
        let a = ModelContext(container)
        let porto = try journey("Porto", in: a)
        configuration.changeElsewhere(porto.persistentModelID) { $0["budget"] = .double(7) }
        _ = try journey("Porto", in: ModelContext(container))
        a.delete(porto)
        #expect(saveConflict(a)?.code == .saveConflict)
        #expect(try names(container) == ["Lisbon", "Porto"], "never a row deleted over another writer's change")
    }

    /// The saving context's objects take the versions their save gave: they save again, and
    /// each save is sent at the version the one before gave.
    @Test func aContextSavesTheSameObjectAgainAndAgain() throws {
        let (configuration, container) = try open()
        let a = ModelContext(container)
        let lisbon = try journey("Lisbon", in: a)
        for i in 1...3 {
            lisbon.budget = Double(i)
            try a.save()
            #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [Int64(i)])
        }
        let inserted = Journey("Faro", day: 3)
        a.insert(inserted)
        try a.save()
        inserted.budget = 1
        try a.save()
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [1], "an insert's version is the one its save gave")
        a.delete(inserted)
        try a.save()
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [2])
    }

    /// Two contexts of one container meet the engine's rule (the later save wins): a version
    /// this container's own save replaced is not another writer's change.
    @Test func twoContextsOfOneContainerMeetTheEnginesRule() throws {
        let (configuration, container) = try open()
        let a = ModelContext(container), b = ModelContext(container), c = ModelContext(container)
        let lisbonA = try journey("Lisbon", in: a), lisbonB = try journey("Lisbon", in: b), lisbonC = try journey("Lisbon", in: c)
        lisbonB.budget = 2
        try b.save()
        lisbonC.budget = 3
        try c.save()
        lisbonA.name = "Lisbon, at last"
        try a.save()
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [3], "sent at the version the container's saves took it to")
        #expect(try journey("Lisbon, at last", in: ModelContext(container)).budget == nil, "the later save wins, whole (its stale budget too), as on the engine")
        // But a change by another writer between the steps is still a conflict.
        let d = ModelContext(container)
        let lisbonD = try journey("Lisbon, at last", in: d)
        lisbonA.budget = 4
        try a.save()
        configuration.changeElsewhere(lisbonA.persistentModelID) { $0["budget"] = .double(5) }
        lisbonD.budget = 6
        #expect(saveConflict(d)?.code == .saveConflict)
    }

    /// An upsert by one context over an object another context of the container holds: the
    /// store says which version the upsert replaced (`replacedVersions`), so the other context's
    /// save wins over it, as on the engine. A change by another writer after the upsert is still
    /// a conflict.
    @Test func anUpsertByAnotherContextOfTheContainerMeetsTheEnginesRule() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]), uniqueProperty: "name", keepsVersions: true)
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let seed = ModelContext(container)
        seed.insert(Journey("Lisbon", day: 1))
        try seed.save()
        let b = ModelContext(container)
        let lisbonB = try journey("Lisbon", in: b)
        let a = ModelContext(container)
        a.insert(Journey("Lisbon", day: 5, budget: 9))
        try a.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Journey>()) == 1, "an upsert, not a second object")
        lisbonB.tags = ["b"]
        try b.save()
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [2], "sent at the version the upsert gave")
        let stored = try journey("Lisbon", in: ModelContext(container))
        #expect(stored.tags == ["b"] && stored.budget == nil, "the later save wins, whole, as on the engine")
        // Another writer's change after that: the stale object's save is a conflict.
        let c = ModelContext(container)
        let lisbonC = try journey("Lisbon", in: c)
        configuration.changeElsewhere(lisbonC.persistentModelID) { $0["budget"] = .double(3) }
        lisbonC.tags = ["c"]
        #expect(saveConflict(c)?.code == .saveConflict)
    }

    /// A store that keeps no versions is sent none: its updates are not checked.
    @Test func aStoreWithoutVersionsIsSentNone() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let context = ModelContext(container)
        let journey = Journey("Lisbon", day: 1)
        context.insert(journey)
        try context.save()
        journey.budget = 1
        try context.save()
        #expect(configuration.lastChanged.withLock { $0.map(\.version) } == [nil])
    }
}
