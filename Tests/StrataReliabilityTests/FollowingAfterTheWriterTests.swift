// A read-only container follows the store whoever writes it, and whether or not that writer is
// still alive: another process saves and exits (or is killed, or compacts the store first), and
// this process's read-only containers, its observers and its history stream see every save.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

/// Runs `StrataTestHelper save-and-exit` and waits until it has saved (and, unless it is to be
/// killed, until it has exited).
private func runWriter(_ path: String, from first: Int, saves: Int, compact: Bool = false, kill: Bool = false) throws {
    let process = Process()
    let input = Pipe(), output = Pipe()
    process.executableURL = try helperURL()
    process.arguments = ["save-and-exit", path, "--from", String(first), "--saves", String(saves)]
        + (compact ? ["--compact"] : []) + (kill ? ["--wait"] : [])
    process.standardInput = input
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // One line: "saved", or the error (the pipe ends when the child does).
    var printed = Data()
    while !printed.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        printed.append(chunk)
    }
    let line = String(decoding: printed, as: UTF8.self)
    if kill { Glibc.kill(process.processIdentifier, SIGKILL) } else { try? input.fileHandleForWriting.close() }
    process.waitUntilExit()
    #expect(line.hasPrefix("saved"), "the writer printed \(line)")
}

private func storeWithOneBatch(_ dir: ReliabilityDirectory) throws -> URL {
    let url = URL(fileURLWithPath: dir.path + "/events.store")
    let container = try ModelContainer(for: HistoryEvent.self, configurations: ModelConfiguration(url: url))
    try HistoryWorkload.saveBatch(0, in: ModelContext(container))
    return url
}

private func readOnly(_ url: URL) throws -> ModelContainer {
    try ModelContainer(for: HistoryEvent.self, configurations: ModelConfiguration(url: url, allowsSave: false))
}

private func count(_ container: ModelContainer) throws -> Int {
    try ModelContext(container).fetchCount(FetchDescriptor<HistoryEvent>())
}

@Suite struct FollowingAfterTheWriterTests {
    /// The repro: a child saves 30 times and exits; this process's read-only container,
    /// and a fresh one, show all 30 saves (they showed 2 when the writer was gone).
    @Test func aReadOnlyContainerSeesTheSavesOfAWriterThatHasExited() throws {
        let dir = try ReliabilityDirectory()
        let url = try storeWithOneBatch(dir)
        let reader = try readOnly(url)
        #expect(try count(reader) == HistoryWorkload.perSave)
        try runWriter(url.path, from: 1, saves: 30)
        #expect(try count(reader) == 31 * HistoryWorkload.perSave)
        #expect(try count(try readOnly(url)) == 31 * HistoryWorkload.perSave, "a fresh read-only container")
        // And again, after another writer came and went.
        try runWriter(url.path, from: 31, saves: 3)
        #expect(try count(reader) == 34 * HistoryWorkload.perSave)
    }

    /// A writer killed with SIGKILL leaves the zeros it wrote ahead of its commits: the reader
    /// finds its last commit all the same.
    @Test func aReadOnlyContainerSeesTheSavesOfAKilledWriter() throws {
        let dir = try ReliabilityDirectory()
        let url = try storeWithOneBatch(dir)
        let reader = try readOnly(url)
        #expect(try count(reader) == HistoryWorkload.perSave)
        try runWriter(url.path, from: 1, saves: 12, kill: true)
        #expect(try count(reader) == 13 * HistoryWorkload.perSave)
    }

    /// A writer that compacted the store before it exited put a new file at the path: the
    /// reader reads that file.
    @Test func aReadOnlyContainerFollowsACompactionByAWriterThatHasExited() throws {
        let dir = try ReliabilityDirectory()
        let url = try storeWithOneBatch(dir)
        let reader = try readOnly(url)
        #expect(try count(reader) == HistoryWorkload.perSave)
        try runWriter(url.path, from: 1, saves: 5, compact: true)
        #expect(try count(reader) == 6 * HistoryWorkload.perSave)
        let keys = try ModelContext(reader).fetch(FetchDescriptor<HistoryEvent>(sortBy: [SortDescriptor(\.key)])).map(\.key)
        #expect(keys == Array(0..<(6 * HistoryWorkload.perSave)))
    }

    /// A ResultsObserver, a HistoryObserver and `historyChanges()` on a read-only container see
    /// the saves of a writer that exited before they looked.
    @Test func observersFollowAWriterThatHasExited() async throws {
        let dir = try ReliabilityDirectory()
        let url = try storeWithOneBatch(dir)
        let reader = try readOnly(url)
        let watcher = EventWatcher()
        try await watcher.start(reader)
        #expect(await watcher.sample() == HistoryWorkload.perSave)
        let history = try HistoryObserver(observedModels: [HistoryEvent.self], modelContainer: reader)
        let eventsBefore = history.eventCounter
        let stream = reader.historyChanges()
        let follower = Task {
            var inserted = 0
            for try await notice in stream {
                inserted += notice.inserted.count
                if inserted == 20 * HistoryWorkload.perSave { break }
            }
            return inserted
        }
        try runWriter(url.path, from: 1, saves: 20)
        let final = 21 * HistoryWorkload.perSave
        // Counted in looks, not time: while synchronous tests hold the pool's threads, no task runs.
        var sawFinal = false
        for _ in 0..<30_000 {
            if await watcher.sample() == final { sawFinal = true; break }
            try await Task.sleep(for: .milliseconds(1))
        }
        let counts = await watcher.counts
        #expect(sawFinal, "\(counts)")
        #expect(try await follower.value == 20 * HistoryWorkload.perSave)
        for _ in 0..<30_000 where history.eventCounter == eventsBefore { try await Task.sleep(for: .milliseconds(1)) }
        #expect(history.eventCounter > eventsBefore)
    }
}
