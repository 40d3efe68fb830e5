import Foundation
import Observation
import Testing
import Strata

// ResultsObserver's sections (`sectionBy:`), as SwiftData (iOS 27) gives them.

final class Shelved: PersistentModel {
    @Attribute(.unique) var title: String = ""
    @Attribute var genre: String = ""
    @Attribute var series: String? = nil
    init() {}
    init(_ title: String, _ genre: String, series: String? = nil) { self.title = title; self.genre = genre; self.series = series }
}

/// A sectioned observer on its own actor.
actor ShelfWatcher {
    private var observer: ResultsObserver<Shelved, String>?
    func start(_ container: ModelContainer) throws {
        observer = try ResultsObserver(fetchDescriptor: FetchDescriptor(sortBy: [SortDescriptor(\.title)]), sectionBy: \.genre,
                                       modelContainer: container)
    }
    /// "genre: title, title" per section.
    func shape() -> [String] {
        observer?.sections?.map { "\($0.title): " + $0.map(\.title).joined(separator: ", ") } ?? []
    }
    func titles(in genre: String) -> [String]? { observer?.sections?[sectionTitle: genre]?.map(\.title) }
    func sortKeys() -> Int { observer?.sortBy.count ?? -1 }
}

@Suite struct SectionedObserverTests {
    let dir = TemporaryDirectory()

    @Test func sectionsGroupTheResultsByTheKeyPathAndFollowSaves() async throws {
        let container = try ModelContainer(for: Shelved.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        for (t, g) in [("Dune", "sf"), ("Emma", "classic"), ("Anathem", "sf"), ("Beloved", "classic")] { context.insert(Shelved(t, g)) }
        try context.save()
        let watcher = ShelfWatcher()
        try await watcher.start(container)
        // The section key path sorts first, then the given sort.
        #expect(await watcher.shape() == ["classic: Beloved, Emma", "sf: Anathem, Dune"])
        #expect(await watcher.sortKeys() == 2)
        #expect(await watcher.titles(in: "sf") == ["Anathem", "Dune"])
        #expect(await watcher.titles(in: "poetry") == nil)
        context.insert(Shelved("Odes", "poetry"))
        try context.save()
        #expect(await eventually { await watcher.shape() == ["classic: Beloved, Emma", "poetry: Odes", "sf: Anathem, Dune"] })
    }

    @MainActor @Test func anOptionalKeyPathMakesANilSectionAndAPlainObserverHasNone() throws {
        let container = try ModelContainer(for: Shelved.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Shelved("Dune", "sf", series: "Dune"))
        context.insert(Shelved("Emma", "classic"))
        context.insert(Shelved("Messiah", "sf", series: "Dune"))
        try context.save()
        let observer = try ResultsObserver(sectionBy: \Shelved.series, modelContext: context)
        let sections = try #require(observer.sections)
        #expect(sections.map(\.title) == [nil, "Dune"])
        #expect(sections[sectionTitle: "Dune"]?.count == 2)
        #expect(sections[sectionTitle: nil]?.map(\.title) == ["Emma"])
        #expect(sections.map(\.id) == sections.map(\.title))
        let plain = try ResultsObserver<Shelved, Never>(modelContext: context)
        #expect(plain.sections == nil)
        #expect(plain.results.count == 3)
    }
}
