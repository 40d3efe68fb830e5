import Foundation
import GRDB
import Strata

/// W5: a page of 50 sorted by createdAt descending at offset 1000, 200 pages per repetition,
/// reading every field of each object.
enum W5ObjectPage: Workload {
    static let id = "W5-object-page"
    static let title = "page of 50 by createdAt desc, offset 1000 · target ≥2× GRDB"
    static let pages = 200
    static let limit = 50
    static let offset = 1000

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        let offset = min(Self.offset, max(0, bench.options.objectCount - limit))
        let trials = [
            Trial(system: System.strata.rawValue) {
                let context = try ObjectStores.strataContext(bench)
                var descriptor = FetchDescriptor<StrataModel.Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
                descriptor.fetchLimit = limit
                descriptor.fetchOffset = offset
                var outcome = Outcome()
                for _ in 0..<pages { for c in try context.fetch(descriptor) { outcome.add(c) } }
                return outcome
            },
            Trial(system: System.grdb.rawValue) {
                let queue = try ObjectStores.queue(bench, .idiomatic)
                var outcome = Outcome()
                for _ in 0..<pages {
                    let page = try queue.read { try Course.order(Column("createdAt").desc).limit(limit, offset: offset).fetchAll($0) }
                    for c in page { outcome.add(c) }
                }
                return outcome
            },
            Trial(system: System.grdbTuned.rawValue) {
                try ObjectStores.queue(bench, .tuned).read { db in
                    var outcome = Outcome()
                    let statement = try db.cachedStatement(sql: "SELECT \(GRDBCourses.columns) FROM course ORDER BY createdAt DESC LIMIT ? OFFSET ?")
                    for _ in 0..<pages {
                        let rows = try Row.fetchCursor(statement, arguments: [limit, offset])
                        while let row = try rows.next() { outcome.add(GRDBCourses.course(row)) }
                    }
                    return outcome
                }
            },
        ]
        for m in try compare(bench, workload: id, n: pages, repetitions: bench.options.repetitions, trials,
                             extras: [("of_records", .int(bench.options.objectCount)), ("offset", .int(offset)), ("limit", .int(limit))]) {
            bench.report(m, title: title)
        }
    }
}
