import Foundation
import GRDB
import StrataEngine

/// E3: a createdAt range holding about 10% of the records, through the non-unique index,
/// reading every record in it (in createdAt order).
enum E3RangeScan: Workload {
    static let id = "E3-range-scan"
    static let title = "createdAt range (~10%) via index, read each record"

    /// [lower, upper): 10% of the year of dates, in its middle.
    static func bounds() -> (Date, Date) {
        let lower = Dataset.epoch + TimeInterval(Dataset.span / 100 * 45)
        return (lower, lower + TimeInterval(Dataset.span / 10))
    }

    static func run(_ bench: Bench) throws {
        let (lower, upper) = bounds()
        let expected = (0..<bench.n).reduce(0) { count, i in
            let date = bench.data.course(i).createdAt
            return date >= lower && date < upper ? count + 1 : count
        }
        let trials = [
            Trial(system: System.strataEngine.rawValue, counters: { bench.engineCounters() }) {
                let engine = try bench.engine()
                return try engine.store.read { tx in
                    var outcome = Outcome()
                    var cursor = try tx.entries(in: engine.byCreatedAt,
                                                range: KeyRange(lower: KeyEncoding.encode(lower), upper: KeyEncoding.encode(upper)))
                    while let entry = try cursor.next() {
                        guard let c = try tx.withRecord(entry.row, in: engine.courses, { CourseCodec.decode($0) }) ?? nil else {
                            throw BenchError("row \(entry.row) missing")
                        }
                        outcome.add(c)
                    }
                    return outcome
                }
            },
            Trial(system: System.grdb.rawValue, counters: { bench.sqliteCounters(.idiomatic) }) {
                try bench.queue(.idiomatic).read { db in
                    var outcome = Outcome()
                    let createdAt = Column("createdAt")
                    let courses = try Course.filter(createdAt >= lower && createdAt < upper).order(createdAt).fetchCursor(db)
                    while let c = try courses.next() { outcome.add(c) }
                    return outcome
                }
            },
            Trial(system: System.grdbTuned.rawValue, counters: { bench.sqliteCounters(.tuned) }) {
                try bench.queue(.tuned).read { db in
                    var outcome = Outcome()
                    let statement = try db.cachedStatement(sql: GRDBCourses.rangeSQL)
                    let rows = try Row.fetchCursor(statement, arguments: [lower.timeIntervalSince1970, upper.timeIntervalSince1970])
                    while let row = try rows.next() { outcome.add(GRDBCourses.course(row)) }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: expected, repetitions: bench.options.repetitions, trials,
                             extras: [("of_records", .int(bench.n))]) {
            bench.report(m, title: title)
        }
    }
}
