// How a scenario waits for an event (an observer's refetch, a history notice, a notification, a
// model actor's work): never for a fixed time. Each wait ends as soon as its event comes, and
// fails only after `Conformance.eventBound`, a bound meant never to be reached on a slow machine.
//
// An event scenario runs on a `ScenarioActor`, whose executor is a serial dispatch queue of its
// own (not a thread of Swift's global executor, which the test runner's other test cases hold)
// and is also the task executor of the scenario's nonisolated async code and child tasks: a
// `historyChanges()` stream read there, a model actor and the main actor need no thread of the
// global executor. Observers made in the scenario (`ResultsObserver`, `HistoryObserver`) refetch on
// the scenario's actor (their `isolation`), but wait for commits in tasks of the global executor:
// those run at a high priority, ahead of the test runner's queued test cases.
import Dispatch
import Foundation
import Observation
import Synchronization
import Strata

extension Conformance {
    /// The longest a scenario waits for one event before it fails.
    public static let eventBound: Duration = .seconds(120)
}

/// A serial dispatch queue that is an actor's executor and a task executor.
final class ScenarioExecutor: SerialExecutor, TaskExecutor, @unchecked Sendable {
    private let queue = DispatchQueue(label: "strata.conformance.scenario")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(isolatedTo: self.asUnownedSerialExecutor(), taskExecutor: self.asUnownedTaskExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    func checkIsolated() { dispatchPrecondition(condition: .onQueue(queue)) }
}

/// The actor an event scenario runs on (see the top of this file).
actor ScenarioActor {
    private let executor: ScenarioExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The actor's queue as a task executor: `Task(executorPreference: actor.taskExecutor)` runs
    /// a task there, off Swift's global executor.
    nonisolated var taskExecutor: any TaskExecutor { executor }

    private init(_ executor: ScenarioExecutor) { self.executor = executor }

    typealias Body = @Sendable (ScenarioEnvironment, isolated ScenarioActor) async throws -> Void

    /// Runs `body` on a new scenario actor, in a child task that prefers its executor.
    static func run(_ body: @escaping Body, _ environment: ScenarioEnvironment) async throws {
        let executor = ScenarioExecutor()
        let actor = ScenarioActor(executor)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask(executorPreference: executor, priority: .high) { try await body(environment, actor) }
            try await group.waitForAll()
        }
    }

    /// The same, blocking the calling thread until `body` ends.
    static func runBlocking(_ body: @escaping Body, _ environment: ScenarioEnvironment) throws {
        let executor = ScenarioExecutor()
        let actor = ScenarioActor(executor)
        let ended = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        Task(executorPreference: executor, priority: .high) {
            let result: Result<Void, any Error>
            do {
                try await body(environment, actor)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            ended.signal()
        }
        ended.wait()
        try outcome.withLock { $0 }?.get()
    }
}

/// A one-time event, and one waiter for it (at most `Conformance.eventBound`).
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiter: CheckedContinuation<Bool, Never>?
    }
    private let state = Mutex(State())

    init() {}

    func open() {
        let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
            s.isOpen = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: true)
    }

    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// True once the latch is open; false when the bound (from `deadline`) passed first.
    func wait(until deadline: DispatchTime = .now() + Conformance.eventBound.timeInterval) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let openNow = state.withLock { s -> Bool in
                if s.isOpen { return true }
                s.waiter = continuation
                return false
            }
            if openNow { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
                let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
                    defer { s.waiter = nil }
                    return s.waiter
                }
                waiter?.resume(returning: false)
            }
        }
    }
}

extension Duration {
    var timeInterval: TimeInterval { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Waits until `condition` holds, looking again after each change of the observable properties
/// it reads (`withObservationTracking`), for at most `Conformance.eventBound`. Call it on the
/// actor the observed objects change on (the scenario's, for observers made in it).
func eventually(_ what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line,
                isolation: isolated (any Actor)? = #isolation, _ condition: () throws -> Bool) async throws {
    let deadline = DispatchTime.now() + Conformance.eventBound.timeInterval
    while true {
        let changed = Latch()
        let holds = withObservationTracking { Result { try condition() } } onChange: { changed.open() }
        if try holds.get() { return }
        guard await changed.wait(until: deadline) else {
            throw ConformanceFailure("not within \(Conformance.eventBound): \(what())", file: "\(file)", line: Int(line))
        }
    }
}

/// `body`'s result, or a failure when it has not ended within `Conformance.eventBound` (then
/// `body`'s task is cancelled).
func withinBound<T: Sendable>(_ what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line,
                              _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    let bound = Latch()
    let result = try await withThrowingTaskGroup(of: T?.self) { group -> T? in
        group.addTask { try await body() }
        group.addTask {
            await withTaskCancellationHandler { _ = await bound.wait() } onCancel: { bound.open() }
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
    guard let result else {
        throw ConformanceFailure("not within \(Conformance.eventBound): \(what())", file: "\(file)", line: Int(line))
    }
    return result
}
