// The macro spelling of Tests/StrataTests/ModelActorTests.swift: the same tests, word for word,
// with `@ModelActor` and `@Model`. Keep the two files in step.

import Foundation
import Testing
import StrataData

@Model final class SyncItem {
    @Attribute(.unique) var key: Int = 0
    var value: String = ""
    init(key: Int, value: String) { self.key = key; self.value = value }
}

/// SwiftData's `@ModelActor` writes the container, the executor and `init(modelContainer:)`.
@ModelActor actor Importer {
    /// A background import with a save every `batch` objects.
    func importItems(_ range: Range<Int>, batch: Int) throws -> Int {
        var saves = 0
        for key in range {
            modelContext.insert(SyncItem(key: key, value: "v\(key)"))
            if key % batch == batch - 1 { try modelContext.save(); saves += 1 }
        }
        try modelContext.save()
        return saves + 1
    }

    /// An upsert-style sync: every key inserted again with a new value.
    func sync(_ keys: [Int], value: String) throws {
        for key in keys { modelContext.insert(SyncItem(key: key, value: value)) }
        try modelContext.save()
    }

    func count() throws -> Int { try modelContext.fetchCount(FetchDescriptor<SyncItem>()) }
}

@Suite struct ModelActorTests {
    @Test func backgroundImportAndSyncWhileAnotherContextReads() async throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: SyncItem.self, configurations: ModelConfiguration(url: dir.store()))
        let importer = Importer(modelContainer: container)
        let reader = Task.detached {
            // A reader on its own context sees counts only grow, by whole saves.
            let context = ModelContext(container)
            var seen: [Int] = []
            for _ in 0..<50 {
                seen.append(try context.fetchCount(FetchDescriptor<SyncItem>()))
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            return seen
        }
        let saves = try await importer.importItems(0..<2_000, batch: 250)
        #expect(saves == 9)
        try await importer.sync(Array(0..<500), value: "synced")
        let seen = try await reader.value
        #expect(seen == seen.sorted())
        #expect(seen.allSatisfy { $0 % 250 == 0 })
        #expect(try await importer.count() == 2_000)
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<SyncItem>(predicate: #Predicate { $0.value == "synced" })) == 500)
    }

    @MainActor @Test func mainContextReadsWhatTheActorSaved() async throws {
        let container = try ModelContainer(for: SyncItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let importer = Importer(modelContainer: container)
        _ = try await importer.importItems(0..<100, batch: 50)
        #expect(try container.mainContext.fetchCount(FetchDescriptor<SyncItem>()) == 100)
    }
}

@Suite struct AutosaveTests {
    @MainActor @Test func theMainContextSavesOnTheMainActorsNextTurn() async throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: SyncItem.self, configurations: ModelConfiguration(url: dir.store()))
        #expect(container.mainContext.autosaveEnabled)
        container.mainContext.insert(SyncItem(key: 1, value: "a"))
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SyncItem>(includePendingChanges: false)) == 0)
        for _ in 0..<20 where container.mainContext.hasChanges { await Task.yield() }
        #expect(!container.mainContext.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SyncItem>()) == 1)
    }

    @Test func anotherContextAutosavesAtTheThresholdAndOnProcessPendingChanges() throws {
        let container = try ModelContainer(for: SyncItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        #expect(!context.autosaveEnabled)
        context.autosaveEnabled = true
        context.insert(SyncItem(key: 1, value: "a"))
        #expect(context.hasChanges)           // no main actor turn for other contexts
        context.processPendingChanges()
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SyncItem>()) == 1)
    }
}

extension FetchDescriptor {
    init(includePendingChanges: Bool) {
        self.init()
        self.includePendingChanges = includePendingChanges
    }
}
