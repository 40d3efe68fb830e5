import Foundation
import GRDB
import GRDBSQLite
import StrataEngine

/// The systems compared, in the order of every table.
enum System: String, CaseIterable {
    case strataEngine = "strata-engine"
    /// Strata objects through ModelContext (the W workloads).
    case strata = "strata"
    case grdb = "grdb"
    case grdbTuned = "grdb-tuned"
    case bareFsync = "bare-fsync"
    /// `dd if=/dev/zero bs=1M conv=fdatasync` (W10 only): the disk's sequential write rate.
    case dd = "dd"
}

/// One workload: a parent part that runs (or spawns) every system and reports measurements,
/// and optionally a child part, run in a fresh process by `self child <id> key=value...`.
protocol Workload: SendableMetatype {
    static var id: String { get }
    /// One line for the summary table.
    static var title: String { get }
    static func run(_ bench: Bench) throws
    static func child(_ arguments: ChildArguments) throws
}

extension Workload {
    static func child(_ arguments: ChildArguments) throws {
        throw BenchError("\(id) has no child part")
    }
}

/// The arguments of a child sub-command: `key=value` pairs.
struct ChildArguments {
    let values: [String: String]

    init(_ arguments: [String]) {
        var values: [String: String] = [:]
        for a in arguments {
            guard let eq = a.firstIndex(of: "=") else { continue }
            values[String(a[..<eq])] = String(a[a.index(after: eq)...])
        }
        self.values = values
    }

    func string(_ key: String) throws -> String {
        guard let v = values[key] else { throw BenchError("child: missing \(key)=") }
        return v
    }

    func int(_ key: String) throws -> Int {
        guard let v = Int(try string(key)) else { throw BenchError("child: \(key)= is not a number") }
        return v
    }

    func system() throws -> System {
        guard let s = System(rawValue: try string("system")) else { throw BenchError("child: unknown system") }
        return s
    }

    static func make(_ pairs: KeyValuePairs<String, Any>) -> [String] {
        pairs.map { "\($0.key)=\($0.value)" }
    }
}

/// The state of one benchmark run: sizes, where files go, what was measured.
final class Bench {
    let options: Options
    let data: Dataset
    private(set) var measurements: [Measurement] = []
    /// What each workload id means, for the tables.
    private(set) var titles: [String: String] = [:]
    let loadAtStart = Machine.loadAverage

    init(options: Options) {
        self.options = options
        self.data = Dataset(seed: options.seed)
    }

    var n: Int { options.n }

    /// Whether `--systems` lets this system run.
    func includes(_ system: System) -> Bool {
        options.systems.isEmpty || options.systems.contains(system.rawValue)
    }

    /// The systems of `list` that `--systems` lets run.
    func selected(_ list: [System]) -> [System] { list.filter(includes) }

    func path(_ system: System) -> String {
        switch system {
        case .strataEngine: return options.workDirectory + "/courses.strata"
        case .strata: return ObjectStores.path(self, .strata)
        case .grdb: return options.workDirectory + "/courses-grdb.sqlite"
        case .grdbTuned: return options.workDirectory + "/courses-grdb-tuned.sqlite"
        case .bareFsync: return options.workDirectory + "/bare-fsync.bin"
        case .dd: return options.workDirectory + "/dd.bin"
        }
    }

    /// Prints a measurement as one JSON line and keeps it for the summary.
    func report(_ m: Measurement, title: String) {
        var m = m
        if m.system == System.strataEngine.rawValue, m["blocks_read"] != nil, let engine = openedEngine {
            m["cache_mib"] = .int(engine.store.options.cacheSize >> 20)  // what the read counts depend on
        }
        titles[m.workload] = title
        measurements.append(m)
        FileHandle.standardOutput.write(Data((m.jsonLine + "\n").utf8))
    }

    // MARK: Stores opened in this process (for the warm read workloads)

    private var openedEngine: EngineCourses?
    private var openedQueues: [GRDBStyle: DatabaseQueue] = [:]

    func engine() throws -> EngineCourses {
        if let e = openedEngine { return e }
        var storeOptions = StoreOptions()
        if let mib = options.engineCacheMiB { storeOptions.cacheSize = mib << 20 }
        let e = try EngineCourses.open(path: path(.strataEngine), options: storeOptions)
        openedEngine = e
        return e
    }

    func queue(_ style: GRDBStyle) throws -> DatabaseQueue {
        if let q = openedQueues[style] { return q }
        let q = try GRDBCourses.open(path: path(style == .tuned ? .grdbTuned : .grdb), synchronous: "NORMAL", style: style, create: false)
        openedQueues[style] = q
        return q
    }

    /// The engine's read counters (pages and record blocks read from the file: cache misses).
    func engineCounters() -> [(String, Int)] {
        guard let s = openedEngine?.store.statistics else { return [] }
        return [("pages_read", s.pagesRead), ("blocks_read", s.blocksRead)]
    }

    /// SQLite's page cache misses and hits on a connection (pages read from the file, or the OS cache).
    func sqliteCounters(_ style: GRDBStyle) -> [(String, Int)] {
        guard let queue = openedQueues[style] else { return [] }
        return queue.inDatabase { db -> [(String, Int)] in
            var current: Int32 = 0, highest: Int32 = 0
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_MISS, &current, &highest, 0)
            let misses = Int(current)
            sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_HIT, &current, &highest, 0)
            return [("pages_read", misses), ("cache_hits", Int(current))]
        }
    }

    /// Closes what this process has open (before another process opens the same files).
    func closeAll() {
        openedEngine?.store.close()
        openedEngine = nil
        openedQueues = [:]
    }
}

/// Removes a store or database with the files beside it.
func removeStoreFiles(_ path: String) {
    for suffix in ["", "-wal", "-shm", "-journal", ".compact", ".lock", ".upgrade"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    try? FileManager.default.removeItem(atPath: path + ".blobs")
}
