import Foundation
import GRDB
import Strata

/// W6: upsert by the unique id: n objects inserted, half of them with ids already stored (a
/// changed duration), half new, one save. Each system runs in a fresh process on a copy of
/// W1's store. Strata: `insert` of `@Attribute(.unique)` objects (an upsert); GRDB idiomatic:
/// `upsert(db)`; GRDB tuned: a cached `INSERT ... ON CONFLICT(id) DO UPDATE`.
enum W6ObjectUpsert: Workload {
    static let id = "W6-object-upsert"
    static let title = "upsert by unique id, half existing, one save() · target ≥5× GRDB"

    static let upsertSQL = GRDBCourses.insertSQL + " ON CONFLICT(id) DO UPDATE SET title = excluded.title, summary = excluded.summary, "
        + "duration = excluded.duration, createdAt = excluded.createdAt, isPublished = excluded.isPublished, "
        + "tags = excluded.tags, authorID = excluded.authorID"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        try childRounds(bench, systems: bench.selected(ObjectStores.systems), title: title) { system in
            let path = ObjectStores.path(bench, system) + ".upsert"
            try ObjectStores.copyStore(ObjectStores.path(bench, system), to: path)
            defer { removeStoreFiles(path) }
            let child = try ChildProcess.run(
                [id] + ChildArguments.make(["system": system.rawValue, "path": path, "n": n, "seed": bench.options.seed]),
                countSyncs: true)
            guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
            if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
            if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
            return m
        }
    }

    /// The i-th upserted course: the stored course i, changed, for the first half; new ones after.
    static func course(_ i: Int, n: Int, data: Dataset) -> Course {
        if i < n / 2 {
            var c = data.course(i)
            c.duration += 1
            return c
        }
        return data.course(n + i)
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: UInt64(try arguments.int("seed")))
        let result: Section.Result
        let total: Int
        switch system {
        case .strata:
            let container = try ObjectStores.openContainer(path: path)
            let context = ModelContext(container)
            let section = Section.begin()
            for i in 0..<n { context.insert(StrataModel.Course(course(i, n: n, data: data))) }
            try context.save()
            result = section.end()
            total = try ModelContext(container).fetchCount(FetchDescriptor<StrataModel.Course>())
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: style, create: false)
            let section = Section.begin()
            try queue.write { db in
                if style == .idiomatic {
                    for i in 0..<n { try course(i, n: n, data: data).upsert(db) }
                } else {
                    let statement = try db.cachedStatement(sql: upsertSQL)
                    for i in 0..<n {
                        let c = course(i, n: n, data: data)
                        statement.setUncheckedArguments([c.id, c.title, c.summary, c.duration, c.createdAt.timeIntervalSince1970,
                                                         c.isPublished, GRDBCourses.tagsJSON(c.tags), c.authorID])
                        try statement.execute()
                    }
                }
            }
            result = section.end()
            total = try queue.read { try Course.fetchCount($0) }
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        guard total == n + (n - n / 2) else { throw BenchError("\(id): \(system.rawValue) holds \(total) objects after the upsert, not \(n + (n - n / 2))") }
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ObjectStores.size(system, path: path))
        m.extras = [("rss_before_kb", .int(result.rssBeforeKB)), ("bytes_written", .int(result.bytesWritten)),
                    ("objects_after", .int(total))]
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
