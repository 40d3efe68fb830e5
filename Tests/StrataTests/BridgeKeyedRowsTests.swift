// A custom store whose primary keys are integers (StrataPostgres's `bigint` ids): the bridge
// names each object it reads by its key (`BridgeRows`), so a long-lived process that reads
// many objects keeps no map of them, and an object keeps one identity whichever way it comes.
import Foundation
import Testing
@testable import Strata

@Suite struct BridgeKeyedRowsTests {
    /// The entries of the bridge's maps of `model`'s rows (identifiers by row and rows by
    /// identifier), and the keys it noted as handed out. (Taken into locals before an
    /// `#expect`: a failed one would otherwise describe the whole bridge.)
    private func mapped(_ bridge: DataStoreStorage, _ model: String) -> (maps: Int, seen: Int) {
        bridge.withState { state in
            guard let table = state.tables[model] else { return (0, 0) }
            return (table.idByRow.count + table.rowByID.count, table.keyedRowsSeen.count)
        }
    }

    private func store(_ models: [any PersistentModel.Type], unique: String? = nil) throws -> (CountingStoreConfiguration, ModelContainer, DataStoreStorage) {
        let configuration = CountingStoreConfiguration(schema: Schema(models), uniqueProperty: unique, integerKeys: true)
        let container = try ModelContainer(for: Schema(models), configurations: [configuration] as [any DataStoreConfiguration])
        let bridge = try #require(container.handles.compactMap(\.custom).first)
        return (configuration, container, bridge)
    }

    /// Objects another process stored, read by a container that never saw them: no map entry
    /// for any of them, however many; each object is one object, by fetch, by identifier and by
    /// relationship.
    @Test func objectsReadAreNamedByTheirKeysAndTakeNoMapEntry() throws {
        let (configuration, writer, _) = try store([Journey.self, Leg.self])
        let context = ModelContext(writer)
        for day in 0..<300 {
            let journey = Journey("journey \(day)", day: day)
            context.insert(journey)
            let leg = Leg("leg \(day)")
            context.insert(leg)
            leg.journey = journey
        }
        try context.save()

        // Another container (another process, as far as its bridge knows) on the same objects.
        let reader = try ModelContainer(for: Schema([Journey.self, Leg.self]), configurations: [configuration] as [any DataStoreConfiguration])
        let bridge = try #require(reader.handles.compactMap(\.custom).first)
        let readContext = ModelContext(reader)
        let journeys = try readContext.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
        let legs = try readContext.fetch(FetchDescriptor<Leg>())
        #expect(journeys.count == 300 && legs.count == 300)
        let mapsOfJourney = mapped(bridge, "Journey").maps
        #expect(mapsOfJourney == 0)
        let mapsOfLeg = mapped(bridge, "Leg").maps
        #expect(mapsOfLeg == 0)
        let seenOfJourney = mapped(bridge, "Journey").seen
        #expect(seenOfJourney == 300)

        // One object each, whichever way it is reached.
        for (i, leg) in legs.enumerated() {
            let journey = try #require(leg.journey)
            #expect(journey.name == "journey " + leg.place.dropFirst("leg ".count))
            #expect(journeys.contains { $0 === journey })
            let id = journey.persistentModelID
            #expect(!id.isTemporary && id.primaryKey != nil)
            #expect(readContext.model(for: id) === journey)
            // (A fetch by identifier reads every snapshot of the counting store: a sample.)
            if i % 20 == 0 {
                #expect(try readContext.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.persistentModelID == id })).first === journey)
            }
        }
        // A context of its own reads the same identifiers, and as many objects.
        let again = try ModelContext(reader).fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(again.map(\.persistentModelID) == journeys.map(\.persistentModelID))
        let mapsAfterASecondContext = mapped(bridge, "Journey").maps
        #expect(mapsAfterASecondContext == 0)

        // Changes and deletions of objects read so go to the store under their identifiers.
        journeys[0].name = "renamed"
        readContext.delete(journeys[1])
        try readContext.save()
        let stored = try ModelContext(writer).fetch(FetchDescriptor<Journey>())
        #expect(stored.count == 299)
        #expect(stored.contains { $0.name == "renamed" })
        let mapsAfterSaving = mapped(bridge, "Journey").maps
        #expect(mapsAfterSaving == 0)
    }

    /// An insert takes a row of the bridge's own until the store gives it its key, then moves
    /// to the row that is its key: no map holds it, however many a process inserts. Its
    /// relationships follow it (to other inserts of the same save, to objects of earlier saves,
    /// and back), and another context of the container reads it as the same object.
    @Test func insertsMoveToTheirKeysRowsAndTakeNoMapEntry() throws {
        let (_, container, bridge) = try store([Journey.self, Leg.self])
        let context = ModelContext(container)
        let journey = Journey("new", day: 1)
        context.insert(journey)
        #expect(journey.persistentModelID.isTemporary)
        try context.save()
        let id = journey.persistentModelID
        #expect(!id.isTemporary)
        let mapsOfJourney = mapped(bridge, "Journey").maps
        #expect(mapsOfJourney == 0)

        let other = ModelContext(container)
        let read = try #require(try other.fetch(FetchDescriptor<Journey>()).first)
        #expect(read.persistentModelID == id)
        #expect(context.model(for: id) === journey)
        #expect(try context.fetch(FetchDescriptor<Journey>()).first === journey)
        read.name = "changed elsewhere"
        try other.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name) == ["changed elsewhere"])

        // Saves of journeys with legs: legs of this save's journeys, and legs added to an
        // earlier save's journey.
        var journeys = [journey]
        for round in 0..<4 {
            for day in 0..<50 {
                let new = Journey("journey \(round).\(day)", day: day)
                context.insert(new)
                journeys.append(new)
                let leg = Leg("leg \(round).\(day)")
                context.insert(leg)
                leg.journey = new
            }
            let late = Leg("late \(round)")
            context.insert(late)
            late.journey = journey
            try context.save()
        }
        let mapsOfJourneys = mapped(bridge, "Journey").maps
        #expect(mapsOfJourneys == 0)
        let mapsOfLegs = mapped(bridge, "Leg").maps
        #expect(mapsOfLegs == 0)
        for journey in journeys {
            #expect(!journey.persistentModelID.isTemporary)
            #expect(context.model(for: journey.persistentModelID) === journey)
            for leg in journey.legs { #expect(leg.journey === journey) }
        }
        #expect(journey.legs.count == 4)

        // A context that never saw them reads the same links from the store.
        let fresh = ModelContext(container)
        let legs = try fresh.fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 204)
        for leg in legs {
            let owner = try #require(leg.journey)
            if leg.place.hasPrefix("late") {
                #expect(owner.persistentModelID == id)
            } else {
                #expect(owner.name == "journey " + leg.place.dropFirst("leg ".count))
            }
        }
        let byID = try fresh.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(byID.map(\.legs.count) == [4])
    }

    /// A store that gives a deleted object's key to a new object: the new object moves to the
    /// row the deleted one had, and is a stored object there, not a deleted one: its change and
    /// its deletion reach the store (with nothing read in between to mend the bridge's view).
    @Test(arguments: [false, true])
    func anInsertGivenADeletedObjectsKeyIsStored(keepsVersions: Bool) throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]), keepsVersions: keepsVersions, integerKeys: true)
        let container = try ModelContainer(for: Schema([Journey.self, Leg.self]), configurations: [configuration] as [any DataStoreConfiguration])
        let reopened = { ModelContext(try ModelContainer(for: Schema([Journey.self, Leg.self]),
                                                             configurations: [configuration] as [any DataStoreConfiguration])) }
        let context = ModelContext(container)
        let first = Journey("first", day: 1)
        context.insert(first)
        try context.save()
        let firstID = first.persistentModelID
        // Changed twice first: with versions, the bridge notes the steps its saves made.
        first.budget = 1
        try context.save()
        first.budget = 3
        try context.save()
        context.delete(first)
        try context.save()

        configuration.rewindKeys(to: 0)
        let second = Journey("second", day: 2)
        context.insert(second)
        try context.save()
        #expect(second.persistentModelID.primaryKey == firstID.primaryKey, "the store gave the deleted object's key again")
        second.budget = 2
        try context.save()
        #expect(try reopened().fetch(FetchDescriptor<Journey>()).map(\.budget) == [2], "the change reached the store")
        context.delete(second)
        try context.save()
        #expect(try reopened().fetch(FetchDescriptor<Journey>()).isEmpty, "the deletion reached the store")
    }

    /// An insert the store resolves onto an object it holds (an upsert by a unique value) that
    /// this process read by its key is that object: the context that read it sees the upsert's
    /// values on it, and no second object appears.
    @Test func anUpsertOntoAnObjectReadByItsKeyIsThatObject() throws {
        let (configuration, writer, _) = try store([Badge.self], unique: "code")
        let seed = ModelContext(writer)
        seed.insert(Badge("gold", "first"))
        try seed.save()

        let container = try ModelContainer(for: Schema([Badge.self]), configurations: [configuration] as [any DataStoreConfiguration])
        let bridge = try #require(container.handles.compactMap(\.custom).first)
        let reading = ModelContext(container)
        let read = try #require(try reading.fetch(FetchDescriptor<Badge>()).first)
        let mapsOfBadge = mapped(bridge, "Badge").maps
        #expect(mapsOfBadge == 0)

        let upserting = ModelContext(container)
        let upsert = Badge("gold", "second")
        upserting.insert(upsert)
        try upserting.save()
        #expect(upsert.persistentModelID == read.persistentModelID)
        // The row the reading context holds is the upsert's: a fetch there finds its object,
        // with the stored values.
        let again = try reading.fetch(FetchDescriptor<Badge>())
        #expect(again.count == 1)
        #expect(again.first === read)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Badge>()).map(\.label) == ["second"])
    }

    /// The temporary identifiers of upserts the store resolved onto stored objects are kept for
    /// the newest saves only (`BridgeState.Remapped`): a server upserting all day does not grow
    /// by an entry an upsert. Each save's upserts still land on their objects.
    @Test func upsertsKeepABoundedNumberOfTemporaryIdentifiers() throws {
        let (_, container, bridge) = try store([Badge.self], unique: "code")
        bridge.withState { $0.remapped.limit = 20 }
        let seed = ModelContext(container)
        for i in 0..<30 { seed.insert(Badge("code \(i)", "v0")) }
        try seed.save()
        for round in 1...6 {
            let context = ModelContext(container)
            let upserts = (0..<30).map { Badge("code \($0)", "v\(round)") }
            for badge in upserts { context.insert(badge) }
            try context.save()
            let kept = bridge.withState { $0.remapped.count }
            #expect(kept <= 20 + 30, "round \(round)")
            #expect(kept >= 30, "round \(round): the last save's are all kept")
            let stored = try ModelContext(container).fetch(FetchDescriptor<Badge>(sortBy: [SortDescriptor(\.code)]))
            #expect(stored.count == 30)
            #expect(stored.allSatisfy { $0.label == "v\(round)" })
            #expect(Set(upserts.map(\.persistentModelID)) == Set(stored.map(\.persistentModelID)))
        }
    }
}
