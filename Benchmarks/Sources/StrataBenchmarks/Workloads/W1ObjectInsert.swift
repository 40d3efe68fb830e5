import Foundation
import GRDB
import Strata

/// W1: insert n objects into a context and save once. Each system runs in a fresh process,
/// so its peak RSS is its own; the stores it leaves serve W3 to W8.
enum W1ObjectInsert: Workload {
    static let id = "W1-object-insert"
    static let title = "bulk insert n objects, one save() · target ≥5× GRDB, ≥1× tuned; 1M under 1 GiB"

    static func run(_ bench: Bench) throws {
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        try childRounds(bench, systems: bench.selected(ObjectStores.systems), title: title) { system in
            let path = ObjectStores.path(bench, system)
            removeStoreFiles(path)
            let child = try ChildProcess.run(
                [id] + ChildArguments.make(["system": system.rawValue, "path": path, "n": n, "seed": bench.options.seed]),
                countSyncs: true)
            guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
            if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
            if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
            return m
        }
        ObjectStores.madeWithN = n
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: UInt64(try arguments.int("seed")))
        let result: Section.Result
        var extras: [(String, JSONValue)] = []
        switch system {
        case .strata:
            let container = try ObjectStores.openContainer(path: path)
            let context = ModelContext(container)
            let section = Section.begin()
            for i in 0..<n { context.insert(StrataModel.Course(data.course(i))) }
            // What the objects themselves hold: the save's peak beyond it is the save's own.
            extras = [("rss_after_objects_kb", .int(ProcessStats.memory().rssKB))]
            try context.save()
            result = section.end()
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
            try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        let bytes = ObjectStores.size(system, path: path)
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB, bytes: bytes)
        m.extras = [("rss_before_kb", .int(result.rssBeforeKB)), ("ru_maxrss_kb", .int(ProcessStats.lifetimePeakKB())),
                    ("bytes_written", .int(result.bytesWritten)), ("bytes_per_record", .int(bytes / max(n, 1)))] + extras
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
