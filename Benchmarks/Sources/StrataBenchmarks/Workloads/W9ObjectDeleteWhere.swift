import Foundation
import GRDB
import Strata

/// W9: delete every unpublished object (about 25% of W1's n) and save. Strata:
/// `delete(model:where: #Predicate { !$0.isPublished })` then `save()`; GRDB idiomatic:
/// `Course.filter(Column("isPublished") == false).deleteAll(db)`; tuned:
/// `DELETE FROM course WHERE isPublished = 0`. Each system runs in a fresh process on a copy of
/// W1's store; n is the number of objects deleted (the same for every system, checked).
enum W9ObjectDeleteWhere: Workload {
    static let id = "W9-object-delete-where"
    static let title = "delete(model:where: !isPublished) + save() (~25% of n) · target ≥2× GRDB"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        var expected: Int?
        try childRounds(bench, systems: bench.selected(ObjectStores.systems), title: title) { system in
            let path = ObjectStores.path(bench, system) + ".delete"
            try ObjectStores.copyStore(ObjectStores.path(bench, system), to: path)
            defer { removeStoreFiles(path) }
            let child = try ChildProcess.run(
                [id] + ChildArguments.make(["system": system.rawValue, "path": path, "n": n]), countSyncs: true)
            guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
            if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
            if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
            if expected == nil { expected = m.n }
            m["same_result"] = .string(m.n == expected ? "yes" : "NO")
            return m
        }
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let result: Section.Result
        let before: Int, after: Int
        switch system {
        case .strata:
            let container = try ObjectStores.openContainer(path: path)
            before = try ModelContext(container).fetchCount(FetchDescriptor<StrataModel.Course>())
            let context = ModelContext(container)
            let section = Section.begin()
            try context.delete(model: StrataModel.Course.self, where: #Predicate { !$0.isPublished })
            try context.save()
            result = section.end()
            after = try ModelContext(container).fetchCount(FetchDescriptor<StrataModel.Course>())
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: style, create: false)
            before = try queue.read { try Course.fetchCount($0) }
            let section = Section.begin()
            try queue.write { db in
                if style == .idiomatic {
                    _ = try Course.filter(Column("isPublished") == false).deleteAll(db)
                } else {
                    try db.execute(sql: "DELETE FROM course WHERE isPublished = 0")
                }
            }
            result = section.end()
            after = try queue.read { try Course.fetchCount($0) }
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        guard before == n else { throw BenchError("\(id): \(system.rawValue) held \(before) objects, not \(n)") }
        let deleted = before - after
        var m = Measurement(workload: id, system: system.rawValue, n: deleted, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ObjectStores.size(system, path: path))
        m.extras = [("rss_before_kb", .int(result.rssBeforeKB)), ("bytes_written", .int(result.bytesWritten)),
                    ("deleted", .int(deleted)), ("of_records", .int(n))]
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
