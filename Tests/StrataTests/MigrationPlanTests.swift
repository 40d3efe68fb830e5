import Foundation
import Testing
import Strata

enum TripsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budgetText: String = ""
        init() {}
        init(name: String, budgetText: String) { self.name = name; self.budgetText = budgetText }
    }
}

enum TripsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budgetText: String = ""
        @Attribute var budget: Double = 0
        init() {}
    }
}

enum TripsV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budget: Double = 0
        init() {}
    }
}

struct StageFailure: Error {}

enum TripsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripsV1.self, TripsV2.self, TripsV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: TripsV1.self, toVersion: TripsV2.self, willMigrate: { context in
                // willMigrate sees the old models: drop journeys without a name.
                try context.delete(model: TripsV1.Journey.self, where: #Predicate { $0.name == "" })
            }, didMigrate: { context in
                // didMigrate sees the new ones: parse the text into the new property.
                for journey in try context.fetch(FetchDescriptor<TripsV2.Journey>()) {
                    journey.budget = Double(journey.budgetText) ?? 0
                }
            }),
            .lightweight(fromVersion: TripsV2.self, toVersion: TripsV3.self),
        ]
    }
}

enum FailingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripsV1.self, TripsV2.self, TripsV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: TripsV1.self, toVersion: TripsV2.self, willMigrate: nil, didMigrate: { context in
                for journey in try context.fetch(FetchDescriptor<TripsV2.Journey>()) { journey.budget = 1 }
                try context.save()
                throw StageFailure()
            }),
            .lightweight(fromVersion: TripsV2.self, toVersion: TripsV3.self),
        ]
    }
}

@Suite struct MigrationPlanTests {
    func writeV1(_ dir: TemporaryDirectory) throws {
        let context = ModelContext(try ModelContainer(for: TripsV1.Journey.self, configurations: ModelConfiguration(url: dir.store())))
        context.insert(TripsV1.Journey(name: "Lisbon", budgetText: "12.5"))
        context.insert(TripsV1.Journey(name: "Oslo", budgetText: "99"))
        context.insert(TripsV1.Journey(name: "", budgetText: "1"))
        try context.save()
    }

    @Test func aV1StoreOpensWithV3ThroughEveryStageInOrder() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir)
        let progress = ProgressLog()
        var config = ModelConfiguration(url: dir.store())
        config.migrationProgress = { progress.append($0) }
        let container = try ModelContainer(for: TripsV3.Journey.self, migrationPlan: TripsPlan.self, configurations: config)
        let journeys = try ModelContext(container).fetch(FetchDescriptor<TripsV3.Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(journeys.map(\.name) == ["Lisbon", "Oslo"])
        #expect(journeys.map(\.budget) == [12.5, 99])
        #expect(container.migrationPlan == TripsPlan.self)
        // Each step once, in order (the copy may report several times as it goes), and the
        // fraction only grows, to 1.
        var steps: [String] = []
        for step in progress.steps where steps.last != step { steps.append(step) }
        #expect(steps == ["copy the store", "from 1.0.0 to 2.0.0", "from 2.0.0 to 3.0.0", "replace the store", "done"])
        #expect(progress.fractions == progress.fractions.sorted())
        #expect(progress.fractions.last == 1)
        #expect(try container.stores.first?.verify().isClean == true)
    }

    @Test func aStageThatThrowsLeavesTheStoreAsItWas() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir)
        let before = try Data(contentsOf: dir.store())
        #expect(throws: StageFailure.self) {
            _ = try ModelContainer(for: TripsV3.Journey.self, migrationPlan: FailingPlan.self, configurations: ModelConfiguration(url: dir.store()))
        }
        #expect(try Data(contentsOf: dir.store()) == before)
        #expect(!FileManager.default.fileExists(atPath: dir.store().path + ".migrating"))
        let context = ModelContext(try ModelContainer(for: TripsV1.Journey.self, configurations: ModelConfiguration(url: dir.store())))
        #expect(try context.fetchCount(FetchDescriptor<TripsV1.Journey>()) == 3)
    }
}

final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [MigrationProgress] = []
    func append(_ p: MigrationProgress) { lock.withLock { items.append(p) } }
    var steps: [String] { lock.withLock { items.map(\.step) } }
    var fractions: [Double] { lock.withLock { items.map(\.fractionCompleted) } }
}

enum ShelfV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Book.self] }
    final class Book: PersistentModel {
        @Attribute var title: String = ""
        init() {}
    }
}

enum ShelfV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [ShelfV1.Book.self, Shelf.self] }
    final class Shelf: PersistentModel {
        @Attribute var label: String = ""
        init() {}
    }
}

/// V2 only adds a model; its stage records that it ran by inserting a shelf.
enum ShelfPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [ShelfV1.self, ShelfV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: ShelfV1.self, toVersion: ShelfV2.self, willMigrate: nil, didMigrate: { context in
            let shelf = ShelfV2.Shelf()
            shelf.label = "made by the stage"
            context.insert(shelf)
        })]
    }
}

@Suite struct MigrationVersionDetectionTests {
    func stageRuns(writtenWith models: [any PersistentModel.Type]) throws -> Int {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try ModelContainer(for: Schema(models), configurations: [ModelConfiguration(url: dir.store())]))
            let book = ShelfV1.Book()
            book.title = "Dune"
            context.insert(book)
            try context.save()
        }
        let container = try ModelContainer(for: Schema(ShelfV2.models), migrationPlan: ShelfPlan.self, configurations: [ModelConfiguration(url: dir.store())])
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<ShelfV1.Book>()) == 1)
        return try context.fetchCount(FetchDescriptor<ShelfV2.Shelf>(predicate: #Predicate { $0.label == "made by the stage" }))
    }

    /// A store written without a plan records no version: it is recognised by its models'
    /// shape, the latest version it matches whole.
    @Test func aStoreWrittenWithTheLatestModelsWithoutAPlanIsNotMigratedAgain() throws {
        #expect(try stageRuns(writtenWith: ShelfV2.models) == 0)
    }

    @Test func aStoreWrittenWithTheFirstModelsRunsTheStage() throws {
        #expect(try stageRuns(writtenWith: ShelfV1.models) == 1)
    }
}
