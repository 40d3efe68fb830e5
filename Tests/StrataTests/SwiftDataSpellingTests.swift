import Foundation
import Testing
import Strata

// SwiftData spellings and behaviour that ported code relies on (issue 17, item 3).

final class Zoo: PersistentModel {
    @Attribute var name: String = ""
    /// Optional to-many, as every CloudKit-ready SwiftData model declares it.
    @Relationship(deleteRule: .cascade, inverse: \Animal.zoo) var animals: [Animal]? = []
    init() {}
    init(name: String) { self.name = name }
}

final class Animal: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var zoo: Zoo? = nil
    init() {}
    init(name: String) { self.name = name }
}

enum KennelV1 {
    final class Kennel: PersistentModel {
        @Attribute var name: String = ""
        @Relationship var pets: [Dog] = []
        init() {}
    }
    final class Dog: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(inverse: \Kennel.pets) var kennel: Kennel? = nil
        init() {}
    }
}

enum KennelV2 {
    /// `pets` renamed to `residents`, and the to-one `kennel` to `home`.
    final class Kennel: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(originalName: "pets") var residents: [Dog] = []
        init() {}
    }
    final class Dog: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(originalName: "kennel", inverse: \Kennel.residents) var home: Kennel? = nil
        init() {}
    }
}

enum TripsSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }
}

enum SingleVersionPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripsSchemaV1.self] }
    static var stages: [MigrationStage] { [] }
}

actor TripReader: ModelActor {
    nonisolated let modelContainer: ModelContainer
    nonisolated let modelExecutor: any ModelExecutor
    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelExecutor = DefaultSerialModelExecutor(modelContext: ModelContext(modelContainer))
    }
    func name(of id: PersistentIdentifier) -> String? { self[id, as: Trip.self]?.name }
}

@Suite struct SwiftDataSpellingTests {
    @Test func optionalToManyRelationships() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: Zoo.self, configurations: config))
            let zoo = Zoo(name: "city")
            context.insert(zoo)
            zoo.animals?.append(Animal(name: "otter"))
            zoo.animals = (zoo.animals ?? []) + [Animal(name: "lynx")]
            #expect(zoo.animals?.count == 2)
            #expect(zoo.animals?.allSatisfy { $0.zoo === zoo } == true)
            try context.save()
        }
        let container = try ModelContainer(for: Zoo.self, Animal.self, configurations: config)
        let context = ModelContext(container)
        let zoo = try #require(try context.fetch(FetchDescriptor<Zoo>()).first)
        #expect(Set(zoo.animals?.map(\.name) ?? []) == ["otter", "lynx"])
        #expect(try context.fetchCount(FetchDescriptor<Zoo>(predicate: #Predicate { ($0.animals?.count ?? 0) == 2 })) == 1)
        // The inverse side, and nil as "none".
        let otter = try #require(zoo.animals?.first { $0.name == "otter" })
        otter.zoo = nil
        #expect(zoo.animals?.map(\.name) == ["lynx"])
        zoo.animals = nil
        #expect(zoo.animals?.isEmpty ?? true)
        try context.save()
        // Cascade through the optional to-many.
        context.insert(Animal(name: "seal"))
        let seal = try #require(try context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.name == "seal" })).first)
        seal.zoo = zoo
        context.delete(zoo)
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Animal>()).map(\.name).sorted() == ["lynx", "otter"])
    }

    @Test func renamedRelationshipsKeepTheirLinks() throws {
        let dir = TemporaryDirectory()
        let url = dir.store()
        do {
            let context = ModelContext(try ModelContainer(for: KennelV1.Kennel.self, KennelV1.Dog.self, configurations: ModelConfiguration(url: url)))
            let kennel = KennelV1.Kennel()
            kennel.name = "north"
            context.insert(kennel)
            for name in ["rex", "fido"] {
                let dog = KennelV1.Dog()
                dog.name = name
                context.insert(dog)
                dog.kennel = kennel
            }
            try context.save()
        }
        let container = try ModelContainer(for: KennelV2.Kennel.self, KennelV2.Dog.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let kennel = try #require(try context.fetch(FetchDescriptor<KennelV2.Kennel>()).first)
        #expect(Set(kennel.residents.map(\.name)) == ["rex", "fido"])
        let dogs = try context.fetch(FetchDescriptor<KennelV2.Dog>())
        #expect(dogs.count == 2)
        #expect(dogs.allSatisfy { $0.home === kennel })
    }

    @Test func configurationSpellings() throws {
        let memory = ModelConfiguration(for: Trip.self, isStoredInMemoryOnly: true)
        #expect(memory.isStoredInMemoryOnly)
        #expect(memory.schema?.types.count == 1)
        let container = try ModelContainer(for: Trip.self, configurations: memory)
        let context = ModelContext(container)
        context.insert(Trip(name: "x", startDate: .now))
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 1)
        // App groups and CloudKit have no meaning on Linux: accepted, ignored.
        let dir = TemporaryDirectory()
        let grouped = ModelConfiguration("g", schema: Schema([Trip.self]), isStoredInMemoryOnly: true,
                                         groupContainer: .identifier("group.example"), cloudKitDatabase: .none)
        #expect(grouped.isStoredInMemoryOnly)
        let synced = ModelConfiguration(url: dir.store(), cloudKitDatabase: .private("iCloud.example"))
        _ = try ModelContainer(for: Trip.self, configurations: synced)
        _ = ModelConfiguration(groupContainer: .automatic, cloudKitDatabase: .automatic)
    }

    @Test func migrationPlanWithOneConfiguration() throws {
        let dir = TemporaryDirectory()
        let schema = Schema(versionedSchema: TripsSchemaV1.self)
        #expect(schema.version == Schema.Version(1, 0, 0))
        #expect(schema.entities.map(\.name) == ["Trip"])
        let container = try ModelContainer(for: schema, migrationPlan: SingleVersionPlan.self, configurations: ModelConfiguration(url: dir.store()))
        #expect(container.configurations.count == 1)
    }

    @Test func schemaEntitiesDescribeTheModels() throws {
        let schema = Schema([Zoo.self, Vehicle.self, Car.self])
        #expect(schema.entities.map(\.name) == ["Zoo", "Vehicle", "Car", "Animal"])
        let zoo = try #require(schema.entity(for: Zoo.self))
        #expect(zoo.attributes.map(\.name) == ["name"])
        let animals = try #require(zoo.relationshipsByName["animals"])
        #expect(animals.destination == "Animal")
        #expect(animals.deleteRule == .cascade)
        #expect(!animals.isToOneRelationship)
        #expect(animals.inverseName == "zoo")
        #expect(zoo.properties.map(\.name) == ["name", "animals"])
        let trip = try #require(Schema([Trip.self]).entity(for: Trip.self))
        #expect(trip.uniquenessConstraints == [["id"]])
        #expect(trip.indices == [["startDate"], ["rating"]])
        let id = try #require(trip.attributesByName["id"])
        #expect(id.isUnique && id.valueType == UUID.self && !id.isOptional)
        #expect(trip.attributesByName["budget"]?.isOptional == true)
        #expect(schema.entity(for: Car.self)?.superentityName == "Vehicle")
        #expect(schema.entitiesByName["Animal"]?.relationships.first?.isToOneRelationship == true)
    }

    @Test func modelActorSubscript() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        let trip = Trip(name: "Lisbon", startDate: .now)
        context.insert(trip)
        try context.save()
        let reader = TripReader(modelContainer: container)
        #expect(await reader.name(of: trip.persistentModelID) == "Lisbon")
    }
}
