import Foundation
import GRDB
import StrataEngine
#if canImport(Glibc)
import Glibc
#endif

/// E5: durable single-record commits, each its own transaction, into a fresh store; beside
/// them the floor this disk sets: a bare loop of 4 KiB appends each followed by fdatasync.
/// GRDB runs with WAL and synchronous=FULL. Each system runs in a fresh process.
enum E5DurableCommits: Workload {
    static let id = "E5-durable-commits"
    static let title = "single-record durable commits (fdatasync each)"
    static let warmups = 20

    static func run(_ bench: Bench) throws {
        // Rounds that take the systems in turn, so that a slow spell of the disk (or a busy
        // neighbour) falls on every system alike; the page cache is flushed before each child
        // so that earlier workloads' writeback does not land on one system's syncs.
        let systems = bench.selected([.bareFsync, .strataEngine, .grdb, .grdbTuned])
        let rounds = bench.options.commits >= 1_000 ? 8 : 1
        var results: [System: Measurement] = [:]
        var roundP50s: [System: [Double]] = [:]
        for round in 0..<rounds {
            let n = bench.options.commits / rounds + (round == 0 ? bench.options.commits % rounds : 0)
            for system in systems {
                let path = bench.options.workDirectory + "/commits-\(system.rawValue)"
                removeStoreFiles(path)
                Glibc.sync()
                let child = try ChildProcess.run(
                    [id] + ChildArguments.make(["system": system.rawValue, "path": path, "n": n, "seed": bench.options.seed]),
                    countSyncs: true)
                removeStoreFiles(path)
                guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
                if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
                if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
                if let p50 = m["p50_us"]?.doubleValue { roundP50s[system, default: []].append(p50) }
                if let sum = results[system] { m = E5DurableCommits.add(sum, m) }
                results[system] = m
            }
        }
        for system in systems {
            guard var m = results[system] else { continue }
            m["micros_per_op"] = .double(m.seconds / Double(max(m.n, 1)) * 1e6)
            if let syncs = m["fsyncs"]?.doubleValue { m["fsyncs_per_op"] = .double(syncs / Double(max(m.n, 1))) }
            if let b = m["engine_bytes_written"]?.doubleValue { m["bytes_per_commit"] = .int(Int(b) / max(m.n, 1)) }
            m["rounds"] = .int(rounds)
            if let p50s = roundP50s[system] { m["p50_us"] = .double(median(p50s)) }  // the median round's p50
            bench.report(m, title: title)
        }
    }

    /// Two rounds' measurements as one: times, counts and bytes added, the larger peak and p99.
    static func add(_ a: Measurement, _ b: Measurement) -> Measurement {
        var m = a
        m.n += b.n
        m.seconds += b.seconds
        m.peakRSSKB = max(a.peakRSSKB ?? 0, b.peakRSSKB ?? 0)
        m.bytes = max(a.bytes ?? 0, b.bytes ?? 0)
        for key in ["bytes_written", "engine_syncs", "engine_bytes_written", "fsyncs", "write_calls"] {
            if let x = a[key]?.doubleValue, let y = b[key]?.doubleValue { m[key] = .int(Int(x + y)) }
        }
        if let x = a["p99_us"]?.doubleValue, let y = b["p99_us"]?.doubleValue { m["p99_us"] = .double(max(x, y)) }
        if let x = a["peak_anon_kb"]?.doubleValue, let y = b["peak_anon_kb"]?.doubleValue { m["peak_anon_kb"] = .int(Int(max(x, y))) }

        return m
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: UInt64(try arguments.int("seed")))
        // Records far from the ones E1 stores, so each commit is a new row.
        let first = 10_000_000
        // One durable commit of record i, per system.
        let commit: (Int) throws -> Void
        var engine: EngineCourses?
        var cleanup: () -> Void = {}
        switch system {
        case .bareFsync:
            let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BenchError("open \(path): errno \(errno)") }
            cleanup = { Glibc.close(fd) }
            let page = [UInt8](repeating: 0xA5, count: 4096)
            commit = { i in
                let written = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(i * page.count)) }
                guard written == page.count, fdatasync(fd) == 0 else { throw BenchError("pwrite/fdatasync failed: errno \(errno)") }
            }
        case .strataEngine:
            let e = try EngineCourses.open(path: path, options: StoreOptions(durability: .full))
            engine = e
            var buffer: [UInt8] = []
            commit = { i in try e.store.write { try e.insert(data.course(first + i), in: $0, buffer: &buffer) } }
        case .strata, .dd: throw BenchError("\(id): no strata variant")
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try GRDBCourses.open(path: path, synchronous: "FULL", style: style, create: true)
            commit = { i in
                try queue.write { db in
                    if style == .idiomatic { try data.course(first + i).insert(db) } else { try GRDBCourses.insertTuned(data.course(first + i), db) }
                }
            }
        }
        defer { cleanup() }
        for i in 0..<warmups { try commit(i) }
        let before = engine?.store.statistics
        var latencies: [Double] = []
        latencies.reserveCapacity(n)
        let section = Section.begin()
        for i in warmups..<(warmups + n) {
            let t = ContinuousClock.now
            try commit(i)
            latencies.append(t.duration(to: .now).seconds)
        }
        let result = section.end()
        latencies.sort()
        var extras: [(String, JSONValue)] = [
            ("bytes_written", .int(result.bytesWritten)),
            ("p50_us", .double((latencies[latencies.count / 2] * 1e6).rounded())),
            ("p99_us", .double((latencies[min(latencies.count - 1, latencies.count * 99 / 100)] * 1e6).rounded())),
        ]
        switch system {
        case .bareFsync: extras.append(("append_bytes", .int(4096)))
        case .strataEngine:
            if let before, let after = engine?.store.statistics {
                extras += [("engine_syncs", .int(after.syncs - before.syncs)),
                           ("engine_bytes_written", .int(after.bytesWritten - before.bytesWritten))]
            }
        case .grdb, .grdbTuned: extras.append(("synchronous", .string("FULL")))
        case .strata, .dd: break
        }
        // Closing cuts off the zeros the engine wrote ahead of its next commits (counted in
        // engine_bytes_written, not in the file's size).
        engine?.store.close()
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal"), extras: extras)
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
