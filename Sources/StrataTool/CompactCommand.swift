import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata compact PATH`: rewrites the store without its superseded records and pages.
struct CompactCommand: Command {
    static let name = "compact"
    static let summary = "rewrite the store without superseded records and pages; print the bytes reclaimed"
    static let help = """
        usage: strata compact PATH [--json]

        Copies the live records and pages of the store at PATH into a new file, syncs it and
        renames it over the store, then removes blob files no record refers to. A crash at
        any moment loses nothing: until the rename the old file is the store, after it the
        new one holds the same last commit. Needs the store to itself: if another process has
        it open, nothing is done and the exit status is 1. Shows a progress bar when standard
        error is a terminal, and prints the file size before and after.

        options:
          --json   one JSON object: {"bytes_before": ..., "bytes_after": ..., "bytes_reclaimed": ...}
        """

    let path: String
    let json: Bool

    init(arguments: inout Arguments) throws {
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let store = try openStore(path, readOnly: false)
        defer { store.close() }
        let expected = try store.info().liveBytes
        let bar = ProgressBar("compacting \((path as NSString).lastPathComponent)")
        let watcher = bar.isEnabled ? Self.watch(path + ".compact", growingTo: expected, bar: bar) : nil
        let start = DispatchTime.now().uptimeNanoseconds
        let report: CompactionReport
        do {
            report = try store.compact()
            watcher?.stop()
        } catch {
            watcher?.stop()
            bar.finish()
            throw error
        }
        bar.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let share = report.bytesBefore > 0 ? Double(report.bytesReclaimed) * 100 / Double(report.bytesBefore) : 0
        let out = Output.standard
        if json {
            out.json(.object([
                ("path", .string(path)),
                ("bytes_before", .integer(Int64(report.bytesBefore))),
                ("bytes_after", .integer(Int64(report.bytesAfter))),
                ("bytes_reclaimed", .integer(Int64(report.bytesReclaimed))),
                ("records", .integer(Int64(report.records))),
                ("blob_files_removed", .integer(Int64(report.blobFilesRemoved))),
                ("seconds", .double((seconds * 1000).rounded() / 1000)),
            ]))
        } else {
            out.line("\(path): compacted in \(String(format: "%.2f", seconds)) s")
            out.line("  before     \(report.bytesBefore) bytes (\(humanBytes(report.bytesBefore)))")
            out.line("  after      \(report.bytesAfter) bytes (\(humanBytes(report.bytesAfter)))")
            out.line("  reclaimed  \(report.bytesReclaimed) bytes (\(String(format: "%.1f", share))%)")
            out.line("  \(report.records) records copied, \(report.blobFilesRemoved) unreferenced blob files removed")
        }
        return .success
    }

    /// Compaction writes its new file at `PATH.compact`, which grows to about the live bytes:
    /// its size is the progress. Polled on a thread of its own until stopped.
    private static func watch(_ file: String, growingTo expected: Int, bar: ProgressBar) -> Watcher {
        let watcher = Watcher()
        Thread {
            while !watcher.isStopped {
                if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int, expected > 0 {
                    bar.update(min(0.99, Double(size) / Double(expected)))
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
            watcher.exited.signal()
        }.start()
        return watcher
    }

    final class Watcher: @unchecked Sendable {
        private let lock = NSLock()
        private var stopped = false
        let exited = DispatchSemaphore(value: 0)
        var isStopped: Bool { lock.withLock { stopped } }
        /// Stops the polling and waits until the thread has drawn for the last time.
        func stop() {
            lock.withLock { stopped = true }
            exited.wait()
        }
    }
}
