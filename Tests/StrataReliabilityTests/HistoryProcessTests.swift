import Foundation
import Testing
import Strata
import StrataTestSupport

// Another process writes a store (`StrataTestHelper history-writer`) while this one follows it
// read-only: a ResultsObserver and HistoryChanges see every save, each whole (the observed
// count is always a multiple of a save's size), and fetchHistory lists the child's
// transactions with its author, process id and the tombstones of its deletes.

/// The child process and the lines it prints.
final class HistoryWriterProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let lock = NSLock()
    private var lines: [String] = []

    init(path: String, batches: Int) throws {
        process.executableURL = try helperURL()
        process.arguments = ["history-writer", path, "--batches", String(batches)]
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
                    lock.withLock { lines.append(line) }
                    bytes.removeSubrange(bytes.startIndex...newline)
                }
            }
        }.start()
    }

    func waitFor(_ line: String) -> Bool {
        let deadline = Date().addingTimeInterval(300)   // generous: a busy machine starts a child slowly
        while Date() < deadline {
            if lock.withLock({ lines.contains(line) }) { return true }
            if lock.withLock({ lines.contains { $0.hasPrefix("error") } }) { return false }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    var printed: [String] { lock.withLock { lines } }
}

/// Counts of the observer's results, sampled on its actor.
actor EventWatcher {
    private var observer: ResultsObserver<HistoryEvent, Never>?
    private(set) var counts: [Int] = []

    func start(_ container: ModelContainer) throws {
        observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<HistoryEvent>(), modelContainer: container)
    }

    func sample() -> Int {
        let count = observer?.results.count ?? -1
        if counts.last != count { counts.append(count) }
        return count
    }
}

@Suite struct HistoryProcessTests {
    @Test func anotherProcessesSavesAreFollowedWhole() async throws {
        let dir = try ReliabilityDirectory()
        let path = dir.path + "/events.store"
        let batches = 20
        let child = try HistoryWriterProcess(path: path, batches: batches)
        defer { child.finish() }
        try #require(child.waitFor("ready"), "\(child.printed)")

        let container = try ModelContainer(for: HistoryEvent.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path), allowsSave: false))
        let watcher = EventWatcher()
        try await watcher.start(container)
        #expect(await watcher.sample() == HistoryWorkload.perSave)
        let stream = container.historyChanges()
        let follower = Task {
            var notices: [HistoryNotice] = []
            for try await notice in stream {
                notices.append(notice)
                if notices.count == batches + 1 { break }      // batches 1..<N, the rename, the delete
            }
            return notices
        }
        child.send("go")
        let final = (batches - 1) * HistoryWorkload.perSave
        var sawFinal = false
        // Counted in looks, not time: while synchronous tests hold the pool's threads, no task runs.
        for _ in 0..<30_000 {
            if await watcher.sample() == final, child.printed.contains("done") { sawFinal = true; break }
            try await Task.sleep(for: .milliseconds(1))
        }
        let counts = await watcher.counts
        #expect(sawFinal, "\(counts)")
        #expect(counts.allSatisfy { $0 % HistoryWorkload.perSave == 0 }, "a partial save was seen: \(counts)")
        #expect(counts.count >= 2)

        let notices = try await follower.value
        #expect(notices.count == batches + 1)
        #expect(notices.dropLast(2).allSatisfy { $0.inserted.count == HistoryWorkload.perSave && $0.deleted.isEmpty && $0.updated.isEmpty })
        #expect(notices.dropLast().last?.updated.count == 1)
        #expect(notices.last?.deleted.count == HistoryWorkload.perSave)
        #expect(notices.allSatisfy { $0.author == HistoryWorkload.author })
        #expect(notices.map(\.token) == notices.map(\.token).sorted())

        let history = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.count == batches + 2)
        #expect(history.map(\.token.tokenValue) == (1...Int64(batches + 2)).map { $0 }, "every save, in commit order")
        #expect(history.allSatisfy { $0.processIdentifier == String(child.process.processIdentifier) && $0.author == HistoryWorkload.author })
        let renamed = history.dropLast().last?.changes.compactMap { change -> [String]? in
            guard case .update(let update as DefaultHistoryUpdate<HistoryEvent>) = change else { return nil }
            return update.updatedAttributes.map(\.name)
        }
        #expect(renamed == [["label"]])
        let labels = history.last?.changes.compactMap { change -> String? in
            guard case .delete(let delete as DefaultHistoryDelete<HistoryEvent>) = change else { return nil }
            return delete.tombstone[\.label] as? String
        }
        // The tombstones hold the values at deletion: event 1's new label.
        #expect(labels == (0..<HistoryWorkload.perSave).map { $0 == 1 ? HistoryWorkload.renamed($0) : HistoryWorkload.label($0) })
    }
}
