// SwiftData's custom store API: the same models, container and context code on a store of
// one's own (CustomStoreSupport.swift), driven through fetch and save requests alone.
import Foundation
import Testing
import Strata

final class Journey: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var start: Date = Date(timeIntervalSince1970: 0)
    @Attribute var budget: Double? = nil
    @Attribute var tags: [String] = []
    @Attribute var status: Status = .planned
    @Relationship(deleteRule: .cascade, inverse: \Leg.journey) var legs: [Leg] = []
    init() {}
    init(_ name: String, day: Int, budget: Double? = nil) {
        self.name = name
        start = Date(timeIntervalSince1970: Double(day) * 86_400)
        self.budget = budget
    }
}

final class Leg: PersistentModel {
    @Attribute var place: String = ""
    @Relationship var journey: Journey? = nil
    init() {}
    init(_ place: String) { self.place = place }
}

final class Badge: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute var label: String = ""
    init() {}
    init(_ code: String, _ label: String) { self.code = code; self.label = label }
}

final class Labelled: PersistentModel {
    @Attribute var labels: [String] = []
    init() {}
    init(_ labels: [String]) { self.labels = labels }
}

@Suite struct JSONCustomStoreTests {
    let dir = TemporaryDirectory()
    var fileURL: URL { dir.url.appendingPathComponent("trips.json") }

    private func container() throws -> ModelContainer {
        let schema = Schema([Journey.self, Leg.self])
        return try ModelContainer(for: Journey.self, Leg.self, configurations: JSONStoreConfiguration(schema: schema, fileURL: fileURL))
    }

    private func seed() throws -> ModelContainer {
        let container = try container()
        let context = ModelContext(container)
        for (i, name) in ["Lisbon", "Oslo", "Kyoto", "Quito", "Rome"].enumerated() {
            context.insert(Journey(name, day: 10 - i, budget: i.isMultiple(of: 2) ? Double(i) * 100 : nil))
        }
        try context.save()
        return container
    }

    @Test func insertFetchUpdateDelete() throws {
        let container = try seed()
        let context = ModelContext(container)
        var all = try context.fetch(FetchDescriptor<Journey>())
        #expect(Set(all.map(\.name)) == ["Lisbon", "Oslo", "Kyoto", "Quito", "Rome"])
        let oslo = try #require(all.first { $0.name == "Oslo" })
        oslo.name = "Bergen"
        oslo.tags = ["fjords", "rain"]
        context.delete(try #require(all.first { $0.name == "Rome" }))
        try context.save()
        // A new container on the same file reads what the store wrote.
        all = try ModelContext(try self.container()).fetch(FetchDescriptor<Journey>())
        #expect(Set(all.map(\.name)) == ["Lisbon", "Bergen", "Kyoto", "Quito"])
        #expect(all.first { $0.name == "Bergen" }?.tags == ["fjords", "rain"])
        let text = try String(contentsOf: fileURL, encoding: .utf8)
        #expect(text.contains("Bergen") && !text.contains("Rome"))
    }

    @Test func predicatesAndSortsTheStoreRefusesAreDoneInMemory() throws {
        let context = ModelContext(try seed())
        let sorted = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(sorted.map(\.name) == ["Kyoto", "Lisbon", "Oslo", "Quito", "Rome"])
        let filtered = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.budget != nil && $0.name != "Lisbon" },
                                                                 sortBy: [SortDescriptor(\.start, order: .reverse)]))
        #expect(filtered.map(\.name) == ["Kyoto", "Rome"])
        let day8 = Date(timeIntervalSince1970: 8 * 86_400)
        #expect(try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.start < day8 })).count == 2)
    }

    @Test func limitAndOffset() throws {
        let context = ModelContext(try seed())
        var descriptor = FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.start)])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 2
        #expect(try context.fetch(descriptor).map(\.name) == ["Quito", "Kyoto"])
        #expect(try context.fetchCount(descriptor) == 2)
        descriptor.fetchOffset = 4
        #expect(try context.fetch(descriptor).map(\.name) == ["Lisbon"])
    }

    @Test func countAndIdentifiers() throws {
        let container = try seed()
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Journey>()) == 5)
        #expect(try context.fetchCount(FetchDescriptor<Journey>(predicate: #Predicate { $0.budget == nil })) == 2)
        let ids = try context.fetchIdentifiers(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(ids.count == 5)
        #expect(ids.allSatisfy { !$0.isTemporary && $0.storeIdentifier == "trips.json" && $0.primaryKey != nil })
        let kyoto = try #require(ModelContext(container).model(for: ids[0]) as? Journey)
        #expect(kyoto.name == "Kyoto")
        // Enumeration and batches read the same objects.
        var names: [String] = []
        try context.enumerate(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]), batchSize: 2) { names.append($0.name) }
        #expect(names == ["Kyoto", "Lisbon", "Oslo", "Quito", "Rome"])
        let batched = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]), batchSize: 2)
        #expect(batched.map(\.name) == names)
    }

    @Test func savedObjectsTakeTheirPermanentIdentifiers() throws {
        let container = try container()
        let context = ModelContext(container)
        let trip = Journey("Tallinn", day: 1)
        context.insert(trip)
        #expect(trip.persistentModelID.isTemporary)
        try context.save()
        let id = trip.persistentModelID
        #expect(!id.isTemporary && id.primaryKey != nil && id.storeIdentifier == "trips.json")
        // model(for:) finds the saved object by its permanent identifier, here and in another context.
        #expect(context.model(for: id) === trip)
        #expect((context.registeredModel(for: id) as Journey?) === trip)
        let other = ModelContext(try self.container())
        #expect((other.model(for: id) as? Journey)?.name == "Tallinn")
        let again = try #require(try other.fetch(FetchDescriptor<Journey>()).first)
        #expect(again.persistentModelID == id)
    }

    @Test func toOneAndToManyRelationships() throws {
        do {
            let context = ModelContext(try container())
            let trip = Journey("Lisbon", day: 1)
            context.insert(trip)
            trip.legs = [Leg("Alfama"), Leg("Belem"), Leg("Sintra")]
            let extra = Leg("Cascais")
            extra.journey = trip
            try context.save()
            #expect(trip.legs.map(\.place) == ["Alfama", "Belem", "Sintra", "Cascais"])
        }
        let context = ModelContext(try container())
        let trip = try #require(try context.fetch(FetchDescriptor<Journey>()).first)
        #expect(trip.legs.map(\.place) == ["Alfama", "Belem", "Sintra", "Cascais"])
        let legs = try context.fetch(FetchDescriptor<Leg>(sortBy: [SortDescriptor(\.place)]))
        #expect(legs.count == 4 && legs.allSatisfy { $0.journey === trip })
        // A predicate through the relationship, done in memory.
        #expect(try context.fetchCount(FetchDescriptor<Leg>(predicate: #Predicate { $0.journey?.name == "Lisbon" })) == 4)
        // The cascade rule reaches the store as deleted snapshots.
        context.delete(trip)
        try context.save()
        let fresh = ModelContext(try container())
        #expect(try fresh.fetchCount(FetchDescriptor<Journey>()) == 0)
        #expect(try fresh.fetchCount(FetchDescriptor<Leg>()) == 0)
    }

    @Test func aStoreConfigurationBesideAStrataOneInOneContainer() throws {
        let schema = Schema([Journey.self, Leg.self, Badge.self])
        let json = JSONStoreConfiguration(schema: Schema([Journey.self, Leg.self]), fileURL: fileURL)
        let file = ModelConfiguration("badges", schema: Schema([Badge.self]), url: dir.store("badges"))
        let container = try ModelContainer(for: schema, configurations: [json, file])
        let context = ModelContext(container)
        context.insert(Journey("Oslo", day: 3))
        context.insert(Badge("b1", "first"))
        try context.save()
        #expect(try String(contentsOf: fileURL, encoding: .utf8).contains("Oslo"))
        #expect(container.configurations.map(\.name) == ["badges"])
        let reopened = try ModelContainer(for: schema, configurations: [JSONStoreConfiguration(schema: Schema([Journey.self, Leg.self]), fileURL: fileURL),
                                                                        ModelConfiguration("badges", schema: Schema([Badge.self]), url: dir.store("badges"))])
        let other = ModelContext(reopened)
        #expect(try other.fetch(FetchDescriptor<Journey>()).map(\.name) == ["Oslo"])
        #expect(try other.fetch(FetchDescriptor<Badge>()).map(\.label) == ["first"])
        // The Strata store is the engine's file, as always.
        #expect(reopened.stores.count == 1)
    }

    @Test func unsavedChangesAreInTheFetch() throws {
        let context = ModelContext(try seed())
        let all = try context.fetch(FetchDescriptor<Journey>())
        try #require(all.first { $0.name == "Oslo" }).name = "Aaa"
        context.insert(Journey("Zzz", day: 0))
        context.delete(try #require(all.first { $0.name == "Kyoto" }))
        let names = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(names == ["Aaa", "Lisbon", "Quito", "Rome", "Zzz"])
        var first = FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)])
        first.fetchLimit = 1
        #expect(try context.fetch(first).map(\.name) == ["Aaa"])
    }
}

@Suite struct CountingCustomStoreTests {
    let dir = TemporaryDirectory()

    @Test func theContainerRoutesThroughTheStore() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        #expect(configuration.count("init") == 1)
        let context = ModelContext(container)
        context.insert(Journey("Oslo", day: 1))
        try context.save()
        #expect(configuration.count("save") == 1)
        #expect(configuration.objects.withLock { $0.count } == 1)
        let fetchesBefore = configuration.count("fetch")
        _ = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "Oslo" }))
        // Refused once (the predicate), asked again without it.
        #expect(configuration.count("fetch") == fetchesBefore + 2)
        #expect(try context.fetchCount(FetchDescriptor<Journey>()) == 1)
        #expect(configuration.count("fetchCount") >= 1)
        // A save with nothing to do sends nothing.
        try context.save()
        #expect(configuration.count("save") == 1)
    }

    @Test func aFailingSaveReachesTheCallerAndKeepsTheChanges() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let context = ModelContext(container)
        let trip = Journey("Oslo", day: 1)
        context.insert(trip)
        struct Refused: Error, Equatable {}
        configuration.failNextSave.withLock { $0 = Refused() }
        #expect(throws: Refused.self) { try context.save() }
        #expect(context.hasChanges)
        #expect(trip.persistentModelID.isTemporary)
        #expect(configuration.objects.withLock { $0.isEmpty })
        try context.save()
        #expect(!trip.persistentModelID.isTemporary)
        #expect(configuration.objects.withLock { $0.count } == 1)
        #expect(context.model(for: trip.persistentModelID) === trip)
    }

    @Test func theStoreResolvesAUniqueValueAndTheInsertTakesThatObject() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Badge.self]), uniqueProperty: "code")
        let container = try ModelContainer(for: Badge.self, configurations: configuration)
        let first = ModelContext(container)
        let original = Badge("b1", "first")
        first.insert(original)
        try first.save()
        let second = ModelContext(container)
        let held = try #require(try second.fetch(FetchDescriptor<Badge>()).first)
        let upsert = Badge("b1", "second")
        second.insert(upsert)
        try second.save()
        #expect(configuration.objects.withLock { $0.count } == 1, "never two objects for one unique value")
        #expect(upsert.persistentModelID == original.persistentModelID)
        #expect(second.model(for: upsert.persistentModelID) === upsert, "the insert took the stored object's place")
        #expect(held.modelContext == nil || held === upsert)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Badge>()).map(\.label) == ["second"])
    }

    @Test func deleteWhereGoesToABatchingStore() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Badge.self]))
        let container = try ModelContainer(for: Badge.self, configurations: configuration)
        let context = ModelContext(container)
        context.insert(Badge("b1", "one"))
        try context.save()
        let other = ModelContext(container)
        try other.delete(model: Badge.self, where: #Predicate { $0.label == "one" })
        #expect(configuration.count("batchDelete") == 0, "sent with the save")
        // The counting store refuses batch deletes: the error reaches the caller of save().
        #expect(throws: DataStoreError.unsupportedFeature) { try other.save() }
        #expect(configuration.count("batchDelete") == 1)
        #expect(other.hasChanges)
    }

    /// An array of strings reaches a store as the JSON `JSONEncoder` writes (sorted keys),
    /// byte for byte, every character that JSON escapes included.
    @Test func anArrayOfStringsIsTheJSONThatJSONEncoderWrites() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Labelled.self]))
        let container = try ModelContainer(for: Labelled.self, configurations: configuration)
        let context = ModelContext(container)
        let every = String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self)
        let labels = ["", "plain", "a/b", "quote \" and \\ back", "é 😀 \u{2028}", every, "\u{7F}\u{FFFF}"]
        context.insert(Labelled(labels))
        context.insert(Labelled([]))
        try context.save()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let stored = configuration.objects.withLock { $0.values.compactMap { snapshot -> Data? in
            guard case .json(let data)? = snapshot.values["labels"] else { return nil }
            return data
        } }
        #expect(Set(stored) == [try encoder.encode(labels), try encoder.encode([String]())])
        #expect(try ModelContext(container).fetch(FetchDescriptor<Labelled>()).map(\.labels).contains(labels))
    }

    @Test func aBatchDeleteTheStoreDeclinesIsSavedRowByRow() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Badge.self]))
        configuration.batchDeleteError.withLock { $0 = .preferInMemoryFilter }
        let container = try ModelContainer(for: Badge.self, configurations: configuration)
        let context = ModelContext(container)
        for (code, label) in [("b1", "one"), ("b2", "two"), ("b3", "one")] { context.insert(Badge(code, label)) }
        try context.save()
        let other = ModelContext(container)
        try other.delete(model: Badge.self, where: #Predicate { $0.label == "one" })
        // The store does not evaluate the predicate: the context selects the objects and
        // deletes them in the save request.
        try other.save()
        #expect(configuration.count("batchDelete") == 1)
        #expect(!other.hasChanges)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Badge>()).map(\.code) == ["b2"])
        #expect(configuration.objects.withLock { $0.count } == 1, "deleted in the store")
    }
}

/// A custom store's identifiers (`identifier(for:entityName:primaryKey:)`) are equal when their
/// store, model and primary key's description are, however they were made or read back.
@Suite struct CustomStoreIdentifierTests {
    func id<T: Comparable & CustomStringConvertible & Codable & Hashable>(_ key: T, store: String = "S", entity: String = "Trip") throws -> PersistentIdentifier {
        try PersistentIdentifier.identifier(for: store, entityName: entity, primaryKey: key)
    }

    @Test func anIntegerKeyAndItsTextAreOneIdentifier() throws {
        let a = try id(Int64(42)), b = try id("42"), c = try id(42)
        #expect(a == b && b == c)
        #expect(a.hashValue == b.hashValue && b.hashValue == c.hashValue)
        #expect(a.primaryKey == "42")
        #expect(a.description == "Trip/42@S")
        #expect(!a.isTemporary)
        #expect(Set([a, b, c]).count == 1)
    }

    @Test func keysThatAreNotPlainPositiveIntegersAreComparedByTheirText() throws {
        let plain = try id(42)
        for other in [try id("042"), try id("+42"), try id(0), try id(-42), try id("42 "), try id(UInt64.max)] {
            #expect(other != plain)
            #expect(other == other)
        }
        #expect(try id("042") == id("042"))
        #expect(try id(-42).primaryKey == "-42")
        #expect(try id(UInt64.max) == id(String(UInt64.max)))
    }

    @Test func storeAndModelStillDistinguish() throws {
        #expect(try id(7) != id(7, store: "T"))
        #expect(try id(7) != id(7, entity: "Person"))
        #expect(try id(7) != id(8))
        #expect(try [id(10), id(9), id("a")].sorted().map(\.primaryKey) == ["10", "9", "a"])
    }

    @Test func theyRoundTripThroughCodableAndReadTheOldForm() throws {
        let ids = [try id(42), try id("042"), try id("x")]
        let decoded = try JSONDecoder().decode([PersistentIdentifier].self, from: JSONEncoder().encode(ids))
        #expect(decoded == ids)
        #expect(decoded.map(\.hashValue) == ids.map(\.hashValue))
        // Written before integer keys were kept as rows: the row was 0.
        let old = #"{"entityName":"Trip","storeIdentifier":"S","primaryKey":"42","rowID":0}"#
        let read = try JSONDecoder().decode(PersistentIdentifier.self, from: Data(old.utf8))
        #expect(read == ids[0] && read.hashValue == ids[0].hashValue)
    }
}
