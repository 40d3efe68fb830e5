import Foundation
import Observation
import Testing
import Strata

// ResultsObserver and HistoryChanges in one process: they follow saves made through other
// contexts of the container and through another container on the same file. (A second
// process: StrataReliabilityTests/HistoryProcessTests.)

/// Holds an observer on its own actor, as server code would.
actor NoteWatcher {
    private var observer: ResultsObserver<HNote, Never>?
    private let fired = Counter()

    func start(_ container: ModelContainer, predicate: Predicate<HNote>? = nil) throws {
        observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<HNote>(predicate: predicate, sortBy: [SortDescriptor(\.key)]),
                                       modelContainer: container)
        track()
    }

    private func track() {
        guard let observer else { return }
        withObservationTracking { _ = observer.results } onChange: { [fired] in fired.add() }
    }

    func keys() -> [Int] {
        track()
        return observer?.results.map(\.key) ?? []
    }

    var changesSeen: Int { fired.value }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Waits until `condition` holds: up to 2,000 looks 5 ms apart. Counted in looks, not time:
/// while synchronous tests hold the cooperative pool's threads (two on this machine), no task
/// runs, and that time must not count against the observer.
func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<2000 {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}

/// A HistoryObserver of notes on its own actor.
actor NoteHistoryWatcher {
    private var observer: HistoryObserver?
    func start(_ container: ModelContainer, authors: Set<String> = []) throws {
        observer = try HistoryObserver(observedModels: [HNote.self], authors: authors, modelContainer: container)
    }
    var events: Int { observer?.eventCounter ?? -1 }
    var newest: Int64? { (observer?.historyTokens.values.first as? DefaultHistoryToken)?.tokenValue }
}

@Suite struct HistoryObserverTests {
    let dir = TemporaryDirectory()

    @Test func anObserverFollowsSavesOfOtherContexts() async throws {
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: dir.store()))
        let watcher = NoteWatcher()
        try await watcher.start(container, predicate: #Predicate { $0.key < 100 })
        #expect(await watcher.keys() == [])
        let context = ModelContext(container)
        for key in [3, 1, 2, 500] { context.insert(HNote(key, "n\(key)")) }
        try context.save()
        #expect(await eventually { await watcher.keys() == [1, 2, 3] })
        #expect(await watcher.changesSeen >= 1)
        // A change that moves an object out of the predicate, and a delete.
        let one = try #require(try context.fetch(FetchDescriptor<HNote>(predicate: #Predicate { $0.key == 1 })).first)
        one.key = 101
        try context.save()
        #expect(await eventually { await watcher.keys() == [2, 3] })
        try context.delete(model: HNote.self, where: #Predicate { $0.key == 2 })
        try context.save()
        #expect(await eventually { await watcher.keys() == [3] })
    }

    @Test func anObserverFollowsAnotherContainerOnTheSameFile() async throws {
        let url = dir.store()
        let first = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: url))
        let second = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: url))
        let watcher = NoteWatcher()
        try await watcher.start(first)
        let context = ModelContext(second)
        context.insert(HNote(7, "seven"))
        try context.save()
        #expect(await eventually { await watcher.keys() == [7] })
    }

    @Test func historyChangesDeliversEachTransactionWhole() async throws {
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: dir.store()))
        let setup = ModelContext(container)
        setup.insert(HNote(0, "before"))
        try setup.save()                      // before the stream: not delivered
        let stream = container.historyChanges()
        let reader = Task {
            var notices: [HistoryNotice] = []
            for try await notice in stream {
                notices.append(notice)
                if notices.count == 3 { break }
            }
            return notices
        }
        let context = ModelContext(container)
        context.author = "writer"
        for key in 1...3 { context.insert(HNote(key, "n\(key)")) }
        try context.save()
        let one = try #require(try context.fetch(FetchDescriptor<HNote>(predicate: #Predicate { $0.key == 1 })).first)
        one.body = "changed"
        let id = one.persistentModelID
        try context.save()
        context.delete(one)
        try context.save()
        let notices = try await reader.value
        #expect(notices.map(\.inserted.count) == [3, 0, 0])
        #expect(notices.map(\.updated) == [[], [id], []])
        #expect(notices.map(\.deleted.count) == [0, 0, 1])
        #expect(notices.allSatisfy { $0.author == "writer" })
        #expect(notices.map(\.token) == notices.map(\.token).sorted())
        let all = try setup.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(notices.map(\.token) == Array(all.dropFirst().map(\.token)))
    }

    @Test func cancellingEndsTheStream() async throws {
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: dir.store()))
        let reader = Task {
            var count = 0
            for try await _ in container.historyChanges() { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        #expect(try await reader.value == 0)
    }

    @Test func aHistoryObserverCountsTheTransactionsOfItsModels() async throws {
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        context.insert(HNote(0, "before"))
        try context.save()                                  // before the observer: not counted
        let watcher = NoteHistoryWatcher(), byImporter = NoteHistoryWatcher()
        try await watcher.start(container)
        try await byImporter.start(container, authors: ["importer"])
        context.insert(HTag("red", uses: 1, color: ""))     // not a note: the token moves, the counter does not
        try context.save()
        #expect(await eventually { await watcher.newest == 2 })
        #expect(await watcher.events == 0)
        context.insert(HNote(1, "one"))
        try context.save()
        context.author = "importer"
        context.insert(HNote(2, "two"))
        try context.save()
        #expect(await eventually {
            let (all, imported) = (await watcher.events, await byImporter.events)
            return all == 2 && imported == 1
        })
        #expect(await watcher.newest == 4)
    }
}
