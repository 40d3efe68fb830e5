import Foundation
import Testing
import StrataData

// SwiftData code that qualifies names with the module (Apple's Backyard Birds writes
// `SwiftData.Schema([...])`) compiles with `import StrataData` (issue 27, item 8). Without the
// `SwiftData` namespace of StrataData this file does not compile: "cannot find 'SwiftData' in
// scope".

enum QualifiedNames {
    @Model final class Feeder {
        @Attribute(.unique) var name: String
        var seeds: Int = 0
        var visits: [Sighting] = []
        init(name: String, seeds: Int = 0) { self.name = name; self.seeds = seeds }
    }

    @Model final class Sighting {
        var species: String
        var feeder: Feeder?
        init(species: String) { self.species = species }
    }

    enum FeedersV1: SwiftData.VersionedSchema {
        static var versionIdentifier: SwiftData.Schema.Version { SwiftData.Schema.Version(1, 0, 0) }
        static var models: [any SwiftData.PersistentModel.Type] { [Feeder.self] }

        @Model final class Feeder {
            var name: String = ""
            init(name: String) { self.name = name }
        }
    }

    enum FeedersV2: SwiftData.VersionedSchema {
        static var versionIdentifier: SwiftData.Schema.Version { SwiftData.Schema.Version(2, 0, 0) }
        static var models: [any SwiftData.PersistentModel.Type] { [Feeder.self] }

        @Model final class Feeder {
            @Attribute(originalName: "name") var label: String = ""
        }
    }

    enum FeedersPlan: SwiftData.SchemaMigrationPlan {
        static var schemas: [any SwiftData.VersionedSchema.Type] { [FeedersV1.self, FeedersV2.self] }
        static var stages: [SwiftData.MigrationStage] { [.lightweight(fromVersion: FeedersV1.self, toVersion: FeedersV2.self)] }
    }
}

@Suite struct QualifiedNameTests {
    typealias Feeder = QualifiedNames.Feeder
    typealias Sighting = QualifiedNames.Sighting

    @Test func schemaContainerConfigurationAndFetchDescriptorSpelledWithSwiftData() throws {
        let dir = TemporaryDirectory()
        let schema = SwiftData.Schema([Feeder.self, Sighting.self])
        let configuration = SwiftData.ModelConfiguration(schema: schema, url: dir.store())
        let container: SwiftData.ModelContainer = try SwiftData.ModelContainer(for: schema, configurations: [configuration])
        #expect(container.schema.entities.map(\.name).sorted() == ["Feeder", "Sighting"])

        let context: SwiftData.ModelContext = SwiftData.ModelContext(container)
        let garden = Feeder(name: "garden", seeds: 40)
        context.insert(garden)
        context.insert(Feeder(name: "porch", seeds: 10))
        let sighting = Sighting(species: "robin")
        context.insert(sighting)
        sighting.feeder = garden
        try context.save()

        let predicate: SwiftData.Predicate<Feeder> = #Predicate { $0.seeds > 20 }
        let descriptor = SwiftData.FetchDescriptor<Feeder>(predicate: predicate, sortBy: [SwiftData.SortDescriptor(\.name)])
        let fetched = try ModelContext(container).fetch(descriptor)
        #expect(fetched.map(\.name) == ["garden"])
        #expect(fetched.first?.visits.map(\.species) == ["robin"])

        let all = try context.fetch(SwiftData.FetchDescriptor<Feeder>(sortBy: [SwiftData.SortDescriptor(\.name, order: .reverse)]))
        #expect(all.map(\.name) == ["porch", "garden"])
        let identifier: SwiftData.PersistentIdentifier = garden.persistentModelID
        #expect(context.model(for: identifier) === garden)
        let models: [any SwiftData.PersistentModel.Type] = schema.entities.map(\.modelType)
        #expect(models.count == 2)
        let storeConfiguration: any SwiftData.DataStoreConfiguration = configuration
        #expect(storeConfiguration is SwiftData.ModelConfiguration)
    }

    @Test func aMigrationPlanSpelledWithSwiftData() throws {
        let dir = TemporaryDirectory()
        let configuration = SwiftData.ModelConfiguration(url: dir.store("feeders"))
        do {
            let context = SwiftData.ModelContext(try SwiftData.ModelContainer(for: QualifiedNames.FeedersV1.Feeder.self,
                                                                              configurations: configuration))
            context.insert(QualifiedNames.FeedersV1.Feeder(name: "garden"))
            try context.save()
        }
        let container = try SwiftData.ModelContainer(for: QualifiedNames.FeedersV2.Feeder.self,
                                                     migrationPlan: QualifiedNames.FeedersPlan.self, configurations: configuration)
        let feeders = try SwiftData.ModelContext(container).fetch(SwiftData.FetchDescriptor<QualifiedNames.FeedersV2.Feeder>())
        #expect(feeders.map(\.label) == ["garden"])
    }

    @Test func historySpelledWithSwiftData() throws {
        let dir = TemporaryDirectory()
        let container = try SwiftData.ModelContainer(for: Feeder.self, configurations: SwiftData.ModelConfiguration(url: dir.store()))
        let context = SwiftData.ModelContext(container)
        context.insert(Feeder(name: "garden"))
        try context.save()
        let transactions = try context.fetchHistory(SwiftData.HistoryDescriptor<SwiftData.DefaultHistoryTransaction>())
        var inserted = 0
        for transaction in transactions {
            let _: SwiftData.DefaultHistoryToken = transaction.token
            for change in transaction.changes {
                if case .insert(let insert as SwiftData.DefaultHistoryInsert<Feeder>) = change {
                    let _: any SwiftData.HistoryInsert<Feeder> = insert
                    inserted += 1
                }
            }
        }
        #expect(inserted == 1)
    }
}
