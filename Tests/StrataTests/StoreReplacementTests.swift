// The file at a store's path changes under this process's containers: another file renamed
// over it, or a migration by a new container while the old one is still open. A new container
// reads the file that is at the path now (as a new SQLite connection would); an old one never
// writes into a file nobody can open again, and says so with a typed error.
import Foundation
import Testing
import Strata
import StrataEngine

@Suite struct StoreReplacementTests {
    let dir = TemporaryDirectory()

    private func trips(_ names: [String], at url: URL) throws -> (ModelContainer, ModelContext) {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        for name in names { context.insert(Trip(name: name, startDate: .now)) }
        try context.save()
        return (container, context)
    }

    private func names(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    @Test func aNewContainerReadsTheFileRenamedOverThePath() throws {
        let url = dir.store("trips"), other = dir.store("other")
        let (old, oldContext) = try trips(["a", "b"], at: url)
        do { _ = try trips(["x", "y", "z"], at: other) }   // closed when the scope ends
        #expect(rename(other.path, url.path) == 0)

        let new = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        #expect(try names(new) == ["x", "y", "z"])
        let context = ModelContext(new)
        context.insert(Trip(name: "w", startDate: .now))
        try context.save()
        #expect(try names(new) == ["w", "x", "y", "z"])

        // The old container's next save is refused: it would go to the unlinked file and be lost.
        oldContext.insert(Trip(name: "lost", startDate: .now))
        var thrown: (any Error)?
        do { try oldContext.save() } catch { thrown = error }
        let store = (thrown as? StrataError)?.underlying as? StoreError
        #expect(store?.code == .replaced, "\(String(describing: thrown))")
        _ = old
        // What the new container saved is what a fresh process would find.
        let store2 = try Store(path: url.path, options: StoreOptions(readOnly: true))
        #expect(try store2.read { tx in try tx.collection(named: "Trip").map { try tx.count(in: $0) } } == 4)
    }

    @Test func aStoreRemovedAndCreatedAgainAtThePathIsANewStore() throws {
        let url = dir.store("trips")
        let (old, oldContext) = try trips(["a"], at: url)
        try FileManager.default.removeItem(at: url)
        let new = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: url))
        #expect(try names(new) == [])
        oldContext.insert(Trip(name: "lost", startDate: .now))
        #expect(throws: StrataError.self) { try oldContext.save() }
        _ = old
    }
}

// MARK: A migration while this process holds the old container (SwiftData's own tests do this).

enum HeldV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Animal.self] }
    final class Animal: PersistentModel {
        @Attribute var name: String = ""
        init() {}
        init(name: String) { self.name = name }
    }
}

enum HeldV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Animal.self] }
    final class Animal: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var legs: Int = 0
        init() {}
    }
}

enum HeldPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [HeldV1.self, HeldV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: HeldV1.self, toVersion: HeldV2.self, willMigrate: nil, didMigrate: { context in
            for animal in try context.fetch(FetchDescriptor<HeldV2.Animal>()) { animal.legs = animal.name == "bird" ? 2 : 4 }
        })]
    }
}

@Suite struct MigrationWhileHeldTests {
    let dir = TemporaryDirectory()

    @Test func aNewContainerMigratesWhileTheOldOneIsStillOpen() throws {
        let url = dir.store("animals")
        let v1 = try ModelContainer(for: HeldV1.Animal.self, configurations: ModelConfiguration(url: url))
        let oldContext = ModelContext(v1)
        let cat = HeldV1.Animal(name: "cat")
        oldContext.insert(cat)
        oldContext.insert(HeldV1.Animal(name: "bird"))
        try oldContext.save()

        // As SwiftData lets a second connection migrate: the V1 container and context are alive.
        let v2 = try ModelContainer(for: HeldV2.Animal.self, migrationPlan: HeldPlan.self, configurations: ModelConfiguration(url: url))
        let animals = try ModelContext(v2).fetch(FetchDescriptor<HeldV2.Animal>(sortBy: [SortDescriptor(\.name)]))
        #expect(animals.map(\.name) == ["bird", "cat"])
        #expect(animals.map(\.legs) == [2, 4])

        // The holder of the old schema keeps what it has, and may fetch or save no more.
        #expect(cat.name == "cat")
        var fetchError: StrataError?
        do { _ = try oldContext.fetch(FetchDescriptor<HeldV1.Animal>()) } catch let error as StrataError { fetchError = error }
        #expect(fetchError?.code == .schemaChanged, "\(String(describing: fetchError))")
        cat.name = "lion"
        var saveError: StrataError?
        do { try oldContext.save() } catch let error as StrataError { saveError = error }
        #expect(saveError?.code == .schemaChanged, "\(String(describing: saveError))")

        // The new container saves; a fresh one on the new models sees it.
        let context = ModelContext(v2)
        let dog = HeldV2.Animal()
        dog.name = "dog"
        dog.legs = 4
        context.insert(dog)
        try context.save()
        let again = try ModelContainer(for: HeldV2.Animal.self, migrationPlan: HeldPlan.self, configurations: ModelConfiguration(url: url))
        #expect(try ModelContext(again).fetchCount(FetchDescriptor<HeldV2.Animal>()) == 3)
        _ = v1
    }
}
