import Foundation
import Observation
import Testing
import Strata
import Synchronization

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

    /// History pruned before the observer read it: the observer counts it as one event, says
    /// why (`historyError`), and follows the saves after it. (It once stopped following, its
    /// counter still: a reader saw nothing, then nothing more.)
    @Test func aHistoryObserverWhoseUnreadHistoryWasPrunedCountsItAndFollowsOn() async throws {
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: dir.store()))
        let run = PrunedHistoryRun()
        try await run.startThenSaveAndPrune(container)
        #expect(await eventually { await run.state == .init(events: 1, expired: true, failed: true) })
        let context = ModelContext(container)
        context.insert(HNote(3, "three"))
        try context.save()
        #expect(await eventually { await run.state == .init(events: 2, expired: false, failed: false) })
        // The tokens it started from are gone: a reader's fetch after them says so.
        let start = DefaultHistoryToken(tokenValue: 0, storeIdentifier: try #require(await run.newestStore))
        #expect(throws: StrataError.self) {
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > start }))
        }
    }
}

/// A HistoryObserver whose actor is kept busy until the history the observer has yet to read
/// was deleted.
actor PrunedHistoryRun {
    struct State: Equatable { var events: Int, expired: Bool, failed: Bool }
    private var observer: HistoryObserver?

    /// Makes the observer, then saves two notes and deletes the history of both, all without
    /// a suspension: the observer's reads after the saves wait for this actor, and find them
    /// pruned.
    func startThenSaveAndPrune(_ container: ModelContainer) throws {
        observer = try HistoryObserver(observedModels: [HNote.self], modelContainer: container)
        let context = ModelContext(container)
        for key in 1...2 {
            context.insert(HNote(key, "n\(key)"))
            try context.save()
        }
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
    }

    var state: State {
        let error = observer?.historyError
        let expired = (error as? StrataError)?.code == .historyTokenExpired
        return State(events: observer?.eventCounter ?? -1, expired: expired, failed: error != nil)
    }

    var newestStore: String? { observer?.historyTokens.keys.first }
}

// MARK: Observers while Swift's global executor is busy

/// A serial executor of its own, and a task executor: a Dispatch queue, off Swift's global
/// executor. (A task that prefers it resumes there after a continuation, too; without the
/// preference a resumed task passes through the global executor first.)
final class QueueExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "strata.tests.queue-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// Tasks that hold threads of Swift's global executor (blocked, as a synchronous test or a
/// blocking call holds one) until released, or until `bound` passes.
final class GlobalExecutorHolder: Sendable {
    private let started = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    let count: Int

    /// Starts `count` holding tasks (one per thread of the executor: it has one per core), each
    /// held until released or until `bound` passed, and waits up to 2 s for them to start. (A
    /// thread another test holds is busy anyway; waiting longer for it would hold the threads
    /// already taken from every other test meanwhile.)
    init(count: Int = ProcessInfo.processInfo.activeProcessorCount, bound: Duration) {
        self.count = count
        let deadline = DispatchTime.now() + bound.timeInterval
        for _ in 0..<count {
            Task.detached { [started, release] in
                started.signal()
                _ = release.wait(timeout: deadline)
            }
        }
        let startBound = DispatchTime.now() + 2
        for _ in 0..<count where started.wait(timeout: startBound) == .timedOut { break }
    }

    func releaseAll() { for _ in 0..<count { release.signal() } }
}

extension Duration {
    var timeInterval: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// An observer on an actor whose executor is a queue of its own, as a server's would be: it
/// holds every thread of the global executor, saves, and looks whether the observer followed
/// before it lets them go.
actor StarvedObserverRun {
    nonisolated let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// A results observer's keys and a history observer's count after a save through another
    /// context of `container`, then after one through `other` (a second container on the same
    /// file), each read once the observers show it or `bound` passed, all while the global
    /// executor's threads are held.
    func run(_ container: ModelContainer, other: ModelContainer, bound: Duration) async throws -> [(keys: [Int], transactions: Int)] {
        let observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<HNote>(sortBy: [SortDescriptor(\.key)]), modelContainer: container)
        let history = try HistoryObserver(observedModels: [HNote.self], modelContainer: container)
        let holder = GlobalExecutorHolder(bound: bound)
        defer { holder.releaseAll() }
        var seen: [(keys: [Int], transactions: Int)] = []
        for (key, saver) in [(1, container), (2, other)] {
            let context = ModelContext(saver)
            context.insert(HNote(key, "n\(key)"))
            try context.save()
            let keys = await value({ observer.results.map(\.key) }, once: Array(1...key), bound: bound)
            seen.append((keys, await value({ history.eventCounter }, once: key, bound: bound)))
        }
        return seen
    }

    /// `read()` once it is `expected`, or when `bound` passed first; looked at again after
    /// each change of what it reads.
    private func value<T: Equatable>(_ read: () -> T, once expected: T, bound: Duration) async -> T {
        let deadline = DispatchTime.now() + bound.timeInterval
        while true {
            let value = read()
            if value == expected || DispatchTime.now() >= deadline { return value }
            let resumed = Mutex(false)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resume: @Sendable () -> Void = {
                    if resumed.withLock({ was in defer { was = true }; return !was }) { continuation.resume() }
                }
                withObservationTracking { _ = read() } onChange: { resume() }
                DispatchQueue.global().asyncAfter(deadline: deadline, execute: resume)
            }
        }
    }
}

@Suite struct ObserversWithABusyGlobalExecutorTests {
    let dir = TemporaryDirectory()

    /// A save through another context raises the hub's generation before it returns, another
    /// container's is polled from a Dispatch queue, and the observers' work is enqueued on their
    /// actor directly: none of it waits for a thread of Swift's global executor. (The poller
    /// once slept in a task, queued behind every synchronous test case, and the conformance
    /// suite's observer scenarios failed in CI.)
    @Test func observersOnTheirOwnActorFollowSavesWhileEveryGlobalExecutorThreadIsHeld() async throws {
        let url = dir.store()
        let container = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: url))
        let other = try ModelContainer(for: HNote.self, HLine.self, HTag.self, configurations: ModelConfiguration(url: url))
        let run = StarvedObserverRun()
        let seen = try await Task(executorPreference: run.executor) {
            try await run.run(container, other: other, bound: .seconds(60))
        }.value
        try #require(seen.count == 2)
        let (own, elsewhere) = (seen[0], seen[1])
        #expect(own.keys == [1], "the results observer followed a save through another context of its container")
        #expect(own.transactions == 1, "the history observer counted it")
        #expect(elsewhere.keys == [1, 2], "the results observer followed a save through another container on the same file")
        #expect(elsewhere.transactions == 2, "the history observer counted it")
    }
}
