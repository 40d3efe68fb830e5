import Foundation
import Glibc
import GRDB
import Strata

// The object-level workloads (W1-W8 of BENCH.md): Strata's object layer (`ModelContainer`,
// `ModelContext`, `FetchDescriptor`, `#Predicate`) beside GRDB idiomatic and tuned doing the
// same work. Their stores are their own (`objects-*` in the work folder), made by W1 with
// `Options.objectCount` objects; W3-W8 make them first if W1 has not run in this process.

/// The model, as an app would declare it. In a namespace so that its entity name is "Course"
/// beside the harness's `Course` struct (the GRDB record and the data generator's output).
enum StrataModel {
    final class Course: PersistentModel {
        @Attribute(.unique) var id: UUID
        @Attribute var title: String
        @Attribute var summary: String
        @Attribute var duration: Double
        @Attribute var createdAt: Date
        @Attribute var isPublished: Bool
        @Attribute var tags: [String]
        @Attribute var authorID: Int?

        static var indexes: [[PartialKeyPath<Course>]] { [[\.createdAt]] }

        init() {}

        init(_ c: StrataBenchmarks.Course) {
            id = c.id
            title = c.title
            summary = c.summary
            duration = c.duration
            createdAt = c.createdAt
            isPublished = c.isPublished
            tags = c.tags
            authorID = c.authorID
        }

        /// The same digest as `Course.checksum`, reading every field of the object.
        var checksum: Int {
            var sum = title.utf8.count &+ summary.utf8.count &* 3 &+ Int(duration * 10) &+ Int(createdAt.timeIntervalSince1970)
            sum &+= (isPublished ? 7 : 0) &+ tags.count &* 11 &+ (authorID ?? -1) &+ Int(id.uuid.0) &+ Int(id.uuid.15) << 8
            return sum
        }
    }
}

extension Outcome {
    mutating func add(_ object: StrataModel.Course) {
        count += 1
        checksum &+= object.checksum
    }
}

/// The object workloads' stores, and what this process has open of them.
enum ObjectStores {
    /// The systems every object workload runs.
    static let systems: [System] = [.strata, .grdb, .grdbTuned]

    static func path(_ bench: Bench, _ system: System) -> String {
        path(bench.options.workDirectory, system)
    }

    static func path(_ directory: String, _ system: System) -> String {
        switch system {
        case .strata, .strataEngine: return directory + "/objects.strata"
        case .grdb: return directory + "/objects-grdb.sqlite"
        case .grdbTuned, .bareFsync, .dd: return directory + "/objects-grdb-tuned.sqlite"
        }
    }

    /// W1's n, once it made the stores in this process (nil: not yet).
    nonisolated(unsafe) static var madeWithN: Int?
    nonisolated(unsafe) private static var container: ModelContainer?
    nonisolated(unsafe) private static var context: ModelContext?
    nonisolated(unsafe) private static var queues: [GRDBStyle: DatabaseQueue] = [:]

    /// Makes the stores (by running W1) unless W1 already ran, or `--reuse` says they exist.
    static func ensure(_ bench: Bench) throws {
        if madeWithN != nil { return }
        if bench.options.reuse, FileManager.default.fileExists(atPath: path(bench, .strata)) { madeWithN = bench.options.objectCount; return }
        try W1ObjectInsert.run(bench)
    }

    /// (Not inlined: `profile.sh W8` counts from this function's entry.)
    @inline(never)
    static func openContainer(path: String) throws -> ModelContainer {
        try ModelContainer(for: StrataModel.Course.self, configurations: StrataHistory.configuration(url: URL(fileURLWithPath: path)))
    }

    /// The context of the warm read workloads (one container, one context, kept open).
    static func strataContext(_ bench: Bench) throws -> ModelContext {
        if let context { return context }
        let c = try openContainer(path: path(bench, .strata))
        let ctx = ModelContext(c)
        container = c
        context = ctx
        return ctx
    }

    static func queue(_ bench: Bench, _ style: GRDBStyle) throws -> DatabaseQueue {
        if let q = queues[style] { return q }
        let q = try GRDBCourses.open(path: path(bench, style == .tuned ? .grdbTuned : .grdb), synchronous: "NORMAL", style: style, create: false)
        queues[style] = q
        return q
    }

    /// Lets go of what this process has open (before a child or a rewrite uses the files).
    static func closeAll() {
        context = nil
        container = nil
        queues = [:]
    }

    /// Copies a store (with the files beside it) to `to`, replacing what is there.
    /// Copies a store's files, and makes the copy durable before a child times work on it: a
    /// copy still dirty in the page cache was flushed by the first fsync of the timed work (of
    /// the file the system appends to), or not, as the kernel's writeback had or had not run,
    /// which made timings of the same build split into a fast and a slow group.
    static func copyStore(_ from: String, to: String) throws {
        removeStoreFiles(to)
        for suffix in ["", "-wal", "-shm", ".blobs"] where FileManager.default.fileExists(atPath: from + suffix) {
            try FileManager.default.copyItem(atPath: from + suffix, toPath: to + suffix)
            syncFile(to + suffix)
        }
    }

    private static func syncFile(_ path: String) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        if isDirectory.boolValue {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { syncFile(path + "/" + name) }
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        _ = close(fd)
    }

    /// The size on disk of a system's store.
    static func size(_ system: System, path: String) -> Int {
        system == .strata ? ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal") : GRDBCourses.size(path: path)
    }
}
