import Foundation
import GRDB
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// W2: durable single-object saves, each its own `save()`, into a fresh store (`--commits`,
/// default 2,000). Strata: insert one object and `save()` with the default durability
/// (`.full`: one fdatasync per save). GRDB idiomatic and tuned: one `write` per object with WAL
/// and synchronous=FULL. Beside them, in the same run, E5's bare loop of 4 KiB appends each
/// followed by fdatasync (E5's child, reused). Each system runs in a fresh process, in rounds
/// that take the systems in turn, with the page cache flushed before each child.
enum W2ObjectDurableSaves: Workload {
    static let id = "W2-object-durable-saves"
    static let title = "single-object durable save() each (fdatasync) · target ≥1× GRDB FULL, ≥0.8× bare fsync loop, 1 fsync/save"
    static let warmups = 20

    static func run(_ bench: Bench) throws {
        let systems = bench.selected([.bareFsync, .strata, .grdb, .grdbTuned])
        let rounds = bench.options.commits >= 1_000 ? 8 : 1
        var results: [System: Measurement] = [:]
        var roundP50s: [System: [Double]] = [:]
        for round in 0..<rounds {
            let n = bench.options.commits / rounds + (round == 0 ? bench.options.commits % rounds : 0)
            for system in systems {
                let path = bench.options.workDirectory + "/saves-\(system.rawValue)"
                removeStoreFiles(path)
                Glibc.sync()
                // The bare loop is E5's child, unchanged.
                let workload = system == .bareFsync ? E5DurableCommits.id : id
                let child = try ChildProcess.run(
                    [workload] + ChildArguments.make(["system": system.rawValue, "path": path, "n": n, "seed": bench.options.seed]),
                    countSyncs: true)
                removeStoreFiles(path)
                guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
                m.workload = id
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
            if let p50s = roundP50s[system] { m["p50_us"] = .double(median(p50s)) }
            bench.report(m, title: title)
        }
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: UInt64(try arguments.int("seed")))
        let first = 10_000_000
        let save: (Int) throws -> Void
        var container: ModelContainer?
        switch system {
        case .strata:
            let c = try ObjectStores.openContainer(path: path)
            container = c
            let context = ModelContext(c)
            save = { i in
                context.insert(StrataModel.Course(data.course(first + i)))
                try context.save()
            }
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try GRDBCourses.open(path: path, synchronous: "FULL", style: style, create: true)
            save = { i in
                try queue.write { db in
                    if style == .idiomatic { try data.course(first + i).insert(db) } else { try GRDBCourses.insertTuned(data.course(first + i), db) }
                }
            }
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        for i in 0..<warmups { try save(i) }
        let before = container?.stores.first?.statistics
        var latencies: [Double] = []
        latencies.reserveCapacity(n)
        let section = Section.begin()
        for i in warmups..<(warmups + n) {
            let t = ContinuousClock.now
            try save(i)
            latencies.append(t.duration(to: .now).seconds)
        }
        let result = section.end()
        latencies.sort()
        var extras: [(String, JSONValue)] = [
            ("bytes_written", .int(result.bytesWritten)),
            ("p50_us", .double((latencies[latencies.count / 2] * 1e6).rounded())),
            ("p99_us", .double((latencies[min(latencies.count - 1, latencies.count * 99 / 100)] * 1e6).rounded())),
        ]
        if system == .strata, let before, let after = container?.stores.first?.statistics {
            extras += [("engine_syncs", .int(after.syncs - before.syncs)),
                       ("engine_bytes_written", .int(after.bytesWritten - before.bytesWritten))]
        } else {
            extras.append(("synchronous", .string("FULL")))
        }
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal"), extras: extras)
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
