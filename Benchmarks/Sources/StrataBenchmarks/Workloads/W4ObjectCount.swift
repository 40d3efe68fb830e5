import Foundation
import GRDB
import Strata

/// W4: `fetchCount` with `#Predicate { $0.duration > x && $0.isPublished }` on non-indexed
/// fields, about 25% of the objects matching (durations are uniform in 0..<3600, 3/4 are
/// published), 20 counts per repetition.
enum W4ObjectCount: Workload {
    static let id = "W4-object-count"
    static let title = "fetchCount, duration > x && isPublished (~25%), not indexed · target ≥1× GRDB"
    static let counts = 20
    static let threshold = 2400.0

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        let x = threshold
        let trials = [
            Trial(system: System.strata.rawValue) {
                let context = try ObjectStores.strataContext(bench)
                let descriptor = FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.duration > x && $0.isPublished })
                var outcome = Outcome()
                for _ in 0..<counts { outcome.count += try context.fetchCount(descriptor) }
                return outcome
            },
            Trial(system: System.grdb.rawValue) {
                try ObjectStores.queue(bench, .idiomatic).read { db in
                    var outcome = Outcome()
                    for _ in 0..<counts {
                        outcome.count += try Course.filter(Column("duration") > x && Column("isPublished") == true).fetchCount(db)
                    }
                    return outcome
                }
            },
            Trial(system: System.grdbTuned.rawValue) {
                try ObjectStores.queue(bench, .tuned).read { db in
                    var outcome = Outcome()
                    let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM course WHERE duration > ? AND isPublished")
                    for _ in 0..<counts { outcome.count += try Int.fetchOne(statement, arguments: [x]) ?? 0 }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: counts, repetitions: bench.options.repetitions, trials,
                             extras: [("of_records", .int(bench.options.objectCount))]) {
            bench.report(m, title: title)
        }
    }
}
