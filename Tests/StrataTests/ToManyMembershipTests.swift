// The shapes of Apple's Backyard Birds sample: an object put in a to-many both through its
// to-one and by appending it; two to-manys that name one to-one as their inverse. And history
// records one change per object in a transaction, as SwiftData does.
import Foundation
import Testing
import Strata

final class Yard: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(inverse: \Shrub.yard) var leadingShrubs: [Shrub] = []
    @Relationship(inverse: \Shrub.yard) var trailingShrubs: [Shrub] = []
    @Relationship(deleteRule: .cascade, inverse: \YardVisit.yard) var visits: [YardVisit] = []
    init() {}
    init(_ name: String) { self.name = name }
}

final class Shrub: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var yard: Yard? = nil
    init() {}
    init(_ name: String) { self.name = name }
}

final class YardVisit: PersistentModel {
    @Attribute var number: Int = 0
    @Relationship var yard: Yard? = nil
    init() {}
    init(_ number: Int) { self.number = number }
}

/// Two to-manys to one model and a to-one back, no `inverse:` anywhere: which is its inverse
/// cannot be told.
final class Mailbox: PersistentModel {
    @Attribute var owner: String = ""
    @Relationship var sent: [Letter] = []
    @Relationship var received: [Letter] = []
    init() {}
}

final class Letter: PersistentModel {
    @Attribute var subject: String = ""
    @Relationship var box: Mailbox? = nil
    init() {}
}

@Suite struct ToManyMembershipTests {
    let dir = TemporaryDirectory()

    private func container() throws -> ModelContainer {
        try ModelContainer(for: Yard.self, Shrub.self, YardVisit.self, configurations: ModelConfiguration(url: dir.store("yards")))
    }

    private func yard(_ context: ModelContext, _ name: String) throws -> Yard {
        try #require(try context.fetch(FetchDescriptor<Yard>(predicate: #Predicate { $0.name == name })).first)
    }

    @Test func anObjectSetThroughItsToOneAndAppendedIsHeldOnce() throws {
        let context = ModelContext(try container())
        let yard = Yard("back")
        context.insert(yard)
        let visit = YardVisit(1)
        visit.yard = yard                      // puts the visit in yard.visits
        yard.visits.append(visit)              // and Backyard Birds appends it too
        #expect(yard.visits.count == 1)
        let second = YardVisit(2)
        yard.visits = [visit, second, visit]   // each object once, where it was first put
        #expect(yard.visits.map(\.number) == [1, 2])
        try context.save()
        let reread = try self.yard(ModelContext(try container()), "back")
        #expect(reread.visits.map(\.number).sorted() == [1, 2])
        #expect(reread.visits.count == 2)
    }

    @Test func anObjectAppendedTwiceToAStoredListIsHeldOnce() throws {
        do {
            let context = ModelContext(try container())
            let yard = Yard("back")
            context.insert(yard)
            yard.visits.append(YardVisit(1))
            try context.save()
        }
        let context = ModelContext(try container())
        let yard = try self.yard(context, "back")
        let visit = try #require(yard.visits.first)
        let third = YardVisit(3)
        third.yard = yard
        yard.visits.append(third)
        yard.visits.append(visit)
        #expect(yard.visits.map(\.number) == [1, 3])
        try context.save()
        #expect(try self.yard(ModelContext(try container()), "back").visits.map(\.number).sorted() == [1, 3])
    }

    @Test func twoListsNamingOneInverseEachKeepTheirObjects() throws {
        do {
            let context = ModelContext(try container())
            let yard = Yard("back")
            context.insert(yard)
            let (rose, fern, ivy) = (Shrub("rose"), Shrub("fern"), Shrub("ivy"))
            yard.leadingShrubs = [rose, fern]
            yard.trailingShrubs = [ivy]
            #expect(yard.leadingShrubs.map(\.name) == ["rose", "fern"])
            #expect(yard.trailingShrubs.map(\.name) == ["ivy"])
            #expect([rose, fern, ivy].allSatisfy { $0.yard === yard })
            try context.save()
        }
        let context = ModelContext(try container())
        let yard = try self.yard(context, "back")
        #expect(yard.leadingShrubs.map(\.name) == ["rose", "fern"])
        #expect(yard.trailingShrubs.map(\.name) == ["ivy"])
        let shrubs = try context.fetch(FetchDescriptor<Shrub>())
        #expect(shrubs.count == 3 && shrubs.allSatisfy { $0.yard === yard })
    }

    @Test func theToOneOfAnObjectInTheSecondListMovesItOut() throws {
        let context = ModelContext(try container())
        let (back, front) = (Yard("back"), Yard("front"))
        context.insert(back)
        context.insert(front)
        let ivy = Shrub("ivy")
        back.trailingShrubs = [ivy]
        // Setting the to-one alone: it leaves every list of the old yard, and joins the new
        // yard's first declared list (the to-one cannot say which list it means).
        ivy.yard = front
        #expect(back.trailingShrubs.isEmpty && back.leadingShrubs.isEmpty)
        #expect(front.leadingShrubs.map(\.name) == ["ivy"])
        #expect(front.trailingShrubs.isEmpty)
        // Taken out of that list, it has no yard; put in the other, it has that yard again.
        front.leadingShrubs = []
        #expect(ivy.yard == nil)
        front.trailingShrubs = [ivy]
        #expect(ivy.yard === front)
        // Setting the to-one to the yard whose second list holds it changes nothing.
        ivy.yard = front
        #expect(front.trailingShrubs.map(\.name) == ["ivy"])
        #expect(front.leadingShrubs.isEmpty)
        try context.save()
        let reread = try self.yard(ModelContext(try container()), "front")
        #expect(reread.trailingShrubs.map(\.name) == ["ivy"])
        #expect(reread.leadingShrubs.isEmpty)
    }

    @Test func deletingAnObjectOfTheSecondListTakesItOutOfThatList() throws {
        do {
            let context = ModelContext(try container())
            let yard = Yard("back")
            context.insert(yard)
            yard.leadingShrubs = [Shrub("rose")]
            yard.trailingShrubs = [Shrub("ivy"), Shrub("fern")]
            try context.save()
            // A registered object, deleted by the context.
            context.delete(try #require(yard.trailingShrubs.first))
            try context.save()
            #expect(yard.trailingShrubs.map(\.name) == ["fern"])
        }
        do {
            // A row deleted without its object (the rule works on the stored record).
            let context = ModelContext(try container())
            try context.delete(model: Shrub.self, where: #Predicate { $0.name == "fern" })
            try context.save()
        }
        let yard = try self.yard(ModelContext(try container()), "back")
        #expect(yard.trailingShrubs.isEmpty)
        #expect(yard.leadingShrubs.map(\.name) == ["rose"])
    }

    @Test func anInverseThatCouldBeEitherOfTwoListsIsASchemaError() throws {
        var thrown: StrataError?
        do { _ = try ModelContainer(for: Mailbox.self, Letter.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)) }
        catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .invalidSchema, "\(String(describing: thrown))")
        #expect(thrown?.message.contains("Mailbox.sent") == true && thrown?.message.contains("Mailbox.received") == true)
        #expect(thrown?.message.contains("inverse:") == true)
    }
}

@Suite struct OneChangePerObjectTests {
    let dir = TemporaryDirectory()

    private func lastTransaction(_ container: ModelContainer) throws -> [HistoryChange] {
        try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last).changes
    }

    @Test func anObjectUpsertedTwiceInOneSaveIsOneUpdate() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let id = UUID()
        let stored = Trip(name: "stored", startDate: Date(timeIntervalSince1970: 0))
        stored.id = id
        context.insert(stored)
        try context.save()

        let writer = ModelContext(container)
        let first = Trip(name: "first", startDate: Date(timeIntervalSince1970: 0), budget: 10)
        first.id = id
        let second = Trip(name: "second", startDate: Date(timeIntervalSince1970: 0))
        second.id = id
        second.rating = 5
        writer.insert(first)
        writer.insert(second)
        try writer.save()
        let changes = try lastTransaction(container)
        #expect(changes.count == 1, "\(changes)")
        guard case .update(let update as DefaultHistoryUpdate<Trip>)? = changes.first else {
            Issue.record("expected one update, got \(changes)")
            return
        }
        // Every attribute either upsert changed.
        #expect(Set(update.updatedAttributes.map(\.name)).isSuperset(of: ["name", "budget", "rating"]))
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name) == ["second"])
    }

    @Test func twoNewObjectsWithOneUniqueValueAreOneInsert() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        let id = UUID()
        for name in ["first", "second", "third"] {
            let trip = Trip(name: name, startDate: .now)
            trip.id = id
            context.insert(trip)
        }
        context.insert(Trip(name: "other", startDate: .now))
        try context.save()
        let changes = try lastTransaction(container)
        #expect(changes.count == 2, "\(changes)")
        #expect(changes.allSatisfy { if case .insert = $0 { true } else { false } }, "\(changes)")
    }
}
