import Foundation
import GRDB
import Strata

/// The models of C1: an owner whose items go with it.
enum StrataGraphModel {
    final class Owner: PersistentModel {
        @Attribute var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Item.owner) var items: [Item] = []
        init() {}
        init(name: String) { self.name = name }
    }

    final class Item: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var position: Int = 0
        @Relationship var owner: Owner? = nil
        init() {}
        init(title: String, position: Int) {
            self.title = title
            self.position = position
        }
    }
}

/// C1's GRDB records: `item.ownerId REFERENCES owner ON DELETE CASCADE` (indexed), foreign keys on.
struct GraphOwner: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "owner"
    var id: Int64
    var name: String
}

struct GraphItem: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int64
    var ownerId: Int64
    var title: String
    var position: Int
}

/// C1 (issue 4): delete an owner with n related objects (`--objects`, default 100k) in one
/// save, the cascade rule deleting them all; a second owner with 10 items must keep them.
/// Strata: `@Relationship(deleteRule: .cascade, inverse: \Item.owner) var items`, a fresh
/// process opens the store, fetches the owner, `delete(owner)`, `save()`. GRDB: a foreign key
/// `ON DELETE CASCADE` with `PRAGMA foreign_keys=ON` (read back); idiomatic
/// `GraphOwner.deleteOne(db, key:)`, tuned `DELETE FROM owner WHERE id = ?`; WAL,
/// synchronous=NORMAL. Each store is made by one child process and the delete is timed in
/// another (so peak RSS is the delete's alone); n is the number of objects deleted.
enum C1CascadeDelete: Workload {
    static let id = "C1-cascade-delete"
    static let title = "delete an owner with n related objects (cascade) in one save, fresh process · (issue 4: time and peak RSS beside GRDB ON DELETE CASCADE)"
    static let survivors = 10

    static func run(_ bench: Bench) throws {
        let n = bench.options.objectCount
        try childRounds(bench, systems: bench.selected(ObjectStores.systems), title: title) { system in
            let path = bench.options.workDirectory + "/graph-\(system.rawValue)"
            removeStoreFiles(path)
            defer { removeStoreFiles(path) }
            _ = try ChildProcess.run([id] + ChildArguments.make(["phase": "make", "system": system.rawValue, "path": path, "n": n]))
            let child = try ChildProcess.run([id] + ChildArguments.make(["phase": "delete", "system": system.rawValue, "path": path, "n": n]),
                                             countSyncs: true)
            guard var m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
            if let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
            if let calls = child.writeCalls { m["write_calls"] = .int(calls) }
            return m
        }
    }

    static func openStrata(_ path: String) throws -> ModelContainer {
        try ModelContainer(for: Schema([StrataGraphModel.Owner.self, StrataGraphModel.Item.self]),
                           configurations: [StrataHistory.configuration(url: URL(fileURLWithPath: path))])
    }

    static func openGRDB(_ path: String, create: Bool) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else { throw BenchError("journal_mode is \(mode ?? "?"), not WAL") }
            try db.execute(sql: "PRAGMA synchronous=NORMAL")
            try db.execute(sql: "PRAGMA foreign_keys=ON")
            guard try Int.fetchOne(db, sql: "PRAGMA foreign_keys") == 1 else { throw BenchError("foreign_keys is off") }
            if create {
                try db.create(table: "owner") { t in
                    t.primaryKey("id", .integer)
                    t.column("name", .text).notNull()
                }
                try db.create(table: "item") { t in
                    t.primaryKey("id", .integer)
                    t.belongsTo("owner", onDelete: .cascade).notNull()  // ownerId, indexed
                    t.column("title", .text).notNull()
                    t.column("position", .integer).notNull()
                }
            }
        }
        return queue
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        let data = Dataset(seed: 42)
        func title(_ i: Int) -> String { data.titles[i & 4095] }
        if try arguments.string("phase") == "make" {
            switch system {
            case .strata:
                let context = ModelContext(try openStrata(path))
                let owner = StrataGraphModel.Owner(name: "owner")
                let other = StrataGraphModel.Owner(name: "other")
                context.insert(owner)
                context.insert(other)
                owner.items = (0..<n).map { StrataGraphModel.Item(title: title($0), position: $0) }
                other.items = (0..<survivors).map { StrataGraphModel.Item(title: title($0), position: $0) }
                try context.save()
            case .grdb, .grdbTuned:
                let queue = try openGRDB(path, create: true)
                try queue.write { db in
                    try GraphOwner(id: 1, name: "owner").insert(db)
                    try GraphOwner(id: 2, name: "other").insert(db)
                    let statement = try db.cachedStatement(sql: "INSERT INTO item (id, ownerId, title, position) VALUES (?, ?, ?, ?)")
                    for i in 0..<(n + survivors) {
                        statement.setUncheckedArguments([i + 1, i < n ? 1 : 2, title(i), i < n ? i : i - n])
                        try statement.execute()
                    }
                }
                try queue.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            default:
                throw BenchError("\(id): no \(system.rawValue) variant")
            }
            return
        }
        let result: Section.Result
        let left: Int
        switch system {
        case .strata:
            let container = try openStrata(path)
            let context = ModelContext(container)
            let section = Section.begin()
            guard let owner = try context.fetch(FetchDescriptor<StrataGraphModel.Owner>(predicate: #Predicate { $0.name == "owner" })).first else {
                throw BenchError("\(id): no owner")
            }
            context.delete(owner)
            try context.save()
            result = section.end()
            left = try ModelContext(container).fetchCount(FetchDescriptor<StrataGraphModel.Item>())
        case .grdb, .grdbTuned:
            let queue = try openGRDB(path, create: false)
            let section = Section.begin()
            try queue.write { db in
                if system == .grdb {
                    guard try GraphOwner.deleteOne(db, key: 1) else { throw BenchError("\(id): no owner") }
                } else {
                    try db.execute(sql: "DELETE FROM owner WHERE id = ?", arguments: [1])
                }
            }
            result = section.end()
            left = try queue.read { try GraphItem.fetchCount($0) }
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        guard left == survivors else { throw BenchError("\(id): \(system.rawValue) left \(left) items, not \(survivors)") }
        var m = Measurement(workload: id, system: system.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal"))
        m.extras = [("rss_before_kb", .int(result.rssBeforeKB)), ("bytes_written", .int(result.bytesWritten)),
                    ("deleted", .int(n)), ("of_records", .int(n + survivors)), ("ru_maxrss_kb", .int(ProcessStats.lifetimePeakKB()))]
        if system != .strata { m["synchronous"] = .string("NORMAL") }
        m.extras += result.memoryExtras
        print(m.jsonLine)
    }
}
