// A ResultsObserver whose refetch fails keeps its results and says why (`fetchError`), and
// recovers at the next commit it can fetch: stale results are never shown as current silently.
import Foundation
import Observation
import Testing
import Strata

/// An observer of journeys on its own actor.
actor JourneyWatcher {
    private var observer: ResultsObserver<Journey, Never>?
    private let fired = Counter()

    func start(_ container: ModelContainer) throws {
        observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.name)]), modelContainer: container)
        track()
    }

    private func track() {
        guard let observer else { return }
        withObservationTracking { _ = observer.results; _ = observer.fetchError } onChange: { [fired] in fired.add() }
    }

    /// The names in the results, and the failure of the last refetch (its description).
    func state() -> (names: [String], error: String?) {
        track()
        return (observer?.results.map(\.name) ?? [], observer?.fetchError.map { "\($0)" })
    }

    var changesSeen: Int { fired.value }
}

@Suite struct ObserverFetchErrorTests {
    struct ServerGone: Error, CustomStringConvertible {
        var description: String { "the server went away" }
    }

    @Test func aFailedRefetchKeepsTheResultsAndSaysWhyUntilAFetchSucceeds() async throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Schema([Journey.self, Leg.self]), configurations: [configuration] as [any DataStoreConfiguration])
        let watcher = JourneyWatcher()
        let context = ModelContext(container)
        context.insert(Journey("first", day: 1))
        try context.save()
        try await watcher.start(container)
        #expect(await watcher.state().names == ["first"])
        #expect(await watcher.state().error == nil)

        // The store fails every fetch: the save goes through, the observer's refetch fails.
        configuration.failFetches.withLock { $0 = ServerGone() }
        context.insert(Journey("second", day: 2))
        try context.save()
        #expect(await eventually { await watcher.state().error != nil })
        let failed = await watcher.state()
        #expect(failed.names == ["first"], "the results stay what the last fetch found")
        #expect(failed.error?.contains("the server went away") == true)

        // The store is back: the next commit's refetch clears the error.
        configuration.failFetches.withLock { $0 = nil }
        context.insert(Journey("third", day: 3))
        try context.save()
        #expect(await eventually { await watcher.state().names == ["first", "second", "third"] })
        #expect(await watcher.state().error == nil)
        #expect(await watcher.changesSeen >= 2)
    }
}
