import Foundation
import Testing
import StrataData

// Docs/PortingFromSwiftData.md's migration example, as SwiftData writes it: versioned schemas
// of @Model classes, a renamed property (`originalName:`) and an added one with a default.

enum TripsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }

    @Model final class Trip {
        var name: String = ""
        init(name: String) { self.name = name }
    }
}

enum TripsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Trip.self] }

    @Model final class Trip {
        @Attribute(originalName: "name") var title: String = ""   // renamed
        var rating: Int = 0                                        // added, with a default
    }
}

enum TripsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [TripsV1.self, TripsV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: TripsV1.self, toVersion: TripsV2.self)] }
}

@Suite struct MigrationTests {
    @Test func aLightweightMigrationBetweenMacroSpelledVersions() throws {
        let dir = TemporaryDirectory()
        let configuration = ModelConfiguration(url: dir.store("migrating"))
        do {
            let context = ModelContext(try ModelContainer(for: TripsV1.Trip.self, configurations: configuration))
            context.insert(TripsV1.Trip(name: "Lisbon"))
            try context.save()
        }
        let container = try ModelContainer(for: TripsV2.Trip.self, migrationPlan: TripsMigrationPlan.self,
                                           configurations: configuration)
        let trips = try ModelContext(container).fetch(FetchDescriptor<TripsV2.Trip>())
        #expect(trips.map { "\($0.title) \($0.rating)" } == ["Lisbon 0"])
    }
}
