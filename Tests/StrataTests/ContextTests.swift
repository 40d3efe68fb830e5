import Foundation
import Testing
import Strata

// ModelContext and ModelContainer through the public API: identity, change tracking,
// rollback, deletes, counting and identifiers, batches, pending changes, unique upserts and
// conflicts, notifications, configurations, schema errors.

/// Two versions of one model (same name, "Memo"), for the schema mismatch test.
enum MemoV1 {
    final class Memo: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        init() {}
    }
}
enum MemoV2 {
    final class Memo: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: Int = 0      // was a String
        init() {}
    }
}

/// A stored `let` without a wrapper: a schema error.
final class HalfMarked: PersistentModel {
    @Attribute var name: String = ""
    let createdBy: String = "nobody"
    init() {}
}

/// Records notifications posted for one object.
final class NotificationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(name: Notification.Name, userInfo: [AnyHashable: Any]?)] = []
    private var tokens: [any NSObjectProtocol] = []

    init(_ names: [Notification.Name], object: AnyObject) {
        for name in names {
            tokens.append(NotificationCenter.default.addObserver(forName: name, object: object, queue: nil) { [weak self] n in
                guard let self else { return }
                self.lock.withLock { self.entries.append((n.name, n.userInfo)) }
            })
        }
    }
    deinit { for t in tokens { NotificationCenter.default.removeObserver(t) } }

    var all: [(name: Notification.Name, userInfo: [AnyHashable: Any]?)] { lock.withLock { entries } }
    func clear() { lock.withLock { entries.removeAll() } }
}

private func day(_ n: Double) -> Date { Date(timeIntervalSinceReferenceDate: 700_000_000 + n * 86_400) }

private func memory() -> ModelConfiguration { ModelConfiguration(isStoredInMemoryOnly: true) }

/// Trips named t0...t(n-1), rating i, one day apart, saved.
@discardableResult
private func seedTrips(_ context: ModelContext, _ n: Int) throws -> [Trip] {
    let trips = (0..<n).map { i -> Trip in
        let t = Trip(name: "t\(i)", startDate: day(Double(i)))
        t.rating = i
        return t
    }
    for t in trips { context.insert(t) }
    try context.save()
    return trips
}

private func names(_ trips: [Trip]) -> [String] { trips.map(\.name) }

@Suite struct ContextTests {
    // MARK: Identity

    @Test func fetchingTwiceGivesTheSameInstance() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try seedTrips(context, 5)

        let reader = ModelContext(container)
        let first = try reader.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        let second = try reader.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(first.count == 5)
        for (a, b) in zip(first, second) { #expect(a === b) }
        let t3 = try reader.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t3" }))
        #expect(t3.count == 1 && t3.first === first[3])
        #expect(first[3].modelContext === reader)
        // One object per row: every fetch path hands out the registered object.
        let ids = try reader.fetchIdentifiers(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(reader.model(for: ids[2]) as? Trip === first[2])
        #expect((reader.registeredModel(for: ids[4]) as Trip?) === first[4])
        var visited: [Trip] = []
        try reader.enumerate(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]), batchSize: 2) { visited.append($0) }
        #expect(visited.count == 5)
        for (a, b) in zip(first, visited) { #expect(a === b) }
        // Another context has its own objects for the same rows.
        let other = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(other.count == 5)
        for (a, b) in zip(first, other) { #expect(a !== b && a.id == b.id) }
        // The inserting context: the inserted objects are the stored ones.
        let mine = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(Set(mine.map(ObjectIdentifier.init)).count == 5)
        #expect(Set(mine.map(ObjectIdentifier.init)) == Set(try context.fetch(FetchDescriptor<Trip>()).map(ObjectIdentifier.init)))
    }

    // MARK: Change tracking

    @Test func changeTracking() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        #expect(!context.hasChanges)
        let a = Trip(name: "a", startDate: day(0))
        let b = Trip(name: "b", startDate: day(1))
        #expect(!a.hasChanges && a.modelContext == nil)
        context.insert(a)
        context.insert(b)
        #expect(context.hasChanges)
        #expect(a.hasChanges && a.modelContext === context)
        #expect(context.insertedModelsArray.map { $0 as AnyObject }.contains { $0 === a })
        #expect(context.insertedModelsArray.count == 2)
        #expect(context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
        try context.save()
        #expect(!context.hasChanges && !a.hasChanges)
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)

        a.name = "a2"
        #expect(context.hasChanges && a.hasChanges && !b.hasChanges)
        #expect(context.changedModelsArray.count == 1 && context.changedModelsArray.first as AnyObject === a)
        context.delete(b)
        #expect(b.isDeleted && b.hasChanges)
        #expect(context.deletedModelsArray.count == 1 && context.deletedModelsArray.first as AnyObject === b)
        #expect(context.insertedModelsArray.isEmpty)
        try context.save()
        #expect(!context.hasChanges)
        #expect(!b.isDeleted, "isDeleted lasts until the save")
        #expect(context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(stored.map(\.name) == ["a2"])
    }

    @Test func deletingAnUnsavedInsertForgetsIt() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let a = Trip(name: "a", startDate: day(0))
        context.insert(a)
        context.delete(a)
        #expect(a.isDeleted)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
        #expect(!context.hasChanges)
    }

    // MARK: Rollback

    @Test func rollbackDropsInsertsAndDeletesAndRestoresValues() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let trips = try seedTrips(context, 4)
        let (a, b, c) = (trips[0], trips[1], trips[2])
        a.name = "changed"
        a.tags = ["x"]
        a.budget = 12
        b.name = "changed then deleted"
        context.delete(b)
        context.delete(c)
        let fresh = Trip(name: "fresh", startDate: day(9))
        context.insert(fresh)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 3)

        context.rollback()
        #expect(!context.hasChanges)
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty && context.deletedModelsArray.isEmpty)
        #expect(a.name == "t0" && a.tags == [] && a.budget == nil)
        #expect(b.name == "t1" && !b.isDeleted && !c.isDeleted)
        #expect(!a.hasChanges && !b.hasChanges)
        #expect(fresh.modelContext == nil && !fresh.hasChanges)
        let all = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(names(all) == ["t0", "t1", "t2", "t3"])
        #expect(all[0] === a && all[1] === b)
        try context.save()   // nothing to save
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(names(stored) == ["t0", "t1", "t2", "t3"])
        // The context still works after a rollback.
        a.name = "after"
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "after" })).count == 1)
    }

    // MARK: Deleting

    @Test func deleteIsAppliedAtSave() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let trips = try seedTrips(context, 3)
        context.delete(trips[1])
        #expect(trips[1].isDeleted)
        #expect(names(try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))) == ["t0", "t2"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 2)
        var stored = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)])
        stored.includePendingChanges = false
        #expect(names(try context.fetch(stored)) == ["t0", "t1", "t2"], "the store still has it")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 3)
        try context.save()
        #expect(names(try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))) == ["t0", "t2"])
    }

    @Test func deleteModelWhereOnUnregisteredRows() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let container = try ModelContainer(for: Trip.self, configurations: config)
            try seedTrips(ModelContext(container), 10)

            let context = ModelContext(container)   // nothing registered here
            try context.delete(model: Trip.self, where: #Predicate { $0.rating < 3 })
            #expect(context.hasChanges)
            // Not applied before the save...
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 10)
            // ...but this context's fetches no longer return the rows.
            let visible = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
            #expect(visible.map(\.rating) == Array(3...9))
            #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 7)
            #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating <= 4 })) == 2)
            #expect(try context.fetchIdentifiers(FetchDescriptor<Trip>()).count == 7)
            var paged = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)])
            paged.fetchLimit = 2
            #expect(try context.fetch(paged).map(\.rating) == [3, 4])
            try context.save()
            #expect(!context.hasChanges)
            let after = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
            #expect(after.map(\.rating) == Array(3...9))
        }
        // And on disk.
        let reopened = try ModelContainer(for: Trip.self, configurations: config)
        #expect(try ModelContext(reopened).fetchCount(FetchDescriptor<Trip>()) == 7)
    }

    @Test func deleteModelWhereOnRegisteredAndInsertedObjects() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let trips = try seedTrips(context, 6)
        let extra = Trip(name: "unsaved", startDate: day(20))
        extra.rating = 1
        context.insert(extra)
        let kept = Trip(name: "unsaved kept", startDate: day(21))
        kept.rating = 50
        context.insert(kept)
        try context.delete(model: Trip.self, where: #Predicate { $0.rating < 2 })
        #expect(trips[0].isDeleted && trips[1].isDeleted && !trips[2].isDeleted)
        #expect(extra.isDeleted && !kept.isDeleted)
        #expect(Set(context.deletedModelsArray.map { ObjectIdentifier($0 as AnyObject) }).isSuperset(of: [ObjectIdentifier(trips[0]), ObjectIdentifier(trips[1])]))
        #expect(try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)])).map(\.rating) == [2, 3, 4, 5, 50])
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)])).map(\.rating) == [2, 3, 4, 5, 50])

        // Without a predicate: everything.
        try context.delete(model: Trip.self)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 5)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func rollbackUndoesDeleteModelWhere() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        try seedTrips(ModelContext(container), 5)
        let context = ModelContext(container)
        try context.delete(model: Trip.self, where: #Predicate { $0.rating >= 1 })
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 5)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 5)
    }

    // MARK: Counting, identifiers, batches

    @Test func fetchCountAndIdentifiersAgreeWithFetch() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try seedTrips(context, 20)
        let pending = Trip(name: "pending", startDate: day(-1))
        pending.rating = 7
        context.insert(pending)
        let descriptors: [FetchDescriptor<Trip>] = {
            var list: [FetchDescriptor<Trip>] = [
                FetchDescriptor(),
                FetchDescriptor(predicate: #Predicate { $0.rating >= 7 }),
                FetchDescriptor(predicate: #Predicate { $0.rating >= 7 }, sortBy: [SortDescriptor(\.startDate, order: .reverse)]),
                FetchDescriptor(predicate: #Predicate { $0.name.starts(with: "t1") }, sortBy: [SortDescriptor(\.name)]),
            ]
            var paged = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating), SortDescriptor(\.name)])
            paged.fetchOffset = 5
            paged.fetchLimit = 4
            list.append(paged)
            return list
        }()
        for d in descriptors {
            let objects = try context.fetch(d)
            #expect(try context.fetchCount(d) == objects.count)
            let ids = try context.fetchIdentifiers(d)
            #expect(ids == objects.map(\.persistentModelID))
            for (id, o) in zip(ids, objects) { #expect(context.model(for: id) as? Trip === o) }
        }
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 21)
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == 7 })) == 2)
        let page = try context.fetch(descriptors[4])
        #expect(page.map(\.rating) == [5, 6, 7, 7])
        #expect(page[2].name == "pending" && page[3].name == "t7", "ties sorted by the second key")
    }

    @Test func batchedFetchCollection() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try seedTrips(context, 23)
        let descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.rating != 5 }, sortBy: [SortDescriptor(\.rating, order: .reverse)])
        let all = try context.fetch(descriptor)
        let batched = try context.fetch(descriptor, batchSize: 4)
        #expect(batched.count == 22)
        #expect(batched.map(\.rating) == all.map(\.rating))
        #expect(batched[0].rating == 22 && batched[21].rating == 0)
        #expect(batched[13] === all[13], "the registered object")
        #expect(batched.reversed().map(\.rating) == Array(all.map(\.rating).reversed()))
        let empty = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating > 100 }), batchSize: 3)
        #expect(empty.isEmpty)
    }

    @Test func enumerateVisitsEverything() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try seedTrips(context, 31)
        let pending = Trip(name: "pending", startDate: day(100))
        pending.rating = 100
        context.insert(pending)
        for batch in [1, 4, 31, 5000] {
            var seen: [Int] = []
            try context.enumerate(FetchDescriptor<Trip>(), batchSize: batch) { seen.append($0.rating) }
            #expect(seen.sorted() == Array(0...30) + [100], "batch size \(batch)")
            #expect(seen.count == 32)
        }
        var ordered: [Int] = []
        try context.enumerate(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating % 2 == 0 }, sortBy: [SortDescriptor(\.rating, order: .reverse)]), batchSize: 3) {
            ordered.append($0.rating)
        }
        #expect(ordered == [100] + Array(stride(from: 30, through: 0, by: -2)))
        // Changes made while enumerating stay in the context and are saved.
        try context.enumerate(FetchDescriptor<Trip>(), batchSize: 7) { $0.tags = ["seen"] }
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).allSatisfy { $0.tags == ["seen"] })
    }

    /// The block may save (inserts, deletes, changes) while the scan goes on: every row of the
    /// snapshot is visited once, nothing it saved is, and all of it is stored.
    @Test func enumerateWhoseBlockSavesSeesItsSnapshot() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        try seedTrips(context, 300)
        var seen: [Int] = []
        try context.enumerate(FetchDescriptor<Trip>(), batchSize: 7) { trip in
            seen.append(trip.rating)
            trip.tags = ["seen"]
            if trip.rating % 3 == 0 {
                let extra = Trip(name: "extra", startDate: day(0))
                extra.rating = 1000 + trip.rating
                context.insert(extra)
            }
            if trip.rating % 10 == 9 { context.delete(trip) }
            if trip.rating % 5 == 0 { try context.save() }
        }
        try context.save()
        #expect(seen.sorted() == Array(0..<300), "each stored row once, none of the inserted")
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(stored.count == 300 - 30 + 100)
        #expect(stored.filter { $0.rating < 300 }.allSatisfy { $0.tags == ["seen"] && $0.rating % 10 != 9 })
    }

    /// An error the block throws ends the enumeration and reaches the caller unchanged.
    @Test func enumerateRethrowsTheBlocksError() throws {
        struct Stop: Error, Equatable { let at: Int }
        let context = ModelContext(try ModelContainer(for: Trip.self, configurations: memory()))
        try seedTrips(context, 20)
        var visited = 0
        #expect(throws: Stop(at: 5)) {
            try context.enumerate(FetchDescriptor<Trip>(), batchSize: 3) { trip in
                visited += 1
                if visited == 5 { throw Stop(at: 5) }
            }
        }
        #expect(visited == 5)
    }

    @Test func modelForIdentifier() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let trips = try seedTrips(context, 3)
        let id = trips[1].persistentModelID
        #expect(!id.isTemporary)
        #expect(id.entityName == "Trip")

        let other = ModelContext(container)
        #expect((other.registeredModel(for: id) as Trip?) == nil, "not registered before it is loaded")
        let loaded = try #require(other.model(for: id) as? Trip)
        #expect(loaded.name == "t1" && loaded.rating == 1)
        #expect(loaded !== trips[1])
        #expect((other.registeredModel(for: id) as Trip?) === loaded)
        #expect(other.model(for: id) as? Trip === loaded)
        #expect(try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == 1 })).first === loaded)
        #expect(context.model(for: id) as? Trip === trips[1])
    }

    // MARK: Pending changes

    @Test func includePendingChanges() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let trips = try seedTrips(context, 3)
        let unsaved = Trip(name: "unsaved", startDate: day(5))
        unsaved.rating = 5
        context.insert(unsaved)
        trips[0].name = "renamed"

        var withPending = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)])
        #expect(withPending.includePendingChanges, "true by default, as in SwiftData")
        #expect(names(try context.fetch(withPending)) == ["renamed", "t1", "t2", "unsaved"])
        var storedOnly = withPending
        storedOnly.includePendingChanges = false
        let stored = try context.fetch(storedOnly)
        #expect(stored.count == 3 && stored[0] === trips[0], "the registered object, even though the store has its old values")
        #expect(try context.fetchCount(storedOnly) == 3)

        withPending.predicate = #Predicate { $0.name == "renamed" }
        storedOnly.predicate = #Predicate { $0.name == "renamed" }
        #expect(try context.fetch(withPending).first === trips[0])
        #expect(try context.fetch(storedOnly).isEmpty)
        withPending.predicate = #Predicate { $0.name == "t0" }
        storedOnly.predicate = #Predicate { $0.name == "t0" }
        #expect(try context.fetch(withPending).isEmpty)
        #expect(try context.fetch(storedOnly).first === trips[0])
        withPending.predicate = #Predicate { $0.name == "unsaved" }
        storedOnly.predicate = #Predicate { $0.name == "unsaved" }
        #expect(try context.fetchCount(withPending) == 1)
        #expect(try context.fetchCount(storedOnly) == 0)
    }

    @Test func pagingWithLimitAndOffset() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try seedTrips(context, 30)
        for sort in [[SortDescriptor<Trip>(\.rating)], [SortDescriptor<Trip>(\.startDate, order: .reverse)], []] {
            let everything = try context.fetch(FetchDescriptor<Trip>(sortBy: sort)).map(\.rating)
            #expect(everything.count == 30)
            var pages: [Int] = []
            var offset = 0
            while true {
                var d = FetchDescriptor<Trip>(sortBy: sort)
                d.fetchOffset = offset
                d.fetchLimit = 7
                let page = try context.fetch(d).map(\.rating)
                #expect(try context.fetchCount(d) == page.count)
                if page.isEmpty { break }
                #expect(page.count == min(7, 30 - offset))
                pages += page
                offset += 7
            }
            #expect(pages == everything)
        }
        var beyond = FetchDescriptor<Trip>()
        beyond.fetchOffset = 31
        #expect(try context.fetch(beyond).isEmpty)
        #expect(try context.fetchCount(beyond) == 0)
    }

    // MARK: Unique upserts and conflicts

    @Test func twoNewObjectsWithTheSameUniqueValueInOneSaveTheLaterWins() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let container = try ModelContainer(for: Trip.self, configurations: config)
            let context = ModelContext(container)
            let first = Trip(name: "first", startDate: day(0))
            let second = Trip(name: "second", startDate: day(1))
            second.id = first.id
            context.insert(first)
            context.insert(second)
            try context.save()
            #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
            #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["second"])
            // And a later insert with the same id updates the stored row.
            let third = Trip(name: "third", startDate: day(2))
            third.id = first.id
            context.insert(third)
            try context.save()
            #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name) == ["third"])
        }
        let container = try ModelContainer(for: Trip.self, configurations: config)
        let all = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(all.map(\.name) == ["third"])
        #expect(all.first?.startDate == day(2))
    }

    @Test func compoundUniqueConstraintUpserts() throws {
        let container = try ModelContainer(for: Person.self, configurations: memory())
        let context = ModelContext(container)
        context.insert(Person(first: "Ada", last: "Lovelace", email: "old@example.com"))
        context.insert(Person(first: "Ada", last: "Byron", email: "byron@example.com"))
        try context.save()
        context.insert(Person(first: "Ada", last: "Lovelace", email: "new@example.com"))
        context.insert(Person(first: "Alan", last: "Turing", email: "a@example.com"))
        context.insert(Person(first: "Alan", last: "Turing", email: "b@example.com"))
        try context.save()
        let people = try ModelContext(container).fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.first), SortDescriptor(\.last)]))
        #expect(people.map { "\($0.first) \($0.last) \($0.email)" } == [
            "Ada Byron byron@example.com", "Ada Lovelace new@example.com", "Alan Turing b@example.com",
        ])
    }

    @Test func changedObjectTakingAnotherUniqueValueFailsAndLeavesTheStore() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let container = try ModelContainer(for: Trip.self, Person.self, configurations: config)
        let context = ModelContext(container)
        let trips = try seedTrips(context, 3)
        let ada = Person(first: "Ada", last: "Lovelace", email: "a")
        let alan = Person(first: "Alan", last: "Lovelace", email: "b")
        context.insert(ada)
        context.insert(alan)
        try context.save()
        let bytes = try Data(contentsOf: dir.store())
        let ids = trips.map(\.id)

        trips[2].id = trips[0].id
        trips[1].name = "also changed"
        let unrelated = Trip(name: "new", startDate: day(7))
        context.insert(unrelated)
        #expect {
            try context.save()
        } throws: { error in
            (error as? StrataError)?.code == .uniqueConstraintViolation
        }
        #expect(context.hasChanges, "the context keeps its unsaved changes")
        #expect(try Data(contentsOf: dir.store()) == bytes, "the store file is unchanged")
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
        #expect(stored.map(\.id) == ids)
        #expect(names(stored) == ["t0", "t1", "t2"])

        // A compound constraint the same way.
        context.rollback()
        alan.first = "Ada"
        #expect {
            try context.save()
        } throws: { error in
            (error as? StrataError)?.code == .uniqueConstraintViolation
        }
        let people = try ModelContext(container).fetch(FetchDescriptor<Person>(sortBy: [SortDescriptor(\.email)]))
        #expect(people.map(\.first) == ["Ada", "Alan"])

        // Fixing the conflict lets the save through.
        alan.first = "Alan"
        try context.save()
    }

    @Test func upsertOverAChangedObjectTheInsertWins() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let old = Trip(name: "old", startDate: day(0))
        context.insert(old)
        try context.save()
        old.name = "old changed"
        let replacement = Trip(name: "replacement", startDate: day(1))
        replacement.id = old.id
        context.insert(replacement)
        try context.save()
        let inContext = try context.fetch(FetchDescriptor<Trip>())
        let inStore = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(inContext.map(\.name) == ["replacement"])
        #expect(inStore.map(\.name) == ["replacement"], "the store agrees with the context")
        #expect(inStore.first?.startDate == day(1))
    }

    @Test func aUniqueValueGivenUpByAChangeIsFreeForAnInsert() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let first = Trip(name: "first", startDate: day(0))
        context.insert(first)
        try context.save()
        let freed = first.id
        first.id = UUID()
        let newcomer = Trip(name: "newcomer", startDate: day(1))
        newcomer.id = freed
        context.insert(newcomer)
        try context.save()
        let stored = try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(stored.map(\.name) == ["first", "newcomer"])
        #expect(stored.map(\.id) == [first.id, freed])
        #expect(try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map { $0 as AnyObject } .elementsEqual([first, newcomer]) { $0 === $1 })
    }

    // MARK: Predicates that throw

    /// Foundation's `filter { try predicate.evaluate($0) }` throws when the predicate does
    /// (a forced unwrap of nil); so does a fetch, whether the object is stored or unsaved.
    @Test func aThrowingPredicateFailsTheFetchForStoredAndPendingObjects() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        context.insert(Trip(name: "has a budget", startDate: day(0), budget: 10))
        try context.save()
        let predicate = #Predicate<Trip> { $0.budget! > 5 }
        #expect(try context.fetch(FetchDescriptor(predicate: predicate)).count == 1)

        let pending = Trip(name: "no budget, unsaved", startDate: day(1))
        context.insert(pending)
        #expect(throws: (any Error).self, "Foundation's answer") { try predicate.evaluate(pending) }
        #expect(throws: (any Error).self) { try context.fetch(FetchDescriptor(predicate: predicate)) }
        #expect(throws: (any Error).self) { try context.fetchCount(FetchDescriptor(predicate: predicate)) }
        #expect(throws: (any Error).self) { try context.fetchIdentifiers(FetchDescriptor(predicate: predicate)) }

        try context.save()
        #expect(throws: (any Error).self) { try ModelContext(container).fetch(FetchDescriptor(predicate: predicate)) }
        // Guarded, as Foundation needs it to be, the predicate works.
        let guarded = #Predicate<Trip> { $0.budget != nil && $0.budget! > 5 }
        #expect(try context.fetch(FetchDescriptor(predicate: guarded)).map(\.name) == ["has a budget"])
    }

    // MARK: Re-inserting, transactions, autosave

    @Test func insertingADeletedObjectUndoesTheDeletion() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let trips = try seedTrips(context, 2)
        let id = trips[0].persistentModelID
        context.delete(trips[0])
        #expect(trips[0].isDeleted)
        context.insert(trips[0])
        #expect(!trips[0].isDeleted)
        #expect(context.deletedModelsArray.isEmpty)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 2)
        #expect(try ModelContext(container).existingModel(for: id) != nil)

        context.delete(trips[0])
        try context.save()
        #expect(try ModelContext(container).existingModel(for: id) == nil, "Strata extra: nil for a row that is gone")
    }

    @Test func transactionSavesAndAThrowingBlockSavesNothing() throws {
        struct Stop: Error {}
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        try context.transaction {
            context.insert(Trip(name: "in a transaction", startDate: day(0)))
        }
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(throws: Stop.self) {
            try context.transaction {
                context.insert(Trip(name: "never saved", startDate: day(1)))
                throw Stop()
            }
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
        #expect(context.hasChanges, "the changes stay pending, as in SwiftData")
    }

    @Test func autosaveOnProcessPendingChanges() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        context.insert(Trip(name: "a", startDate: day(0)))
        context.processPendingChanges()
        #expect(context.hasChanges, "autosave is off by default")
        context.autosaveEnabled = true
        context.processPendingChanges()
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    // MARK: Notifications

    @Test func willSaveAndDidSaveNotifications() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        let context = ModelContext(container)
        let trips = try seedTrips(context, 3)
        let log = NotificationLog([ModelContext.willSave, ModelContext.didSave], object: context)

        let a = Trip(name: "a", startDate: day(10))
        let b = Trip(name: "b", startDate: day(11))
        context.insert(a)
        context.insert(b)
        trips[0].name = "changed"
        let deletedID = trips[1].persistentModelID
        context.delete(trips[1])
        try context.save()

        let entries = log.all
        #expect(entries.map(\.name) == [ModelContext.willSave, ModelContext.didSave])
        let info = try #require(entries.last?.userInfo)
        let inserted = info[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier]
        let updated = info[ModelContext.NotificationKey.updatedIdentifiers.rawValue] as? [PersistentIdentifier]
        let deleted = info[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier]
        #expect(Set(inserted ?? []) == [a.persistentModelID, b.persistentModelID])
        #expect(updated == [trips[0].persistentModelID])
        #expect(deleted == [deletedID])
        #expect(info.count == 3)

        // The next save's info lists its own changes only (the info is made from one kept
        // dictionary: what one save set must not carry over).
        log.clear()
        let c = Trip(name: "c", startDate: day(13))
        context.insert(c)
        try context.save()
        let next = try #require(log.all.last?.userInfo)
        #expect(next[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier] == [c.persistentModelID])
        #expect((next[ModelContext.NotificationKey.updatedIdentifiers.rawValue] as? [PersistentIdentifier])?.isEmpty == true)
        #expect((next[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier])?.isEmpty == true)
        #expect(next.count == 3)

        // A save without changes posts nothing.
        log.clear()
        try context.save()
        #expect(log.all.isEmpty)
        // Another context's save is not this context's.
        let other = ModelContext(container)
        other.insert(Trip(name: "other", startDate: day(12)))
        try other.save()
        #expect(log.all.isEmpty)
    }

    @Test func didSaveListsRowsDeletedByDeleteModelWhere() throws {
        let container = try ModelContainer(for: Trip.self, configurations: memory())
        try seedTrips(ModelContext(container), 4)
        let context = ModelContext(container)
        let expected = try context.fetchIdentifiers(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating >= 2 }))
        let log = NotificationLog([ModelContext.didSave], object: context)
        try context.delete(model: Trip.self, where: #Predicate { $0.rating >= 2 })
        try context.save()
        let info = try #require(log.all.first?.userInfo)
        let deleted = info[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier]
        #expect(Set(deleted ?? []) == Set(expected))
        #expect(expected.count == 2)
    }

    // MARK: Configurations

    @Test func inMemoryConfiguration() throws {
        let config = ModelConfiguration(isStoredInMemoryOnly: true)
        #expect(config.isStoredInMemoryOnly)
        do {
            let container = try ModelContainer(for: Trip.self, configurations: config)
            #expect(container.configurations.first?.isStoredInMemoryOnly == true)
            let context = ModelContext(container)
            try seedTrips(context, 4)
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 4)
            // Another in-memory container is a store of its own.
            let second = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            #expect(try ModelContext(second).fetchCount(FetchDescriptor<Trip>()) == 0)
        }
        // Nothing survives the container.
        let again = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        #expect(try ModelContext(again).fetchCount(FetchDescriptor<Trip>()) == 0)
    }

    @Test func readOnlyConfiguration() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
            try seedTrips(ModelContext(container), 3)
        }
        let bytes = try Data(contentsOf: url)
        do {
            let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url, allowsSave: false))
            #expect(container.configurations.first?.allowsSave == false)
            let context = ModelContext(container)
            let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))
            #expect(names(trips) == ["t0", "t1", "t2"])
            trips[0].name = "changed"
            context.insert(Trip(name: "new", startDate: day(3)))
            #expect {
                try context.save()
            } throws: { error in
                (error as? StrataError)?.code == .readOnly
            }
            #expect(context.hasChanges)
            context.rollback()
            context.delete(trips[1])
            #expect {
                try context.save()
            } throws: { error in
                (error as? StrataError)?.code == .readOnly
            }
        }
        #expect(try Data(contentsOf: url) == bytes, "the store file is unchanged")
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        #expect(names(try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.rating)]))) == ["t0", "t1", "t2"])
    }

    @Test func aSecondContainerOnTheSameURLSharesTheOpenStore() throws {
        // Objects keep their container alive, so a second container on the same file in this
        // process must not need the first to be gone: both use the one open store (another
        // process is still refused, see LockTests and the tool tests).
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        let first = try ModelContainer(for: Trip.self, configurations: config)
        try seedTrips(ModelContext(first), 2)
        let second = try ModelContainer(for: Trip.self, configurations: config)
        #expect(try ModelContext(second).fetchCount(FetchDescriptor<Trip>()) == 2)
        // New objects of both containers get distinct rows, and each sees the other's saves.
        let a = ModelContext(first), b = ModelContext(second)
        a.insert(Trip(name: "from first", startDate: day(3)))
        b.insert(Trip(name: "from second", startDate: day(4)))
        try a.save()
        try b.save()
        let all = try ModelContext(first).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        #expect(names(all) == ["from first", "from second", "t0", "t1"])
        #expect(Set(all.map(\.persistentModelID)).count == 4)
        #expect(try ModelContext(second).fetchCount(FetchDescriptor<Trip>()) == 4)
    }

    @Test func defaultLocationAndExplicitURL() throws {
        let env = ProcessInfo.processInfo.environment
        let directory = ModelConfiguration.defaultDirectory
        #expect(directory.lastPathComponent == "strata")
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty {
            #expect(directory.standardizedFileURL.path == URL(fileURLWithPath: xdg).appendingPathComponent("strata").standardizedFileURL.path)
        } else {
            #expect(directory.path.hasSuffix("/.local/share/strata"))
        }
        let unnamed = ModelConfiguration()
        #expect(unnamed.url.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
        #expect(unnamed.url.lastPathComponent == "default.store")
        #expect(!unnamed.isStoredInMemoryOnly && unnamed.allowsSave)
        #expect(ModelConfiguration("Trips").url.lastPathComponent == "Trips.store")

        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("nested/folder/trips.store")
        // A url's folder must exist (OpeningErrorTests.aMissingFolderIsNotCreated).
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let config = ModelConfiguration(url: url)
        #expect(config.url == url)
        #expect(config.name == "trips")
        let container = try ModelContainer(for: Trip.self, configurations: config)
        try seedTrips(ModelContext(container), 1)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue,
                "the store's data file is at the configuration's url")
        #expect(try Data(contentsOf: url).count > 0)
    }

    // MARK: Schema errors

    @Test func schemaMismatchIsATypedErrorAndLeavesTheStore() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let container = try ModelContainer(for: MemoV1.Memo.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            let memo = MemoV1.Memo()
            memo.title = "hello"
            memo.body = "text"
            context.insert(memo)
            try context.save()
        }
        let bytes = try Data(contentsOf: url)
        #expect {
            _ = try ModelContainer(for: MemoV2.Memo.self, configurations: ModelConfiguration(url: url))
        } throws: { error in
            guard let e = error as? StrataError, e.code == .schemaMismatch else { return false }
            return "\(e)".contains("Memo") && "\(e)".contains("body")
        }
        #expect(try Data(contentsOf: url) == bytes, "the store file is unchanged")
        // And the store still opens with the model it was written with.
        let container = try ModelContainer(for: MemoV1.Memo.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(container).fetch(FetchDescriptor<MemoV1.Memo>()).map(\.body) == ["text"])
    }

    @Test func storedPropertyWithoutWrapperIsASchemaError() throws {
        for type in [HalfMarked.self, Unmarked.self] as [any PersistentModel.Type] {
            #expect {
                _ = try ModelContainer(for: type, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            } throws: { error in
                guard let e = error as? StrataError, e.code == .invalidSchema else { return false }
                let text = "\(e)"
                return type == HalfMarked.self ? text.contains("HalfMarked.createdBy") : text.contains("Unmarked.forgotten")
            }
        }
    }
}


