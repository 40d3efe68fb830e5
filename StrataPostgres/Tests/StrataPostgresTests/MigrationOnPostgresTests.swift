// A SchemaMigrationPlan on PostgreSQL: custom stages (willMigrate on the old models,
// didMigrate on the new ones) and lightweight ones (ALTER TABLE), all in one transaction.
import Foundation
import Synchronization
import Testing
import Strata
@testable import StrataPostgres

enum PGTripsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budgetText: String = ""
        init() {}
        init(name: String, budgetText: String) { self.name = name; self.budgetText = budgetText }
    }
}

enum PGTripsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budgetText: String = ""
        @Attribute var budget: Double = 0
        @Attribute var currency: String = "EUR"
        init() {}
    }
}

enum PGTripsV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budget: Double = 0
        @Attribute var currency: String = "EUR"
        init() {}
    }
}

enum PGTripsPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [PGTripsV1.self, PGTripsV2.self, PGTripsV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: PGTripsV1.self, toVersion: PGTripsV2.self, willMigrate: { context in
                try context.delete(model: PGTripsV1.Journey.self, where: #Predicate { $0.name == "" })
            }, didMigrate: { context in
                for journey in try context.fetch(FetchDescriptor<PGTripsV2.Journey>()) {
                    journey.budget = Double(journey.budgetText) ?? 0
                }
            }),
            .lightweight(fromVersion: PGTripsV2.self, toVersion: PGTripsV3.self),
        ]
    }
}

struct PGStageFailure: Error {}

enum PGFailingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [PGTripsV1.self, PGTripsV2.self, PGTripsV3.self] }
    static var stages: [MigrationStage] {
        [
            .custom(fromVersion: PGTripsV1.self, toVersion: PGTripsV2.self, willMigrate: { context in
                try context.delete(model: PGTripsV1.Journey.self, where: #Predicate { $0.name == "" })
                try context.save()
            }, didMigrate: { context in
                for journey in try context.fetch(FetchDescriptor<PGTripsV2.Journey>()) { journey.budget = 1 }
                try context.save()
                throw PGStageFailure()
            }),
            .lightweight(fromVersion: PGTripsV2.self, toVersion: PGTripsV3.self),
        ]
    }
}

@Suite struct MigrationOnPostgresTests {
    func configuration(_ url: URL, _ namespace: String, _ models: [any PersistentModel.Type]) -> PostgresConfiguration {
        PostgresConfiguration(schema: Schema(models), url: url, namespace: namespace)
    }

    func writeV1(_ url: URL, _ namespace: String) throws {
        let context = ModelContext(try ModelContainer(for: PGTripsV1.Journey.self, configurations: configuration(url, namespace, PGTripsV1.models)))
        context.insert(PGTripsV1.Journey(name: "Lisbon", budgetText: "12.5"))
        context.insert(PGTripsV1.Journey(name: "Oslo", budgetText: "99"))
        context.insert(PGTripsV1.Journey(name: "", budgetText: "1"))
        try context.save()
    }

    func columns(_ url: URL, _ namespace: String) throws -> [String] {
        let session = PostgresSession(configuration: try configuration(url, namespace, []).connectionConfiguration(), location: "test")
        return try session.withConnection {
            try $0.query("SELECT column_name::text FROM information_schema.columns WHERE table_schema = $1::text AND table_name = 'Journey' ORDER BY column_name", [namespace])
        }.compactMap { $0.first ?? nil }
    }

    @Test func aV1NamespaceOpensWithV3ThroughEveryStageInOrder() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        try writeV1(url, namespace)
        let reports = Mutex<[String]>([])
        var withProgress = configuration(url, namespace, PGTripsV3.models)
        withProgress.migrationProgress = { progress in reports.withLock { $0.append("\(progress.step) \(progress.fractionCompleted)") } }
        let container = try ModelContainer(for: Schema(PGTripsV3.models), migrationPlan: PGTripsPlan.self, configurations: [withProgress])
        let steps = reports.withLock { $0 }
        #expect(steps.count == 3 && steps.last == "done 1.0" && steps.first?.hasSuffix(" 0.0") == true, "\(steps)")
        let journeys = try ModelContext(container).fetch(FetchDescriptor<PGTripsV3.Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(journeys.map(\.name) == ["Lisbon", "Oslo"], "willMigrate deleted the nameless one")
        #expect(journeys.map(\.budget) == [12.5, 99], "didMigrate parsed the text")
        #expect(journeys.map(\.currency) == ["EUR", "EUR"], "an added attribute takes the model's default in the rows that exist")
        #expect(try columns(url, namespace) == ["_id", "_version", "budget", "currency", "name"], "the lightweight stage dropped budgetText")
        // Opened again with the plan: nothing to run (the version is recorded).
        let again = try ModelContainer(for: Schema(PGTripsV3.models), migrationPlan: PGTripsPlan.self,
                                       configurations: [configuration(url, namespace, PGTripsV3.models)])
        #expect(try ModelContext(again).fetchCount(FetchDescriptor<PGTripsV3.Journey>()) == 2)
    }

    @Test func aStageThatThrowsLeavesTheTablesAsTheyWere() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        try writeV1(url, namespace)
        let before = try columns(url, namespace)
        #expect(throws: (any Error).self) {
            _ = try ModelContainer(for: Schema(PGTripsV3.models), migrationPlan: PGFailingPlan.self,
                                   configurations: [configuration(url, namespace, PGTripsV3.models)])
        }
        #expect(try columns(url, namespace) == before, "no ALTER TABLE kept")
        let context = ModelContext(try ModelContainer(for: PGTripsV1.Journey.self, configurations: configuration(url, namespace, PGTripsV1.models)))
        #expect(try context.fetchCount(FetchDescriptor<PGTripsV1.Journey>()) == 3, "willMigrate's saved deletion undone with the rest")
        // The plan that works still runs from V1.
        let container = try ModelContainer(for: Schema(PGTripsV3.models), migrationPlan: PGTripsPlan.self,
                                           configurations: [configuration(url, namespace, PGTripsV3.models)])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGTripsV3.Journey>()) == 2)
    }

    @Test func otherModelsWithoutAPlanAreASchemaMismatch() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        try writeV1(url, namespace)
        // V3 drops budgetText and adds attributes: lightweight, so it opens without a plan too;
        // a changed type is not.
        var thrown: StrataError?
        do {
            _ = try ModelContainer(for: PGChangedJourney.Journey.self, configurations: configuration(url, namespace, PGChangedJourney.models))
        } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .schemaMismatch, "\(String(describing: thrown))")
        let context = ModelContext(try ModelContainer(for: PGTripsV1.Journey.self, configurations: configuration(url, namespace, PGTripsV1.models)))
        #expect(try context.fetchCount(FetchDescriptor<PGTripsV1.Journey>()) == 3)
    }
}

enum PGChangedJourney {
    static var models: [any PersistentModel.Type] { [Journey.self] }
    final class Journey: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var budgetText: Int = 0
        init() {}
    }
}
