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
/// that the writer is alive). It polls only while something waits.
final class ChangeHub: @unchecked Sendable {
    /// How often other processes' commits are looked for while something waits.
    static let pollInterval: Duration = .milliseconds(20)

    private struct State {
        var generation: UInt64 = 0
        var sequences: [UInt64?] = []
        var waiters = [UInt64: CheckedContinuation<Void, Never>]()
        var nextWaiter: UInt64 = 0
        var polling = false
    }

    private let state = Mutex(State())
    /// Set once by the container's initializer.
    var handles: [StoreHandle] = [] {
        didSet { let now = sequences(); state.withLock { $0.sequences = now } }
    }

    /// Bumped whenever a store has a commit not seen before.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// After a save through the container: wakes the waiters if there are any.
    func committed() {
        if state.withLock({ !$0.waiters.isEmpty }) { check() }
    }

    /// Looks at each store's newest commit; wakes every waiter if one is new.
    func check() {
        let now = sequences()
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard now != s.sequences else { return [] }
            s.sequences = now
            s.generation += 1
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for waiter in woken { waiter.resume() }
    }

    private func sequences() -> [UInt64?] {
        handles.map { handle in
            try? handle.storage.read { reader -> UInt64? in
                if let sequence = reader.commitSequence { return sequence }
                guard let collection = reader.collection(named: HistoryRecord.collection) else { return 0 }
                return try reader.nextRowID(in: collection)
            }
        }
    }

    /// Returns once the generation is past `generation` (at once if it is), or when the task
    /// is cancelled.
    func wait(after generation: UInt64) async {
        let id = state.withLock { s -> UInt64 in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let (resumeNow, startPolling) = state.withLock { s -> (Bool, Bool) in
                    if s.generation > generation || Task.isCancelled { return (true, false) }
                    s.waiters[id] = continuation
                    defer { s.polling = true }
                    return (false, !s.polling)
                }
                if resumeNow { return continuation.resume() }
                if startPolling { startPoller() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    private func startPoller() {
        Task.detached { [self] in
            while true {
                try? await Task.sleep(for: Self.pollInterval)
                let idle = state.withLock { s -> Bool in
                    if s.waiters.isEmpty { s.polling = false }
                    return s.waiters.isEmpty
                }
                if idle { return }
                check()
            }
        }
    }
}
