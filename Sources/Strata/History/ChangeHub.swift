import Foundation
import Synchronization
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// Tells a container's observers (`ResultsObserver`, `HistoryChanges`) that one of its stores
/// has a new commit: at once after a save through the container, and within `pollInterval`
/// for any other commit (another container of this process on the same file, or another
/// process writing it). Another process's commit is noticed by polling: each poll begins a
/// read of each store, which for a store opened read-only reads the commit the writer
/// published in the lock file through its shared mapping (after one `F_OFD_GETLK` to see
/// that the writer is alive). It polls only while something waits or follows.
///
/// Neither path needs Swift's global executor. A save through the container raises the
/// generation before `save()` returns (once anything observes the container), and the poller
/// runs on a Dispatch queue. A follower (`follow`, what a `ResultsObserver` is woken by) is
/// called on the thread that saw the commit, and starts its work on its own actor. So a
/// process whose tasks keep every thread of the global executor busy still has its observers
/// woken: a server under load, or a test run with more cases than cores. A poller that slept
/// in a task waited behind all of them, and so did a waiter's resumption (Docs/History.md).
final class ChangeHub: @unchecked Sendable {
    /// How often other processes' commits are looked for while something waits.
    static let pollInterval: Duration = .milliseconds(20)

    private struct State {
        var generation: UInt64 = 0
        var sequences: [UInt64] = []
        var waiters = [UInt64: CheckedContinuation<Void, Never>]()
        var followers = [UInt64: @Sendable () -> Void]()
        var nextWaiter: UInt64 = 0
        var polling = false
        /// Something observes the container (an observer or a change sequence was made, or a
        /// waiter came): each save through it then raises the generation at once.
        var observed = false
        /// Whether the poller has anyone to poll for.
        var isIdle: Bool { waiters.isEmpty && followers.isEmpty }
    }

    private let state = Mutex(State())
    /// Set once by the container's initializer.
    var handles: [StoreHandle] = [] {
        didSet { let now = sequences(); state.withLock { $0.sequences = now } }
    }

    /// Bumped whenever a store has a commit not seen before.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Notes that something observes the container, so that its saves raise the generation
    /// even when no waiter waits yet (one about to wait then returns at once).
    func observe() { state.withLock { $0.observed = true } }

    /// After a save through the container: raises the generation and wakes the waiters and
    /// followers, when anything observes the container (else nothing reads the generation, and
    /// the save pays nothing).
    func committed() {
        if state.withLock({ $0.observed || !$0.isIdle }) { check() }
    }

    /// Wakes `follower` after each commit from now on, until `unfollow` with the returned
    /// identifier; and once now when the hub saw a commit after `generation` (one made between
    /// the follower's first read and this).
    func follow(_ follower: CommitFollower, since generation: UInt64) -> UInt64 {
        let id = follow { follower.wake() }
        if self.generation != generation { follower.wake() }
        return id
    }

    /// Calls `wake` (on the thread that sees it) after each commit from now on, until
    /// `unfollow` with the returned identifier. `wake` must be quick: it starts work, it does
    /// not do it.
    func follow(_ wake: @escaping @Sendable () -> Void) -> UInt64 {
        let (id, startPolling) = state.withLock { s -> (UInt64, Bool) in
            s.observed = true
            s.nextWaiter += 1
            s.followers[s.nextWaiter] = wake
            defer { s.polling = true }
            return (s.nextWaiter, !s.polling)
        }
        if startPolling { startPoller() }
        return id
    }

    func unfollow(_ id: UInt64) {
        _ = state.withLock { $0.followers.removeValue(forKey: id) }
    }

    /// Looks at each store's newest commit; wakes every waiter and follower if one is new.
    func check() {
        let now = sequences()
        let (woken, followers) = state.withLock { s -> ([CheckedContinuation<Void, Never>], [@Sendable () -> Void]) in
            guard now != s.sequences else { return ([], []) }
            s.sequences = now
            s.generation += 1
            defer { s.waiters.removeAll() }
            return (Array(s.waiters.values), Array(s.followers.values))
        }
        for waiter in woken { waiter.resume() }
        for wake in followers { wake() }
    }

    /// Each store's newest commit, as its sequence (or the next history row, for a store that
    /// numbers no commits); `UInt64.max` where the store could not be read. (Not optionals: a
    /// `UInt64?` out of the storage's generic `read`, and a list of them, were two more types
    /// for a fresh process's first open to make, W8.)
    private func sequences() -> [UInt64] {
        handles.map { handle in
            (try? handle.storage.read { reader -> UInt64 in
                if let sequence = reader.commitSequence { return sequence }
                guard let collection = reader.collection(named: HistoryRecord.collection) else { return 0 }
                return try reader.nextRowID(in: collection)
            }) ?? .max
        }
    }

    /// Returns once the generation is past `generation` (at once if it is), or when the task
    /// is cancelled. Runs on the caller's actor (no hop to Swift's global executor).
    func wait(after generation: UInt64, isolation: isolated (any Actor)? = #isolation) async {
        let id = state.withLock { s -> UInt64? in
            s.observed = true
            if s.generation > generation { return nil }
            s.nextWaiter += 1
            return s.nextWaiter
        }
        guard let id else { return }
        // The isolation passed on explicitly: the continuation resumes on the caller's actor,
        // not first on the global executor.
        await withTaskCancellationHandler(operation: {
            await withCheckedContinuation(isolation: isolation) { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, startPolling) = state.withLock { s -> (Bool, Bool) in
                    if s.generation > generation || Task.isCancelled { return (true, false) }
                    s.waiters[id] = continuation
                    defer { s.polling = true }
                    return (false, !s.polling)
                }
                if resumeNow { return continuation.resume() }
                if startPolling { startPoller() }
            }
        }, onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }, isolation: isolation)
    }

    /// Polls every `pollInterval` on a Dispatch queue (not in a task: see the type's comment)
    /// until no one waits or follows.
    private func startPoller() {
        let interval = Self.pollInterval.components
        let delay = DispatchTimeInterval.nanoseconds(Int(interval.seconds) * 1_000_000_000 + Int(interval.attoseconds / 1_000_000_000))
        @Sendable func poll() {
            let idle = state.withLock { s -> Bool in
                if s.isIdle { s.polling = false }
                return s.isIdle
            }
            if idle { return }
            check()
            Self.pollQueue.asyncAfter(deadline: .now() + delay, execute: poll)
        }
        Self.pollQueue.asyncAfter(deadline: .now() + delay, execute: poll)
    }

    /// Where every hub's poller runs (a store read per poll: short, but it may touch the disk).
    private static let pollQueue = DispatchQueue(label: "strata.change-hub.poll", qos: .utility, attributes: .concurrent)
}

/// Work a commit starts on an observer's actor (`ResultsObserver`'s refetch, `HistoryObserver`'s
/// read of the new transactions): `wake` starts a task that runs `body` there, unless one is
/// started and has not begun yet (a burst of commits starts one).
///
/// The task's closure is isolated to `isolation` (it captures it, and is not `@Sendable`), so
/// the task is enqueued on that actor directly, never on Swift's global executor first; a task
/// made of a `@Sendable` closure, or a continuation's resumption, passes through the global
/// executor and waits behind whatever holds its threads. The closure holds `body`, which runs
/// only there: sharing it across threads is safe.
final class CommitFollower: @unchecked Sendable {
    private final class Flag: Sendable { let started = Atomic<Bool>(false) }
    private let flag: Flag
    private let work: @isolated(any) () async -> Void

    init(isolation: isolated (any Actor)?, _ body: @escaping () -> Void) {
        let flag = Flag()
        self.flag = flag
        work = {
            _ = isolation
            flag.started.store(false, ordering: .releasing)
            body()
        }
    }

    /// Starts the work on the actor (called by the hub, on whatever thread saw the commit).
    func wake() {
        guard flag.started.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        nonisolated(unsafe) let work = work
        Task(operation: work)
    }
}
