import Foundation
import GRDB
import StrataEngine

/// E4: open the store of n records in a fresh process and fetch one record by id. The child
/// times open + first fetch itself; the parent also reports the whole process's wall time.
/// The OS page cache is warm (the files were just written and read).
enum E4Reopen: Workload {
    static let id = "E4-reopen-fetch"
    static let title = "fresh process: open store + first fetch by id"

    static func run(_ bench: Bench) throws {
        bench.closeAll()
        let key = bench.data.id(bench.n / 2)
        // The systems' children in turn, round after round (`interleavedMedians`).
        let children: [() throws -> ChildProcess.Result] = bench.selected([.strataEngine, .grdb, .grdbTuned]).map { system in
            let arguments = [id] + ChildArguments.make(["system": system.rawValue, "path": bench.path(system), "key": key.uuidString])
            return { try ChildProcess.run(arguments) }
        }
        for m in try ChildProcess.interleavedMedians(id, bench.options.freshProcessRepetitions, of: bench.n, children) { bench.report(m, title: title) }
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        guard let key = UUID(uuidString: try arguments.string("key")) else { throw BenchError("bad key") }
        let section = Section.begin(samplingAnon: false)
        let start = ContinuousClock.now
        let opened: ContinuousClock.Instant
        let course: Course?
        switch system {
        case .strataEngine:
            let engine = try EngineCourses.open(path: path)
            opened = .now
            course = try engine.store.read { try engine.fetch(id: key, in: $0) }
        case .grdb:
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: .idiomatic, create: false)
            opened = .now
            course = try queue.read { try Course.fetchOne($0, id: key) }
        case .grdbTuned:
            let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: .tuned, create: false)
            opened = .now
            course = try queue.read { db in
                try Row.fetchOne(db.cachedStatement(sql: GRDBCourses.byIDSQL), arguments: [key]).map(GRDBCourses.course)
            }
        case .bareFsync, .strata, .dd:
            throw BenchError("\(id): no bare-fsync variant")
        }
        let end = ContinuousClock.now
        let result = section.end()
        guard let course, course.id == key else { throw BenchError("\(id): \(key) not found") }
        var m = Measurement(workload: id, system: system.rawValue, n: 1, seconds: start.duration(to: end).seconds,
                            peakRSSKB: result.peakKB, bytes: ProcessStats.fileSize(path),
                            extras: [("open_seconds", .double(start.duration(to: opened).seconds)),
                                     ("fetch_seconds", .double(opened.duration(to: end).seconds))])
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
