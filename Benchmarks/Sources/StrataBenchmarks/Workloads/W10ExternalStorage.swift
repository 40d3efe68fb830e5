import Foundation
import GRDB
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// The model of W10: a name and a 1 MiB value kept outside the record.
enum StrataBlobModel {
    final class Attachment: PersistentModel {
        @Attribute var name: String
        @Attribute(.externalStorage) var data: Data

        init() {}
        init(name: String, data: Data) {
            self.name = name
            self.data = data
        }
    }
}

/// W10's GRDB record: the same blob in a BLOB column.
struct Attachment: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "attachment"
    var id: Int64
    var name: String
    var data: Data
}

/// W10: `--blobs` objects (default 200) each with a distinct 1 MiB `@Attribute(.externalStorage)
/// var data: Data`: inserted and saved in one `save()`, then read back (a new container and
/// context, fetch all, touch every `.data`). GRDB idiomatic (Codable record) and tuned (cached
/// statement; reads through `withUnsafeData`) keep the same bytes in a BLOB column, WAL with
/// synchronous=FULL (Strata's default durability is full too). Beside them, in the same run,
/// `dd if=/dev/zero of=FILE bs=1M count=--dd-mib conv=fdatasync`: the disk's sequential rate.
/// MB = 10^6 bytes (as dd counts). Each system runs in a fresh process.
enum W10ExternalStorage: Workload {
    static let id = "W10-external-write"
    static let readID = "W10-external-read"
    static let title = "save n objects with a 1 MiB .externalStorage Data, MB/s · target ≥1× GRDB, ≥0.5× dd conv=fdatasync"
    static let readTitle = "read them back (new context, fetch, touch .data), MB/s · target ≥1× GRDB, ≥0.5× dd conv=fdatasync"
    static let blobSize = 1 << 20

    static func run(_ bench: Bench) throws {
        let count = bench.options.blobs
        // dd first: the floor of this disk for sequential durable writes (reported after the
        // systems, so that the table's n column is the object count).
        var ddRows: [(Measurement, String)] = []
        if bench.includes(.dd) {
            let path = bench.path(.dd)
            try? FileManager.default.removeItem(atPath: path)
            Glibc.sync()
            let (seconds, ddSays) = try dd(path: path, mib: bench.options.ddMiB)
            try? FileManager.default.removeItem(atPath: path)
            let bytes = bench.options.ddMiB << 20
            let mbs = Double(bytes) / 1e6 / seconds
            for (workload, title) in [(id, title), (readID, readTitle)] {
                var m = Measurement(workload: workload, system: System.dd.rawValue, n: bench.options.ddMiB, seconds: seconds, bytes: bytes)
                m.extras = [("mb_per_sec", .double(mbs)), ("score", .double(mbs)), ("dd_reports", .string(ddSays)),
                            ("shown", .string(String(format: "%.0f MB/s", mbs) + " (\(Format.time(seconds)))")),
                            ("note", .string(workload == id ? "dd bs=1M count=\(bench.options.ddMiB) conv=fdatasync"
                                                            : "the same dd write (the read is compared with it)"))]
                ddRows.append((m, title))
            }
        }
        for system in bench.selected(ObjectStores.systems) {
            let path = bench.options.workDirectory + "/attachments-\(system.rawValue)"
            removeStoreFiles(path)
            Glibc.sync()
            let child = try ChildProcess.run(
                [id] + ChildArguments.make(["system": system.rawValue, "path": path, "count": count]), countSyncs: true)
            removeStoreFiles(path)
            guard child.measurements.count == 2 else { throw BenchError("\(id): the child reported \(child.measurements.count) measurements, not 2") }
            for var m in child.measurements {
                let isWrite = m.workload == id
                // perf counted both sections together (the read syncs nothing): the count goes on the write row.
                if isWrite, let syncs = child.syncs { m["fsyncs"] = .int(syncs) }
                if isWrite, let calls = child.writeCalls { m["write_calls"] = .int(calls) }
                bench.report(m, title: isWrite ? title : readTitle)
            }
        }
        for (m, title) in ddRows { bench.report(m, title: title) }
    }

    /// Runs dd; returns the wall time and what dd printed about its rate.
    static func dd(path: String, mib: Int) throws -> (Double, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: findExecutable("dd") ?? "/bin/dd")
        process.arguments = ["if=/dev/zero", "of=\(path)", "bs=1M", "count=\(mib)", "conv=fdatasync"]
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let start = ContinuousClock.now
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = start.duration(to: .now).seconds
        guard process.terminationStatus == 0 else { throw BenchError("dd exited with status \(process.terminationStatus)") }
        let last = String(decoding: output, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        return (seconds, last)
    }

    /// Object i's value: 1 MiB, distinct per object (so nothing can be shared or deduplicated).
    static func blob(_ i: Int) -> Data {
        var rng = SplitMix64(seed: 0xB10B &+ UInt64(i))
        var data = Data(count: blobSize)
        data.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for w in 0..<words.count { words[w] = rng.next() }
        }
        return data
    }

    static func child(_ arguments: ChildArguments) throws {
        let system = try arguments.system()
        let path = try arguments.string("path")
        let count = try arguments.int("count")
        let blobs = (0..<count).map(blob)
        let expected = blobs.reduce(0) { $0 &+ Int($1[$1.count / 2]) &+ Int($1[7]) }
        let write: Section.Result, read: Section.Result
        var readSum = 0, readBytes = 0
        switch system {
        case .strata:
            let url = URL(fileURLWithPath: path)
            do {
                let container = try ModelContainer(for: StrataBlobModel.Attachment.self, configurations: StrataHistory.configuration(url: url))
                let context = ModelContext(container)
                let section = Section.begin()
                for (i, data) in blobs.enumerated() { context.insert(StrataBlobModel.Attachment(name: "attachment \(i)", data: data)) }
                try context.save()
                write = section.end()
            }
            let section = Section.begin()
            let container = try ModelContainer(for: StrataBlobModel.Attachment.self, configurations: StrataHistory.configuration(url: url))
            let context = ModelContext(container)
            for object in try context.fetch(FetchDescriptor<StrataBlobModel.Attachment>()) {
                let data = object.data
                readBytes += data.count
                readSum &+= Int(data[data.count / 2]) &+ Int(data[7])
            }
            read = section.end()
        case .grdb, .grdbTuned:
            let style: GRDBStyle = system == .grdb ? .idiomatic : .tuned
            let queue = try openAttachments(path: path, create: true)
            let section = Section.begin()
            try queue.write { db in
                if style == .idiomatic {
                    for (i, data) in blobs.enumerated() { try Attachment(id: Int64(i + 1), name: "attachment \(i)", data: data).insert(db) }
                } else {
                    let statement = try db.cachedStatement(sql: "INSERT INTO attachment (id, name, data) VALUES (?, ?, ?)")
                    for (i, data) in blobs.enumerated() {
                        statement.setUncheckedArguments([i + 1, "attachment \(i)", data])
                        try statement.execute()
                    }
                }
            }
            write = section.end()
            let readSection = Section.begin()
            let reader = try openAttachments(path: path, create: false)
            try reader.read { db in
                if style == .idiomatic {
                    for a in try Attachment.fetchAll(db) {
                        readBytes += a.data.count
                        readSum &+= Int(a.data[a.data.count / 2]) &+ Int(a.data[7])
                    }
                } else {
                    let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT data FROM attachment"))
                    while let row = try rows.next() {
                        try row.withUnsafeData(atIndex: 0) { data in
                            guard let data else { return }
                            readBytes += data.count
                            readSum &+= Int(data[data.count / 2]) &+ Int(data[7])
                        }
                    }
                }
            }
            read = readSection.end()
        default:
            throw BenchError("\(id): no \(system.rawValue) variant")
        }
        guard readBytes == count * blobSize, readSum == expected else {
            throw BenchError("\(id): \(system.rawValue) read back \(readBytes) bytes, checksum \(readSum), not \(count * blobSize), \(expected)")
        }
        let size = storeSize(system, path: path)
        for (workload, section) in [(id, write), (readID, read)] {
            let mbs = Double(count * blobSize) / 1e6 / section.seconds
            var m = Measurement(workload: workload, system: system.rawValue, n: count, seconds: section.seconds, peakRSSKB: section.peakKB, bytes: size)
            m.extras = [("mb_per_sec", .double(mbs)), ("score", .double(mbs)),
                        ("shown", .string(String(format: "%.0f MB/s", mbs) + " (\(Format.time(section.seconds)))")),
                        ("rss_before_kb", .int(section.rssBeforeKB)), ("bytes_written", .int(section.bytesWritten))]
            if system != .strata { m["synchronous"] = .string("FULL") }
            m.extras += section.memoryExtras
            print(m.jsonLine)
        }
    }

    static func openAttachments(path: String, create: Bool) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode=WAL")
            guard mode?.lowercased() == "wal" else { throw BenchError("journal_mode is \(mode ?? "?"), not WAL") }
            try db.execute(sql: "PRAGMA synchronous=FULL")
            guard try Int.fetchOne(db, sql: "PRAGMA synchronous") == 2 else { throw BenchError("synchronous is not FULL") }
            if create {
                try db.create(table: "attachment") { t in
                    t.primaryKey("id", .integer)
                    t.column("name", .text).notNull()
                    t.column("data", .blob).notNull()
                }
            }
        }
        return queue
    }

    /// A store's size on disk: the file, its WAL and (Strata) its blob folder.
    static func storeSize(_ system: System, path: String) -> Int {
        var total = ProcessStats.fileSize(path) + ProcessStats.fileSize(path + "-wal")
        if let names = try? FileManager.default.subpathsOfDirectory(atPath: path + ".blobs") {
            for name in names { total += ProcessStats.fileSize(path + ".blobs/" + name) }
        }
        return total
    }
}
