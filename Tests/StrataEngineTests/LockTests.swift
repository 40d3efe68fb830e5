// One writer per store: a second process or a second Store in this process that opens it for
// writing gets a clear `.locked` error; read-only stores open beside the writer, in this
// process or another, and read what it publishes.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct LockTests {
    /// The `StrataTestHelper` executable, built beside the test bundle.
    static func helperURL() throws -> URL {
        let fm = FileManager.default
        var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        // On macOS the bundle is Foo.xctest/Contents/MacOS/Foo: the products are three levels up.
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())
        for folder in folders {
            let candidate = folder.appendingPathComponent("StrataTestHelper")
            if fm.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw HelperMissing(looked: folders.map(\.path))
    }

    struct HelperMissing: Error, CustomStringConvertible {
        let looked: [String]
        var description: String { "StrataTestHelper was not found (build it with `swift build --build-tests`); looked in \(looked)" }
    }

    /// A `StrataTestHelper` child: `hold PATH` opens the store for writing and holds it until
    /// its stdin closes; `read-check PATH --until N` reads a store another process writes.
    final class Holder {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        let lines = LineBox()

        /// Starts the child; its lines of output are collected as they come.
        init(path: String) throws { try start(["hold", path]) }
        init(arguments: [String]) throws { try start(arguments) }

        private func start(_ arguments: [String]) throws {
            process.executableURL = try LockTests.helperURL()
            process.arguments = arguments
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let handle = output.fileHandleForReading
            let box = lines
            Thread {
                var bytes = Data()
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    bytes.append(chunk)
                    while let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                        box.append(String(decoding: bytes[bytes.startIndex..<newline], as: UTF8.self))
                        bytes = Data(bytes[(newline + 1)...])
                    }
                }
                box.finish()
            }.start()
        }

        /// Line `n` (from 0) the child prints, or nil if it says nothing in time.
        func line(_ n: Int, timeout: TimeInterval = 300) -> String? {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let line = lines.line(n) { return line }
                if lines.isFinished { return lines.line(n) }
                Thread.sleep(forTimeInterval: 0.005)
            }
            return nil
        }

        /// The first line the child prints ("ready" or "error: ..."), or nil if it says nothing in time.
        func firstLine(timeout: TimeInterval = 300) -> String? { line(0, timeout: timeout) }

        /// Closes the child's stdin so it closes the store and exits; waits for it.
        func finish() -> Int32 {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
            return process.terminationStatus
        }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    final class LineBox: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        private var finished = false
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        func finish() { lock.withLock { finished = true } }
        func line(_ n: Int) -> String? { lock.withLock { n < lines.count ? lines[n] : nil } }
        var isFinished: Bool { lock.withLock { finished } }
    }

    /// A writer (this process) and a reader (a child process) side by side: the reader sees
    /// whole commits only, each checked on its own (rows, both indexes, the blob it names,
    /// and now and then a whole verify()), across compactions, until the last one.
    @Test func aReaderProcessSeesWholeCommitsOfAWriterBesideIt() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        try SideBySideWorkload.commit(1, on: store)
        let last: UInt64 = 120
        let child = try Holder(arguments: ["read-check", path, "--until", "\(last)"])
        try #require(child.firstLine() == "ready", "the reader said \(child.firstLine() ?? "nothing")")
        for s in 2...last {
            try SideBySideWorkload.commit(s, on: store)
            Thread.sleep(forTimeInterval: 0.002)
        }
        let result = child.line(1, timeout: 120)
        print("side by side: the reader said", result ?? "nothing")
        #expect(result?.hasPrefix("ok") == true, "the reader said \(result ?? "nothing")")
        #expect(child.finish() == 0)
        let seen = Int(result?.split(separator: " ").dropFirst().first ?? "") ?? 0
        #expect(seen >= 5, "the reader saw \(seen) commits")
        // Blob files of commits no reader can see any more are gone at the next commit (the
        // writer looks at the reader slots when it commits; a slow reader, on a loaded
        // machine, may have held older commits at the last one).
        try SideBySideWorkload.commit(last + 1, on: store)
        let blobs = try FileManager.default.contentsOfDirectory(atPath: path + ".blobs")
        #expect(blobs.count <= 3, "\(blobs.count) blob files left")
        try expectClean(store)
    }

    @Test func anotherProcessWritingLocksOutASecondWriterNotReaders() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        do {
            let store = try Store(path: path)
            try store.write { tx in try tx.put([1], row: 1, in: tx.createCollection(named: "c")) }
        }
        let child = try Holder(path: path)
        let line = child.firstLine()
        try #require(line == "ready", "the helper said \(line ?? "nothing")")

        let error = expectStoreError(.locked) { try Store(path: path) }
        #expect(error?.message.contains("open for writing") == true)
        #expect(error?.description.contains(path) == true)
        expectStoreError(.locked) { try Store(path: path, options: StoreOptions(createIfMissing: false)) }
        // A reader opens beside the writer and reads what it published.
        let reader = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(try reader.read { try $0.record(1, in: $0.collection(named: "c")!) } == [1])
        try expectClean(reader)

        #expect(child.finish() == 0)
        // The lock went with the process: the store opens, with its data.
        let store = try Store(path: path)
        #expect(try store.read { try $0.record(1, in: $0.collection(named: "c")!) } == [1])
        try expectClean(store)
        withExtendedLifetime(reader) {}
    }

    /// The other way round: the child cannot open a store this process writes, and says why.
    @Test func thisProcessWritingLocksOutAnother() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        let child = try Holder(path: path)
        let line = child.firstLine()
        #expect(line?.hasPrefix("error:") == true, "the helper said \(line ?? "nothing")")
        #expect(line?.contains("[locked]") == true)
        #expect(child.finish() == 1)
        withExtendedLifetime(store) {}
    }

    @Test func twoStoresInOneProcess() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        do {
            let first = try Store(path: path)
            try first.write { tx in _ = try tx.createCollection(named: "c") }
            let error = expectStoreError(.locked) { try Store(path: path) }
            #expect(error?.message.contains("only one writer") == true)
            // The failed open changed nothing: the first store goes on working.
            try first.write { tx in try tx.put([1], row: 1, in: tx.collection(named: "c")!) }
            try expectClean(first)
        }
        // Released with the first store.
        let again = try Store(path: path)
        #expect(try again.read { try $0.count(in: $0.collection(named: "c")!) } == 1)
    }

    /// Read-only stores open beside a writer, and a writer beside them; they read each commit
    /// once it is published, and keep the commit their transactions began on.
    @Test func readersBesideAWriter() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let writer = try Store(path: path)
        let c = try writer.write { try $0.createCollection(named: "c") }
        let reader1 = try Store(path: path, options: StoreOptions(readOnly: true))
        let reader2 = try Store(path: path, options: StoreOptions(readOnly: true))
        let before = try reader1.beginRead()
        try writer.write { tx in try tx.put([7], row: 1, in: c) }
        #expect(try before.record(1, in: c) == nil)
        #expect(try reader1.read { try $0.record(1, in: c) } == [7])
        #expect(try reader2.read { try $0.record(1, in: c) } == [7])
        expectStoreError(.readOnly) { try reader2.write { tx in try tx.put([8], row: 2, in: c) } }
        writer.close()
        // Readers do not keep a writer out.
        let next = try Store(path: path)
        try next.write { tx in try tx.put([9], row: 2, in: c) }
        #expect(try reader1.read { try $0.record(2, in: c) } == [9])
        withExtendedLifetime((reader1, reader2, before, next)) {}
    }

    /// close() lets go of the lock at once, even while the Store object and an old reader live on.
    @Test func closeReleasesTheLock() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        let c = try store.write { tx in
            let c = try tx.createCollection(named: "c")
            try tx.put([1], row: 1, in: c)
            return c
        }
        let reader = try store.beginRead()
        store.close()
        let again = try Store(path: path)
        try again.write { tx in try tx.put([2], row: 2, in: c) }
        #expect(try reader.record(1, in: c) == [1])
        #expect(try reader.record(2, in: c) == nil)
        again.close()
        let child = try Holder(path: path)
        #expect(child.firstLine() == "ready")
        #expect(child.finish() == 0)
        withExtendedLifetime(store) {}
    }

    /// A write transaction still open when the store is closed keeps the lock until it ends,
    /// so no other writer appends beside it; its commit then counts like any other.
    @Test(arguments: [true, false]) func closeWhileWriting(commit: Bool) throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        let c = try store.write { try $0.createCollection(named: "c") }
        let tx = try store.beginWrite()
        try tx.put([1], row: 1, in: c)
        store.close()
        expectStoreError(.locked) { try Store(path: path) }
        expectStoreError(.closed) { try store.beginRead() }
        if commit { try tx.commit() } else { tx.rollback() }
        let again = try Store(path: path)
        try again.write { tx in try tx.put([2], row: 2, in: c) }
        #expect(try again.read { try $0.record(1, in: c) } == (commit ? [1] : nil))
        #expect(try again.read { try $0.record(2, in: c) } == [2])
        try expectClean(again)
        again.close()
        // And the same seen from a fresh open: nothing was lost or overwritten.
        let last = try Store(path: path)
        #expect(try last.read { try $0.count(in: c) } == (commit ? 2 : 1))
        try expectClean(last)
        withExtendedLifetime(store) {}
    }

    /// Compaction switches to a new file; the store stays locked to other writers (the lock is
    /// in the lock file, which compaction does not replace), and readers follow.
    @Test func compactedStoreStaysLocked() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        try store.write { tx in try tx.put([1], row: 1, in: tx.createCollection(named: "c")) }
        let reader = try Store(path: path, options: StoreOptions(readOnly: true))
        try store.compact()
        expectStoreError(.locked) { try Store(path: path) }
        #expect(try reader.read { try $0.record(1, in: $0.collection(named: "c")!) } == [1])
        let child = try Holder(path: path)
        #expect(child.firstLine()?.contains("[locked]") == true)
        #expect(child.finish() == 1)
        withExtendedLifetime((store, reader)) {}
    }
}
