import Foundation
import GRDB

// Courses in SQLite through GRDB, two ways:
// - idiomatic: `Course` as a Codable record (dates as GRDB's default text, tags as JSON),
//   the query interface for every read and write;
// - tuned: cached prepared statements, `Row` access by column index, createdAt as a REAL,
//   and a page cache of StrataEngine's default cache budget (32 MiB) instead of SQLite's 2 MiB.
// Both: a rowid table with `id` a 16-byte BLOB primary key (so a unique index), an index
// on createdAt, WAL journal, DatabaseQueue (one connection).

extension Course: FetchableRecord, PersistableRecord {
    static let databaseTableName = "course"
}

enum GRDBStyle: String {
    case idiomatic = "grdb"
    case tuned = "grdb-tuned"
}

enum GRDBCourses {
    /// Opens the database in WAL mode with `synchronous` set on the open connection (GRDB may
    /// reset it after `prepareDatabase`) and read back. Creates the table when `create`.
    static func open(path: String, synchronous: String, style: GRDBStyle, create: Bool) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            if style == .tuned { try db.execute(sql: "PRAGMA cache_size=-\(tunedCacheKiB)") }
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else { throw BenchError("journal_mode is \(mode ?? "?"), not WAL") }
            try db.execute(sql: "PRAGMA synchronous=\(synchronous)")
            let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            let wanted = ["OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3][synchronous]
            guard level == wanted else { throw BenchError("synchronous reads back as \(level ?? -1), not \(synchronous)") }
            if create {
                try db.create(table: "course") { t in
                    t.primaryKey("id", .blob)
                    t.column("title", .text).notNull()
                    t.column("summary", .text).notNull()
                    t.column("duration", .double).notNull()
                    t.column("createdAt", style == .tuned ? .double : .datetime).notNull().indexed()
                    t.column("isPublished", .boolean).notNull()
                    t.column("tags", .jsonText).notNull()
                    t.column("authorID", .integer)
                }
            }
        }
        return queue
    }

    /// The tuned page cache: StrataEngine's default cache size (`StoreOptions().cacheSize`).
    static let tunedCacheKiB = 32 * 1024

    static let columns = "id, title, summary, duration, createdAt, isPublished, tags, authorID"
    static let insertSQL = "INSERT INTO course (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    static let byIDSQL = "SELECT \(columns) FROM course WHERE id = ?"
    static let rangeSQL = "SELECT \(columns) FROM course WHERE createdAt >= ? AND createdAt < ? ORDER BY createdAt"
    static let scanSQL = "SELECT \(columns) FROM course"

    /// Tuned insert: a cached statement, arguments set without checks.
    @inline(__always)
    static func insertTuned(_ c: Course, _ db: Database) throws {
        let statement = try db.cachedStatement(sql: insertSQL)
        statement.setUncheckedArguments([c.id, c.title, c.summary, c.duration, c.createdAt.timeIntervalSince1970,
                                         c.isPublished, tagsJSON(c.tags), c.authorID])
        try statement.execute()
    }

    /// Tuned decode of a row selected with `columns`.
    @inline(__always)
    static func course(_ row: Row) -> Course {
        Course(id: row[0], title: row[1], summary: row[2], duration: row[3],
               createdAt: Date(timeIntervalSince1970: row[4]), isPublished: row[5],
               tags: tags(fromJSON: row[6]), authorID: row[7])
    }

    /// `["a","b"]` for short tags, escaping as JSON requires.
    static func tagsJSON(_ tags: [String]) -> String {
        var s = "["
        for (i, tag) in tags.enumerated() {
            if i > 0 { s += "," }
            s += JSONValue.quote(tag)
        }
        return s + "]"
    }

    /// Reads what `tagsJSON` writes (an array of strings), without Foundation's JSON decoder.
    static func tags(fromJSON json: String) -> [String] {
        var tags: [String] = []
        var current: [UInt8] = []
        var inString = false, escaped = false
        for byte in json.utf8 {
            if !inString {
                if byte == UInt8(ascii: "\"") { inString = true; current.removeAll(keepingCapacity: true) }
                continue
            }
            if escaped {
                switch byte {
                case UInt8(ascii: "n"): current.append(0x0A)
                case UInt8(ascii: "t"): current.append(0x09)
                default: current.append(byte)  // \" \\ \/ (\u is not written by tagsJSON for tags)
                }
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                tags.append(String(decoding: current, as: UTF8.self))
                inString = false
            } else {
                current.append(byte)
            }
        }
        return tags
    }

    /// The database file plus its WAL, in bytes.
    static func size(path: String) -> Int {
        ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal")
    }
}
