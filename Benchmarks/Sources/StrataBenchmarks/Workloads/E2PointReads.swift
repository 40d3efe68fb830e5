import Foundation
import GRDB
import StrataEngine

/// E2: random point reads by the unique id (index lookup, then the record, decoded), warm,
/// all in one read transaction per repetition.
enum E2PointReads: Workload {
    static let id = "E2-point-reads"
    static let title = "random fetch by unique id, warm"

    static func run(_ bench: Bench) throws {
        let ids = bench.data.randomIndexes(bench.options.lookupCount, below: bench.n, salt: 0xE2).map(bench.data.id)
        let trials = [
            Trial(system: System.strataEngine.rawValue, counters: { bench.engineCounters() }) {
                let engine = try bench.engine()
                return try engine.store.read { tx in
                    var outcome = Outcome()
                    for id in ids {
                        guard let c = try engine.fetch(id: id, in: tx) else { throw BenchError("\(id) not found") }
                        outcome.add(c)
                    }
                    return outcome
                }
            },
            Trial(system: System.grdb.rawValue, counters: { bench.sqliteCounters(.idiomatic) }) {
                try bench.queue(.idiomatic).read { db in
                    var outcome = Outcome()
                    for id in ids {
                        guard let c = try Course.fetchOne(db, id: id) else { throw BenchError("\(id) not found") }
                        outcome.add(c)
                    }
                    return outcome
                }
            },
            Trial(system: System.grdbTuned.rawValue, counters: { bench.sqliteCounters(.tuned) }) {
                try bench.queue(.tuned).read { db in
                    var outcome = Outcome()
                    let statement = try db.cachedStatement(sql: GRDBCourses.byIDSQL)
                    for id in ids {
                        guard let row = try Row.fetchOne(statement, arguments: [id]) else { throw BenchError("\(id) not found") }
                        outcome.add(GRDBCourses.course(row))
                    }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: ids.count, repetitions: bench.options.repetitions, trials) {
            bench.report(m, title: title)
        }
    }
}
