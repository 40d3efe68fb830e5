// What `@ModelActor` writes, at run time: an actor whose context imports and upserts off the
// main actor. A model actor's scenarios run as conformance scenarios on @Model models
// (ConformanceTests.swift); autosave does not depend on how the models are spelled.

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
    /// Inserts each pair as an item (an upsert where its key is stored), saving every `batch`.
    func load(_ pairs: [(key: Int, value: String)], batch: Int) throws {
        for (i, pair) in pairs.enumerated() {
            modelContext.insert(SyncItem(key: pair.key, value: pair.value))
            if (i + 1) % batch == 0 { try modelContext.save() }
        }
        try modelContext.save()
    }

    func values() throws -> [String] {
        try modelContext.fetch(FetchDescriptor<SyncItem>(sortBy: [SortDescriptor(\.key)])).map(\.value)
    }
}

@Suite struct ModelActorTests {
    @Test func anActorTheMacroWroteImportsAndUpsertsOnItsOwnContext() async throws {
        let container = try ModelContainer(for: SyncItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let importer = Importer(modelContainer: container)
        try await importer.load((0..<5).map { ($0, "v\($0)") }, batch: 2)
        try await importer.load([(1, "again"), (7, "new")], batch: 10)
        #expect(try await importer.values() == ["v0", "again", "v2", "v3", "v4", "new"])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<SyncItem>()) == 6)
    }
}
