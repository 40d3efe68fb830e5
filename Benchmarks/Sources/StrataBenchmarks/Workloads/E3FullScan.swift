import Foundation
import GRDB
import StrataEngine

/// E3 (second half): every record, in row id order, decoded.
enum E3FullScan: Workload {
    static let id = "E3-full-scan"
    static let title = "full scan of all records by row id"

    static func run(_ bench: Bench) throws {
        let trials = [
            Trial(system: System.strataEngine.rawValue, counters: { bench.engineCounters() }) {
                let engine = try bench.engine()
                return try engine.store.read { tx in
                    var outcome = Outcome()
                    var failed = false
                    try tx.forEachRecord(in: engine.courses) { _, raw in
                        guard let c = CourseCodec.decode(raw) else { failed = true; return false }
                        outcome.add(c)
                        return true
                    }
                    if failed { throw BenchError("a malformed record") }
                    return outcome
                }
            },
            Trial(system: System.grdb.rawValue, counters: { bench.sqliteCounters(.idiomatic) }) {
                try bench.queue(.idiomatic).read { db in
                    var outcome = Outcome()
                    let courses = try Course.fetchCursor(db)
                    while let c = try courses.next() { outcome.add(c) }
                    return outcome
                }
            },
            Trial(system: System.grdbTuned.rawValue, counters: { bench.sqliteCounters(.tuned) }) {
                try bench.queue(.tuned).read { db in
                    var outcome = Outcome()
                    let rows = try Row.fetchCursor(db.cachedStatement(sql: GRDBCourses.scanSQL))
                    while let row = try rows.next() { outcome.add(GRDBCourses.course(row)) }
                    return outcome
                }
            },
        ]
        // The full scan is long: fewer repetitions than the short workloads.
        for m in try compare(bench, workload: id, n: bench.n, repetitions: max(1, min(3, bench.options.repetitions)), trials) {
            bench.report(m, title: title)
        }
    }
}
