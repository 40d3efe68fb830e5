import Foundation
import Testing
import StrataData
import ModelLayerFixture

// Issue 27, item 9: a valid `public var species: BirdSpecies?` of a `@Model public class` was
// refused ("'_modelProperty' is unavailable: ... must be Codable ... or a model") depending on
// the order in which the compiler saw the files. ModelLayerFixture, a model layer shaped like
// Backyard Birds' (Swift 5 mode), did not compile before `@Model` wrote its storages' types
// out; these tests use it, and the same shapes in Swift 6 (CrossFileModelsA/B.swift).

@Suite struct ModelLayerTests {
    static var fixtureModels: [any PersistentModel.Type] {
        [Bird.self, BirdSpecies.self, BirdFood.self, Plant.self, PlantSpecies.self, Backyard.self, Visit.self]
    }

    @Test func aMultiFilePublicModelLayerKeepsItsRelationships() throws {
        let dir = TemporaryDirectory()
        let configuration = ModelConfiguration(url: dir.store("birds"))
        let start = Date(timeIntervalSinceReferenceDate: 700_000_000)
        do {
            let context = ModelContext(try ModelContainer(for: Schema(Self.fixtureModels), configurations: configuration))
            let swallow = BirdSpecies(id: "barn swallow", wingspan: 0.33)
            let kingfisher = BirdSpecies(id: "kingfisher", isRare: true)
            let seeds = BirdFood(id: "seeds", name: "Sunflower seeds", portions: 3)
            let yard = Backyard(id: "north", name: "North yard")
            context.insert(swallow)
            context.insert(kingfisher)
            context.insert(seeds)
            context.insert(yard)
            yard.birdFood = seeds

            var birds: [Bird] = []
            for (n, species) in [swallow, swallow, kingfisher].enumerated() {
                let bird = Bird(id: "bird \(n)", creationDate: start)
                context.insert(bird)
                bird.species = species
                birds.append(bird)
            }
            birds[1].dislikedFoods = [seeds]
            birds[2].favoriteFood = seeds

            let fern = PlantSpecies(id: "fern")
            let rose = PlantSpecies(id: "rose", isFlowering: true)
            context.insert(fern)
            context.insert(rose)
            for (n, species) in [fern, rose, rose].enumerated() {
                let plant = Plant(id: "plant \(n)", height: Double(n))
                context.insert(plant)
                plant.species = species
                plant.backyard = yard
            }

            // The fixture's own code, which reads through the relationships from other files.
            let visits = Visit.generate(birds: birds, backyards: [yard], start: start, in: context)
            #expect(visits.count == 2, "the kingfisher is rare: no visit")
            #expect(swallow.birds.map(\.id).sorted() == ["bird 0", "bird 1"], "the inverse is set at once")
            #expect(Bird.migratorySpeciesNames(birds) == ["Barn Swallow", "Barn Swallow"])
            #expect(Bird.rare(birds).map(\.id) == ["bird 2"])
            #expect(Garden.floweringSpeciesNames(in: yard) == ["Rose", "Rose"])
            #expect(Garden.unhappyBirds(in: yard, among: birds).map(\.id) == ["bird 1"])
            #expect(yard.visits.count == 2, "the inverse of Visit.backyard, inferred")
            try context.save()
        }

        let context = ModelContext(try ModelContainer(for: Schema(Self.fixtureModels), configurations: configuration))
        let birds = try context.fetch(FetchDescriptor<Bird>(sortBy: [SortDescriptor(\.id)]))
        #expect(birds.map { $0.species?.id } == ["barn swallow", "barn swallow", "kingfisher"])
        #expect(birds.map(\.speciesName) == ["Barn Swallow", "Barn Swallow", "Kingfisher"])
        #expect(birds.map { $0.lastSeen != nil } == [true, true, false])
        #expect(birds[2].favoriteFood?.name == "Sunflower seeds")
        let species = try context.fetch(FetchDescriptor<BirdSpecies>(sortBy: [SortDescriptor(\.id)]))
        #expect(species.map { $0.birds.count } == [2, 1])

        let yard = try #require(try context.fetch(FetchDescriptor<Backyard>()).first)
        #expect(yard.visits.map(\.visitorSpeciesName) == ["Barn Swallow", "Barn Swallow"])
        #expect(Set(yard.recentVisitors.map(\.id)) == ["bird 0", "bird 1"])
        #expect(yard.plants.count == 3)
        #expect(Garden.floweringSpeciesNames(in: yard) == ["Rose", "Rose"])
        #expect(Garden.unhappyBirds(in: yard, among: birds).map(\.id) == ["bird 1"])

        // Cascades declared across files: deleting a species deletes its birds.
        context.delete(species[1])
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Bird>()) == 2)
    }

    @Test func everyModelPropertyIsTheKindItsTypeSays() throws {
        let schema = Schema(Self.fixtureModels + [Aviary.self, Perch.self, Keeper.self, Resident.self])
        func relationships(_ name: String) -> [String] {
            (schema.entitiesByName[name]?.relationships ?? []).map { "\($0.name)->\($0.destination)\($0.isToOneRelationship ? "" : "*")" }.sorted()
        }
        func attributes(_ name: String) -> [String] { (schema.entitiesByName[name]?.attributes ?? []).map(\.name).sorted() }
        #expect(relationships("Bird") == ["dislikedFoods->BirdFood*", "favoriteFood->BirdFood", "species->BirdSpecies"])
        #expect(attributes("Bird") == ["creationDate", "id", "lastSeen", "tag"])
        #expect(relationships("BirdSpecies") == ["birds->Bird*"])
        #expect(relationships("Plant") == ["backyard->Backyard", "species->PlantSpecies"])
        #expect(relationships("Backyard") == ["birdFood->BirdFood", "plants->Plant*", "visits->Visit*"])
        #expect(relationships("Aviary") == ["deputy->Keeper", "keeper->Keeper", "perches->Perch*", "residents->Resident*"])
        #expect(relationships("Resident") == ["aviary->Aviary", "perches->Perch*"])

        let birds = try #require(schema.entitiesByName["BirdSpecies"]?.relationships.first)
        #expect(birds.deleteRule == .cascade && birds.inverseName == "species")
        let species = try #require(schema.entitiesByName["Bird"]?.relationships.first { $0.name == "species" })
        #expect(species.minimumModelCount == nil && species.maximumModelCount == nil, "a relationship without a declaration")
        let deputy = try #require(schema.entitiesByName["Aviary"]?.relationships.first { $0.name == "deputy" })
        #expect(deputy.originalName == "formerKeeper", "@Attribute(originalName:) renames a relationship")
    }

    @Test func swift6ModelsReferringToEachOtherAcrossFiles() throws {
        let dir = TemporaryDirectory()
        let configuration = ModelConfiguration(url: dir.store("aviaries"))
        do {
            let context = ModelContext(try ModelContainer(for: Aviary.self, Perch.self, Keeper.self, Resident.self,
                                                          configurations: configuration))
            let ada = Keeper(name: "Ada")
            let aviary = Aviary(code: "A1")
            context.insert(ada)
            context.insert(aviary)
            aviary.keeper = ada
            aviary.deputy = Keeper(name: "Bo")
            let low = Perch(height: 1), high = Perch(height: 3)
            aviary.perches = [low, high]
            let wren = Resident(name: "wren")
            context.insert(wren)
            wren.aviary = aviary
            wren.perches?.append(high)
            #expect(ada.aviaries.map(\.code) == ["A1"])
            #expect(aviary.residents.map(\.name) == ["wren"])
            #expect(high.favoriteOf?.name == "wren")
            #expect(wren.aviaryKeeper == "ADA")
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: Aviary.self, Perch.self, Keeper.self, Resident.self,
                                                      configurations: configuration))
        let aviary = try #require(try context.fetch(FetchDescriptor<Aviary>()).first)
        #expect(aviary.keeperName == "ADA")
        #expect(aviary.deputy?.name == "Bo")
        #expect(aviary.perches.map(\.height) == [1, 3])
        #expect(aviary.residents.first?.perches?.map(\.height) == [3])
        #expect(try context.fetch(FetchDescriptor<Resident>()).map(\.aviaryKeeper) == ["ADA"])
    }
}
