import Foundation
import GRDB
import Strata

/// W3: fetch by the unique id, random ids, warm. Strata: one `fetch` with
/// `#Predicate { $0.id == x }` per id (each its own read). GRDB idiomatic: one
/// `read { Course.fetchOne(db, id:) }` per id, as an app writes it; GRDB tuned: one read
/// transaction, a cached statement, `Row` access.
enum W3ObjectPointFetch: Workload {
    static let id = "W3-object-point-fetch"
    static let title = "fetch by unique id (#Predicate id == x), random, warm · target ≥10× GRDB, ≥2× tuned"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        let n = bench.options.objectCount
        let ids = bench.data.randomIndexes(n, below: n, salt: 0x3003).map(bench.data.id)
        let trials = [
            Trial(system: System.strata.rawValue) {
                let context = try ObjectStores.strataContext(bench)
                var outcome = Outcome()
                for key in ids {
                    let found = try context.fetch(FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.id == key }))
                    guard let c = found.first else { throw BenchError("\(key) not found") }
                    outcome.add(c)
                }
                return outcome
            },
            Trial(system: System.grdb.rawValue) {
                let queue = try ObjectStores.queue(bench, .idiomatic)
                var outcome = Outcome()
                for key in ids {
                    guard let c = try queue.read({ try Course.fetchOne($0, id: key) }) else { throw BenchError("\(key) not found") }
                    outcome.add(c)
                }
                return outcome
            },
            Trial(system: System.grdbTuned.rawValue) {
                try ObjectStores.queue(bench, .tuned).read { db in
                    var outcome = Outcome()
                    let statement = try db.cachedStatement(sql: GRDBCourses.byIDSQL)
                    for key in ids {
                        guard let row = try Row.fetchOne(statement, arguments: [key]) else { throw BenchError("\(key) not found") }
                        outcome.add(GRDBCourses.course(row))
                    }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: ids.count, repetitions: bench.options.repetitions, trials,
                             extras: [("of_records", .int(n))]) {
            bench.report(m, title: title)
        }
    }
}
