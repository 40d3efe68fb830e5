import Foundation
import Observation
import Strata

/// Trips named t0...t(n-1), rating i, one day apart, inserted and saved.
@discardableResult
func seedTrips(_ context: ModelContext, _ n: Int) throws -> [ConfTrip] {
    let trips = (0..<n).map { ConfTrip(name: "t\($0)", startDate: confDay($0), rating: $0) }
    for trip in trips { context.insert(trip) }
    try context.save()
    return trips
}

func names(_ trips: [ConfTrip]) -> [String] { trips.map(\.name) }

var byRating: FetchDescriptor<ConfTrip> { FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.rating)]) }

/// Records the notifications posted for one object.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(name: Notification.Name, userInfo: [AnyHashable: Any]?)] = []
    private var tokens: [any NSObjectProtocol] = []

    init(_ names: [Notification.Name], object: AnyObject) {
        for name in names {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] note in
                guard let self else { return }
                self.lock.withLock { self.entries.append((note.name, note.userInfo)) }
            })
        }
    }
    deinit { for token in tokens { NotificationCenter.default.removeObserver(token) } }

    var all: [(name: Notification.Name, userInfo: [AnyHashable: Any]?)] { lock.withLock { entries } }
    func clear() { lock.withLock { entries.removeAll() } }

    func identifiers(_ key: ModelContext.NotificationKey, at index: Int) -> [PersistentIdentifier] {
        let entries = all
        guard entries.indices.contains(index) else { return [] }
        return entries[index].userInfo?[key.rawValue] as? [PersistentIdentifier] ?? []
    }
}

/// Counts how often `withObservationTracking`'s onChange fires for what `read` reads.
final class Fired: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in lock.withLock { count += 1 } }
    }
}

extension Conformance {
    static let contextScenarios: [ConformanceScenario] = [
        ConformanceScenario("insertSaveFetchReopen", from: "ModelBasicsTests.insertSaveFetchReopen") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trip = ConfTrip(name: "Lisbon", startDate: confDay(3), budget: 9.99)
            trip.tags = ["sea", "food"]
            trip.address = ConfAddress(street: "Rua", city: "Lisboa")
            trip.status = .active
            trip.isExpanded = true
            let code = trip.code
            context.insert(trip)
            try check(context.hasChanges)
            try checkEqual(context.insertedModelsArray.count, 1)
            try context.save()
            try check(!context.hasChanges)
            let all = try context.fetch(FetchDescriptor<ConfTrip>())
            try checkEqual(all.count, 1)
            try checkIdentical(all.first, trip, "the fetch gives the inserted object")

            let reopened = ModelContext(try s.reopen())
            let loaded = try require(try reopened.fetch(FetchDescriptor<ConfTrip>()).first)
            try check(loaded !== trip)
            try checkEqual(loaded.code, code)
            try checkEqual(loaded.name, "Lisbon")
            try checkEqual(loaded.startDate, confDay(3))
            try checkEqual(loaded.budget, 9.99)
            try checkEqual(loaded.tags, ["sea", "food"])
            try checkEqual(loaded.address, ConfAddress(street: "Rua", city: "Lisboa"))
            try checkEqual(loaded.status, .active)
            try checkEqual(loaded.isExpanded, false, "a transient property is never persisted")
            let byCode = try reopened.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.code == code }))
            try check(byCode.count == 1 && byCode.first === loaded, "fetch by the unique attribute gives the registered object")
        },

        ConformanceScenario("fetchingTwiceGivesTheSameInstance", from: "ContextTests.fetchingTwiceGivesTheSameInstance") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try seedTrips(context, 5)
            let reader = ModelContext(s.container)
            let first = try reader.fetch(byRating)
            let second = try reader.fetch(byRating)
            try checkEqual(first.count, 5)
            try check(zip(first, second).allSatisfy { $0 === $1 }, "two fetches give the same objects")
            let t3 = try reader.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.name == "t3" }))
            try check(t3.count == 1 && t3.first === first[3])
            try checkIdentical(first[3].modelContext, reader)
            let ids = try reader.fetchIdentifiers(byRating)
            try checkIdentical(reader.model(for: ids[2]) as? ConfTrip, first[2], "model(for:) gives the registered object")
            try checkIdentical(reader.registeredModel(for: ids[4]) as ConfTrip?, first[4])
            var visited: [ConfTrip] = []
            try reader.enumerate(byRating, batchSize: 2) { visited.append($0) }
            try checkEqual(visited.count, 5)
            try check(zip(first, visited).allSatisfy { $0 === $1 }, "enumerate gives the registered objects")
            let other = try ModelContext(s.container).fetch(byRating)
            try checkEqual(other.count, 5)
            try check(zip(first, other).allSatisfy { $0 !== $1 && $0.code == $1.code }, "another context has its own objects")
            let mine = try context.fetch(byRating)
            try checkEqual(Set(identities(mine)).count, 5)
            try checkEqual(Set(identities(mine)), Set(identities(try context.fetch(FetchDescriptor<ConfTrip>()))))
        },

        ConformanceScenario("changeTracking", from: "ContextTests.changeTracking, ContextTests.deletingAnUnsavedInsertForgetsIt") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try check(!context.hasChanges)
            let a = ConfTrip(name: "a", startDate: confDay(0)), b = ConfTrip(name: "b", startDate: confDay(1))
            try check(!a.hasChanges && a.modelContext == nil)
            context.insert(a)
            context.insert(b)
            try check(context.hasChanges && a.hasChanges)
            try checkIdentical(a.modelContext, context)
            try checkEqual(context.insertedModelsArray.count, 2)
            try check(context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
            try context.save()
            try check(!context.hasChanges && !a.hasChanges)
            try check(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
            try check(!a.persistentModelID.isTemporary, "a saved object has its permanent identifier")

            a.name = "a2"
            try check(context.hasChanges && a.hasChanges && !b.hasChanges)
            try check(context.changedModelsArray.count == 1 && context.changedModelsArray.first as AnyObject === a)
            context.delete(b)
            try check(b.isDeleted && b.hasChanges)
            try check(context.deletedModelsArray.count == 1 && context.deletedModelsArray.first as AnyObject === b)
            try context.save()
            try check(!context.hasChanges)
            try check(!b.isDeleted, "isDeleted lasts until the save")
            try checkEqual(names(try ModelContext(s.container).fetch(FetchDescriptor<ConfTrip>())), ["a2"])

            // An unsaved insert deleted again is forgotten.
            let c = ConfTrip(name: "c", startDate: confDay(2))
            context.insert(c)
            context.delete(c)
            try check(c.isDeleted)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 1)
            try context.save()
            try check(!context.hasChanges)
            try checkEqual(names(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>())), ["a2"])
        },

        ConformanceScenario("rollbackDropsInsertsAndDeletesAndRestoresValues", from: "ContextTests.rollbackDropsInsertsAndDeletesAndRestoresValues") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 4)
            let (a, b, c) = (trips[0], trips[1], trips[2])
            a.name = "changed"
            a.tags = ["x"]
            a.budget = 12
            b.name = "changed then deleted"
            context.delete(b)
            context.delete(c)
            let fresh = ConfTrip(name: "fresh", startDate: confDay(9))
            context.insert(fresh)
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 3)

            context.rollback()
            try check(!context.hasChanges)
            try check(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
            try check(a.name == "t0" && a.tags == [] && a.budget == nil, "values restored")
            try check(b.name == "t1" && !b.isDeleted && !c.isDeleted)
            try check(!a.hasChanges && !b.hasChanges)
            try check(fresh.modelContext == nil && !fresh.hasChanges)
            let all = try context.fetch(byRating)
            try checkEqual(names(all), ["t0", "t1", "t2", "t3"])
            try check(all[0] === a && all[1] === b)
            try context.save()
            try checkEqual(names(try ModelContext(try s.reopen()).fetch(byRating)), ["t0", "t1", "t2", "t3"])
            // The context still works after a rollback.
            a.name = "after"
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.name == "after" })), 1)
        },

        ConformanceScenario("deleteIsAppliedAtSave", from: "ContextTests.deleteIsAppliedAtSave") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 3)
            context.delete(trips[1])
            try check(trips[1].isDeleted)
            try checkEqual(names(try context.fetch(byRating)), ["t0", "t2"])
            try checkEqual(try context.fetchCount(FetchDescriptor<ConfTrip>()), 2)
            var stored = byRating
            stored.includePendingChanges = false
            try checkEqual(names(try context.fetch(stored)), ["t0", "t1", "t2"], "the store still has it")
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 3)
            try context.save()
            try checkEqual(names(try ModelContext(try s.reopen()).fetch(byRating)), ["t0", "t2"])
        },

        ConformanceScenario("insertingADeletedObjectUndoesTheDeletion", from: "ContextTests.insertingADeletedObjectUndoesTheDeletion") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 2)
            let id = trips[0].persistentModelID
            context.delete(trips[0])
            try check(trips[0].isDeleted)
            context.insert(trips[0])
            try check(!trips[0].isDeleted)
            try check(context.deletedModelsArray.isEmpty)
            try context.save()
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 2)
            try check(try ModelContext(s.container).existingModel(for: id) != nil)
            context.delete(trips[0])
            try context.save()
            try check(try ModelContext(s.container).existingModel(for: id) == nil, "nil for an object that is gone")
            try checkEqual(try ModelContext(try s.reopen()).fetchCount(FetchDescriptor<ConfTrip>()), 1)
        },

        ConformanceScenario("transactionAndAutosave", from: "ContextTests.transactionSavesAndAThrowingBlockSavesNothing, ContextTests.autosaveOnProcessPendingChanges") { env in
            struct Stop: Error {}
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            try context.transaction {
                context.insert(ConfTrip(name: "in a transaction", startDate: confDay(0)))
            }
            try check(!context.hasChanges)
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 1)
            try checkThrows("the block's error", matching: { $0 is Stop }) {
                try context.transaction {
                    context.insert(ConfTrip(name: "never saved", startDate: confDay(1)))
                    throw Stop()
                }
            }
            try checkEqual(try ModelContext(s.container).fetchCount(FetchDescriptor<ConfTrip>()), 1)
            try check(context.hasChanges, "the changes stay pending, as in SwiftData")
            context.rollback()

            context.insert(ConfTrip(name: "autosaved", startDate: confDay(2)))
            context.processPendingChanges()
            try check(context.hasChanges, "autosave is off by default")
            context.autosaveEnabled = true
            context.processPendingChanges()
            try check(!context.hasChanges)
            try checkEqual(Set(names(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfTrip>()))), ["in a transaction", "autosaved"])
        },

        ConformanceScenario("modelForIdentifier", from: "ContextTests.modelForIdentifier, JSONCustomStoreTests.savedObjectsTakeTheirPermanentIdentifiers, FetchEdgeTests.modelForAnIdentifierOfAnotherSchemaIsNoModelOfThisOne") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 3)
            let id = trips[1].persistentModelID
            try check(!id.isTemporary)
            try checkEqual(id.entityName, "ConfTrip")
            try checkIdentical(context.model(for: id) as? ConfTrip, trips[1])
            try checkIdentical(context.registeredModel(for: id) as ConfTrip?, trips[1])

            let other = ModelContext(s.container)
            try check((other.registeredModel(for: id) as ConfTrip?) == nil, "not registered before it is loaded")
            let loaded = try require(other.model(for: id) as? ConfTrip)
            try check(loaded.name == "t1" && loaded.rating == 1)
            try check(loaded !== trips[1])
            try checkIdentical(other.registeredModel(for: id) as ConfTrip?, loaded)
            try checkIdentical(other.model(for: id) as? ConfTrip, loaded)
            try checkIdentical(try other.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.rating == 1 })).first, loaded)
            // An identifier decoded from elsewhere, naming a model this container does not have.
            let json = #"{"entityName":"Spaceship","storeIdentifier":"/elsewhere.store","rowID":1}"#
            let foreign = try JSONDecoder().decode(PersistentIdentifier.self, from: Data(json.utf8))
            try check(other.model(for: foreign) as? ConfTrip == nil)
            try check(try other.existingModel(for: foreign) == nil)
            try check((other.registeredModel(for: foreign) as ConfTrip?) == nil)
        },

        ConformanceScenario("identifiersSurviveReopen", from: "IdentifierPredicateTests.fetchAndCountByIdentifier (in another container), JSONCustomStoreTests.savedObjectsTakeTheirPermanentIdentifiers",
                            requires: [.stableIdentifiers]) { env in
            let s = try env.open(ConfTrip.self)
            let trips = try seedTrips(ModelContext(s.container), 3)
            let ids = trips.map(\.persistentModelID)
            // Codable: an identifier written down and read back names the same object.
            let decoded = try JSONDecoder().decode([PersistentIdentifier].self, from: try JSONEncoder().encode(ids))
            try checkEqual(decoded, ids)
            let context = ModelContext(try s.reopen())
            let again = try context.fetchIdentifiers(byRating)
            try checkEqual(again, ids, "the same identifiers from another container")
            let second = try require(try context.existingModel(for: decoded[1]) as? ConfTrip, "the identifier names no stored object")
            try checkEqual(second.name, "t1")
            try checkIdentical(context.model(for: decoded[1]) as? ConfTrip, second)
            let id = decoded[2]
            try checkEqual(names(try context.fetch(FetchDescriptor<ConfTrip>(predicate: #Predicate { $0.persistentModelID == id }))), ["t2"])
        },

        ConformanceScenario("willSaveAndDidSaveNotifications", from: "ContextTests.willSaveAndDidSaveNotifications") { env in
            let s = try env.open(ConfTrip.self)
            let context = ModelContext(s.container)
            let trips = try seedTrips(context, 3)
            let log = NotificationLog([ModelContext.willSave, ModelContext.didSave], object: context)
            let a = ConfTrip(name: "a", startDate: confDay(10)), b = ConfTrip(name: "b", startDate: confDay(11))
            context.insert(a)
            context.insert(b)
            trips[0].name = "changed"
            let deletedID = trips[1].persistentModelID
            context.delete(trips[1])
            try context.save()
            try checkEqual(log.all.map(\.name), [ModelContext.willSave, ModelContext.didSave])
            try checkEqual(Set(log.identifiers(.insertedIdentifiers, at: 1)), [a.persistentModelID, b.persistentModelID],
                           "didSave names the inserted objects by their permanent identifiers")
            try checkEqual(log.identifiers(.updatedIdentifiers, at: 1), [trips[0].persistentModelID])
            try checkEqual(log.identifiers(.deletedIdentifiers, at: 1), [deletedID])
            // A save without changes posts nothing; another context's save is not this context's.
            log.clear()
            try context.save()
            try check(log.all.isEmpty, "a save without changes posts nothing")
            let other = ModelContext(s.container)
            other.insert(ConfTrip(name: "other", startDate: confDay(12)))
            try other.save()
            try check(log.all.isEmpty, "another context's save is not this context's")
        },

        ConformanceScenario("observationOfPersistedProperties", from: "ObservationTests.settingAPersistedPropertyOfAFetchedObjectFires, ObservationTests.rollbackRestoringAValueFires") { env in
            let s = try env.open(ConfTrip.self)
            let setup = ModelContext(s.container)
            setup.insert(ConfTrip(name: "Lisbon", startDate: confDay(0)))
            setup.insert(ConfTrip(name: "Porto", startDate: confDay(1)))
            try setup.save()
            let context = ModelContext(s.container)
            let trips = try context.fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(names(trips), ["Lisbon", "Porto"])
            let (lisbon, porto) = (trips[0], trips[1])
            let name = Fired { _ = lisbon.name }
            let other = Fired { _ = porto.name }
            let budget = Fired { _ = lisbon.budget }
            lisbon.name = "Lisboa"
            try checkEqual(name.value, 1)
            try checkEqual(other.value, 0, "another object's property is not observed")
            try checkEqual(budget.value, 0, "another property is not observed")
            try check(lisbon.hasChanges)
            let again = Fired { _ = lisbon.name }
            context.rollback()
            try checkEqual(again.value, 1, "a rollback that restores a value fires")
            try checkEqual(lisbon.name, "Lisbon")
        },

        ConformanceScenario("observationOfRelationships", from: "ObservationTests.aRelationshipChangeFiresOnBothSides, ObservationTests.aRelationshipSetOnTheToManySideFiresOnTheToOneSide") { env in
            let s = try env.open(ConfAuthor.self, ConfBook.self)
            let context = ModelContext(s.container)
            let first = ConfAuthor("Saramago"), second = ConfAuthor("Pessoa")
            let book = ConfBook("Ensaio"), loose = ConfBook("Os Maias")
            context.insert(first)
            context.insert(second)
            context.insert(loose)
            first.books = [book]
            try context.save()
            let firstBooks = Fired { _ = first.books }
            let secondBooks = Fired { _ = second.books }
            let author = Fired { _ = book.author }
            book.author = second
            try checkEqual(author.value, 1, "the side that was set")
            try checkEqual(secondBooks.value, 1, "the new other side")
            try checkEqual(firstBooks.value, 1, "the old other side")
            try checkEqual(second.books.map(\.title), ["Ensaio"])
            try check(first.books.isEmpty)
            let side = Fired { _ = loose.author }
            first.books = [loose]
            try checkEqual(side.value, 1, "setting the to-many fires on the to-one side")
            try checkIdentical(loose.author, first)
        },

        ConformanceScenario("aSecondContainerOnTheSameStore", from: "ContextTests.aSecondContainerOnTheSameURLSharesTheOpenStore") { env in
            let s = try env.open(ConfTrip.self)
            try seedTrips(ModelContext(s.container), 2)
            let second = try s.reopen()
            try checkEqual(try ModelContext(second).fetchCount(FetchDescriptor<ConfTrip>()), 2)
            let a = ModelContext(s.container), b = ModelContext(second)
            a.insert(ConfTrip(name: "from first", startDate: confDay(3)))
            b.insert(ConfTrip(name: "from second", startDate: confDay(4)))
            try a.save()
            try b.save()
            let all = try ModelContext(s.container).fetch(FetchDescriptor<ConfTrip>(sortBy: [SortDescriptor(\.name)]))
            try checkEqual(names(all), ["from first", "from second", "t0", "t1"])
            try checkEqual(Set(all.map(\.persistentModelID)).count, 4, "distinct identifiers")
            try checkEqual(try ModelContext(second).fetchCount(FetchDescriptor<ConfTrip>()), 4)
        },
    ]
}
