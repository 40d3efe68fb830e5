// Several processes on one server: writers that upsert the same unique keys at once, an observer
// in another process woken by a save here, a read-only container on a hot standby.
import Foundation
import Testing
import Strata
@testable import StrataPostgres
import StrataPostgresTestSupport

/// `StrataPostgresTestHelper`, built beside the test bundle.
func helperURL() throws -> URL {
    var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
    if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
    folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
    for folder in folders {
        let candidate = folder.appendingPathComponent("StrataPostgresTestHelper")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    struct Missing: Error, CustomStringConvertible {
        let looked: [URL]
        var description: String { "StrataPostgresTestHelper was not found (build with --build-tests); looked in \(looked.map(\.path))" }
    }
    throw Missing(looked: folders)
}

/// A child process and the lines it prints.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe(), output = Pipe()
    private let lock = NSCondition()
    private var lines: [(line: String, at: Date)] = []
    private var ended = false

    init(_ arguments: [String]) throws {
        process.executableURL = try helperURL()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        Thread { [self] in
            var bytes = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
                while let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: bytes[bytes.startIndex..<newline], as: UTF8.self)
                    lock.withLock { lines.append((line, Date())); lock.broadcast() }
                    bytes.removeSubrange(bytes.startIndex...newline)
                }
            }
            lock.withLock { ended = true; lock.broadcast() }
        }.start()
    }

    /// The first line `matching` printed, and when: waiting for it (bounded generously: a busy
    /// machine starts a child slowly), or nil when the child ended without it.
    /// The `occurrence`th line the child printed that `matching` accepts (lines printed
    /// before the call count), once it is printed; nil if the child ends or `patience` runs out.
    func waitFor(_ matching: (String) -> Bool, occurrence: Int = 1, patience: TimeInterval = 600) -> (line: String, at: Date)? {
        let deadline = Date().addingTimeInterval(patience)
        lock.lock()
        defer { lock.unlock() }
        while true {
            var seen = 0
            for line in lines where matching(line.line) {
                seen += 1
                if seen == occurrence { return line }
            }
            if ended || !lock.wait(until: deadline) { return nil }
        }
    }

    var printed: [String] { lock.withLock { lines.map(\.line) } }

    /// Ends the child: its input closed, and, if it is still running, terminated. Closing is
    /// not enough on its own: a process started meanwhile by a test running beside this one (the
    /// standby's server) inherits the pipe's write end, so the child never reads its end, and
    /// the test waited forever (it did in CI on 2026-11-29).
    func finish() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

@Suite struct ManyProcessesTests {
    /// 4 processes × 300 saves; each save upserts 5 objects drawn from 200 shared unique keys
    /// and inserts 1 plain one. At the end: exactly 200 keyed rows and 1,200 plain rows, and no
    /// process saw an error (serialization failures and deadlocks are retried by the store).
    @Test func fourWritersUpsertingTheSameKeys() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        // The tables exist before the writers start (they would make them at once otherwise).
        _ = try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace))
        let writers = try (0..<4).map { w in
            try ChildProcess(["writer", url.absoluteString, namespace, "--writer", String(w), "--saves", "300"])
        }
        for (w, writer) in writers.enumerated() {
            let ending = writer.waitFor { $0 == "done" || $0.hasPrefix("error") }
            #expect(ending?.line == "done", "writer \(w): \(writer.printed)")
            writer.finish()
            #expect(writer.process.terminationStatus == 0)
        }
        let reader = ModelContext(try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace)))
        #expect(try reader.fetchCount(FetchDescriptor<PGKeyed>()) == ManyWriters.keys)
        #expect(try reader.fetchCount(FetchDescriptor<PGPlain>()) == 4 * 300)
        let keys = try reader.fetch(FetchDescriptor<PGKeyed>(sortBy: [SortDescriptor(\.key)])).map(\.key)
        #expect(keys == Array(0..<ManyWriters.keys))
    }

    /// 3 processes × 40 read-modify-write increments of one counter, each retried after a
    /// conflict, with another context of the process reading the counter again between each
    /// read and its save: every increment counts (never a lost update), so the counter ends at
    /// 120. Until 2026-12-01 that other read hid the other processes' changes (the store checked
    /// an update against the last version its container read), and increments were lost: on
    /// that code this test ended at 118 and 119 in two runs. It takes about 2 s.
    @Test func threeProcessesIncrementingOneCounterLoseNoIncrement() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        let setup = ModelContext(try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace)))
        setup.insert(PGKeyed(key: ManyWriters.counterKey, value: 0, writer: 0))
        try setup.save()
        let processes = 3, times = 40
        let counters = try (0..<processes).map { _ in try ChildProcess(["counter", url.absoluteString, namespace, "--times", String(times)]) }
        var conflicts = 0
        for (p, counter) in counters.enumerated() {
            let ending = counter.waitFor { $0.hasPrefix("done") || $0.hasPrefix("error") }
            #expect(ending?.line.hasPrefix("done") == true, "counter \(p): \(counter.printed)")
            conflicts += ending.flatMap { Int($0.line.split(separator: " ").last ?? "") } ?? 0
            counter.finish()
            #expect(counter.process.terminationStatus == 0)
        }
        let key = ManyWriters.counterKey
        let reader = ModelContext(try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace)))
        let value = try reader.fetch(FetchDescriptor<PGKeyed>(predicate: #Predicate { $0.key == key })).first?.value
        #expect(value == processes * times, "\(conflicts) conflicts were met and retried")
        print("threeProcessesIncrementingOneCounterLoseNoIncrement: \(conflicts) conflicts retried")
    }

    /// A save here wakes a ResultsObserver in another process (LISTEN/NOTIFY). The time it took
    /// is printed; the bound is generous, for a busy machine.
    @Test func aSaveHereWakesAnObserverInAnotherProcess() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        let container = try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace))
        let watcher = try ChildProcess(["watch", url.absoluteString, namespace])
        defer { watcher.finish() }
        #expect(watcher.waitFor { $0 == "ready" } != nil, "\(watcher.printed)")
        #expect(watcher.waitFor { $0 == "count 0" } != nil, "\(watcher.printed)")
        var latencies: [TimeInterval] = []
        for save in 1...3 {
            let context = ModelContext(container)
            context.insert(PGPlain(writer: 9, save: save))
            try context.save()
            let saved = Date()
            // A NOTIFY wakes it in milliseconds; two minutes is for a machine that is very busy.
            // (One run on 2026-11-29 waited here past five minutes, never reproduced: if it comes
            // back, this fails within the CI budget and shows what the watcher printed.)
            let seen = watcher.waitFor({ $0 == "count \(save)" }, patience: 120)
            #expect(seen != nil, "the watcher printed \(watcher.printed); the save returned at \(saved)")
            if let seen { latencies.append(seen.at.timeIntervalSince(saved)) }
        }
        // A deletion of rows without objects (`delete(model:where:)`, one statement on the
        // server, which also notifies) wakes it too.
        let context = ModelContext(container)
        try context.delete(model: PGPlain.self, where: #Predicate { $0.save == 1 })
        try context.save()
        // (Its second "count 2": the first was printed after the second save.)
        #expect(watcher.waitFor({ $0 == "count 2" }, occurrence: 2, patience: 120) != nil, "the watcher printed \(watcher.printed)")
        print("observer in another process woke \(latencies.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", ")) after the save")
    }

    /// A read-only container on a hot standby sees a save made on the primary (once the
    /// standby replayed it).
    @Test func aReadOnlyContainerOnAStandbySeesThePrimarysSave() throws {
        let primary = try TestServer.url()
        let standby = try TestServer.standbyURL()
        let namespace = TestServer.namespace()
        let writer = ModelContext(try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: primary, namespace: namespace)))
        writer.insert(PGPlain(writer: 1, save: 1))
        try writer.save()
        // The standby replays the namespace's tables and the save (bounded generously).
        var reader: ModelContainer?
        var count = 0
        let deadline = Date().addingTimeInterval(300)
        while Date() < deadline {
            if reader == nil {
                reader = try? ModelContainer(for: Schema(ManyWriters.models),
                                             configurations: ManyWriters.configuration(url: standby, namespace: namespace, allowsSave: false))
            }
            if let reader, let n = try? ModelContext(reader).fetchCount(FetchDescriptor<PGPlain>()), n == 1 { count = n; break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(count == 1)
        // And it refuses to save.
        if let reader {
            let context = ModelContext(reader)
            context.insert(PGPlain(writer: 2, save: 2))
            #expect(throws: StrataError.self) { try context.save() }
        }
    }
}
