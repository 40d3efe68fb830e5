import Foundation
import GRDB
import StrataEngine

/// E1: put n courses in one transaction, then commit. Each system runs in a fresh process,
/// so its peak RSS and bytes written are its own; the stores it leaves serve E2 to E4.
enum E1BulkInsert: Workload {
    static let id = "E1-bulk-insert"
    static let title = "bulk insert n records, one transaction"

    static func run(_ bench: Bench) throws {
        for system in bench.selected([.strataEngine, .grdb, .grdbTuned]) {
            removeStoreFiles(bench.path(system))
            let child = try ChildProcess.run(
                [id] + ChildArguments.make(["system": system.rawValue, "path": bench.path(system), "n": bench.n, "seed": bench.options.seed]),
                countSyncs: true)
            guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
            if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
            if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
            bench.report(m, title: title)
        }
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: UInt64(try arguments.int("seed")))
        var extras: [(String, JSONValue)] = []
        let result: Section.Result
        let bytes: Int
        switch system {
        case .strataEngine:
            let engine = try EngineCourses.open(path: path)
            let before = engine.store.statistics
            let section = Section.begin()
            try engine.store.write { tx in
                var buffer: [UInt8] = []
                buffer.reserveCapacity(512)
                for i in 0..<n { try engine.insert(data.course(i), in: tx, buffer: &buffer) }
            }
            result = section.end()
            let after = engine.store.statistics
            bytes = ProcessStats.fileSize(path)
            // Where the bytes went: record frames, and pages of the tree (rows and both indexes).
            let info = try engine.store.info()
            let recordBytes = info.collections.reduce(0) { $0 + $1.liveBytes }
            extras = [("engine_syncs", .int(after.syncs - before.syncs)),
                      ("engine_bytes_written", .int(after.bytesWritten - before.bytesWritten)),
                      ("record_bytes", .int(recordBytes)), ("tree_bytes", .int(info.liveBytes - recordBytes))]
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: style, create: true)
            let section = Section.begin()
            try queue.write { db in
                if style == .idiomatic {
                    for i in 0..<n { try data.course(i).insert(db) }
                } else {
                    for i in 0..<n { try GRDBCourses.insertTuned(data.course(i), db) }
                }
            }
            result = section.end()
            extras = [("wal_bytes", .int(ProcessStats.fileSize(path + "-wal"))), ("synchronous", .string("NORMAL"))]
            // Settle the file (outside the time) so `bytes` is the database's own size.
            try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            bytes = GRDBCourses.size(path: path)
        case .bareFsync, .strata, .dd:
            throw BenchError("\(id): no bare-fsync variant")
        }
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB, bytes: bytes)
        m.extras = [("rss_before_kb", .int(result.rssBeforeKB)), ("ru_maxrss_kb", .int(ProcessStats.lifetimePeakKB())),
                    ("bytes_written", .int(result.bytesWritten)), ("bytes_per_record", .int(bytes / max(n, 1)))] + extras
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
