import Foundation
import GRDB
import Strata

/// W7: every object, reading each field: Strata `enumerate` with batchSize 5000; GRDB a
/// cursor (idiomatic: `Course.fetchCursor`; tuned: `Row` cursor). In one process: the RSS
/// growth during the pass is the number to compare.
enum W7ObjectEnumerate: Workload {
    static let id = "W7-object-enumerate"
    static let title = "enumerate all objects (batchSize 5000), every field · target ≥2× GRDB cursor; RSS growth < 64 MiB at 1M"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        let trials = [
            Trial(system: System.strata.rawValue) {
                let context = try ObjectStores.strataContext(bench)
                var outcome = Outcome()
                try context.enumerate(FetchDescriptor<StrataModel.Course>(), batchSize: 5000) { outcome.add($0) }
                return outcome
            },
            Trial(system: System.grdb.rawValue) {
                try ObjectStores.queue(bench, .idiomatic).read { db in
                    var outcome = Outcome()
                    let courses = try Course.fetchCursor(db)
                    while let c = try courses.next() { outcome.add(c) }
                    return outcome
                }
            },
            Trial(system: System.grdbTuned.rawValue) {
                try ObjectStores.queue(bench, .tuned).read { db in
                    var outcome = Outcome()
                    let rows = try Row.fetchCursor(db.cachedStatement(sql: GRDBCourses.scanSQL))
                    while let row = try rows.next() { outcome.add(GRDBCourses.course(row)) }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: bench.options.objectCount, repetitions: bench.options.repetitions, trials) {
            bench.report(m, title: title)
        }
    }
}
