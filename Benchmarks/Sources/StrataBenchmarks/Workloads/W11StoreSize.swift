import Foundation
import GRDB
import Strata
import StrataEngine

/// W11: bytes on disk per object of W1's stores (file + WAL), as W1 left them, and after
/// compaction of a copy: Strata `ModelContainer.compact()` (a Strata extra), GRDB `VACUUM`
/// then a truncating WAL checkpoint. The ratio columns compare smallness: GRDB's bytes per
/// object ÷ Strata's (above 1×: Strata's store is smaller). The time of the compaction is in
/// the JSON (`seconds` of the after-compaction row).
enum W11StoreSize: Workload {
    static let id = "W11-size-after-insert"
    static let compactID = "W11-size-after-compact"
    static let title = "store bytes per object after W1 (file + WAL) · (no target before compaction)"
    static let compactTitle = "bytes per object after compaction (Strata compact(), GRDB VACUUM) · target ≤ GRDB's"

    static func run(_ bench: Bench) throws {
        try ObjectStores.ensure(bench)
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        var rows: [(System, Measurement, Measurement)] = []
        for system in bench.selected(ObjectStores.systems) {
            var split: (extras: [(String, JSONValue)], note: String, seconds: Double)?
            let original = ObjectStores.path(bench, system)
            let before = ObjectStores.size(system, path: original)
            let path = original + ".w11"
            try ObjectStores.copyStore(original, to: path)
            defer { removeStoreFiles(path) }
            let start = ContinuousClock.now
            switch system {
            case .strata:
                do {
                    let container = try ObjectStores.openContainer(path: path)
                    try container.compact()
                    let count = try ModelContext(container).fetchCount(FetchDescriptor<StrataModel.Course>())
                    guard count == n else { throw BenchError("\(id): \(count) objects after compaction, not \(n)") }
                }
                split = try engineSplit(path: path, n: n)
            case .grdb, .grdbTuned:
                let queue = try GRDBCourses.open(path: path, synchronous: "NORMAL", style: system == .grdb ? .idiomatic : .tuned, create: false)
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    _ = try db.checkpoint(.truncate)
                }
                let count = try queue.read { try Course.fetchCount($0) }
                guard count == n else { throw BenchError("\(id): \(count) rows after VACUUM, not \(n)") }
            default:
                throw BenchError("\(id): no \(system.rawValue) variant")
            }
            let seconds = start.duration(to: .now).seconds - (split?.seconds ?? 0)
            let after = ObjectStores.size(system, path: path)
            var compacted = measurement(compactID, system, n: n, bytes: after, seconds: seconds,
                                        note: (system == .strata ? "compact()" : "VACUUM") + " took \(Format.time(seconds))" + (split.map { "; " + $0.note } ?? ""))
            compacted.extras += split?.extras ?? []
            rows.append((system, measurement(id, system, n: n, bytes: before, seconds: 0, note: nil), compacted))
        }
        for row in rows { bench.report(row.1, title: title) }
        for row in rows { bench.report(row.2, title: compactTitle) }
    }

    /// Where a compacted store's bytes go, per object: the records' own bytes (the object
    /// layer's encoding), the rest of the row pages (keys, slots, lengths, key digests: the
    /// engine's), and everything else (index pages, schema, header, commit record).
    static func engineSplit(path: String, n: Int) throws -> (extras: [(String, JSONValue)], note: String, seconds: Double) {
        let start = ContinuousClock.now
        let store = try Store(path: path, options: StoreOptions(readOnly: true))
        defer { store.close() }
        let info = try store.info()
        guard let courses = info.collections.first(where: { $0.name == "Course" }) else { throw BenchError("\(id): no Course collection") }
        var payload = 0
        try store.read { tx in try tx.forEachRecord(in: courses.id) { _, record in payload += record.count; return true } }
        let per = { (bytes: Int) -> Double in (Double(bytes) / Double(max(n, 1)) * 10).rounded() / 10 }
        let rowPages = courses.liveBytes, rest = info.fileSize - courses.liveBytes
        let extras: [(String, JSONValue)] = [("payload_bytes_per_object", .double(per(payload))),
                                             ("row_overhead_bytes_per_object", .double(per(rowPages - payload))),
                                             ("index_and_other_bytes_per_object", .double(per(rest)))]
        let note = String(format: "per object: record %.1f B (object layer) + row pages %.1f B + indexes and the rest %.1f B (engine)",
                          per(payload), per(rowPages - payload), per(rest))
        return (extras, note, start.duration(to: .now).seconds)
    }

    static func measurement(_ workload: String, _ system: System, n: Int, bytes: Int, seconds: Double, note: String?) -> Measurement {
        let perObject = Double(bytes) / Double(max(n, 1))
        var m = Measurement(workload: workload, system: system.rawValue, n: n, seconds: seconds, bytes: bytes)
        m.extras = [("bytes_per_record", .double(perObject.rounded())), ("score", .double(1 / max(perObject, 1e-9))),
                    ("shown", .string(String(format: "%.0f B/object", perObject) + " (\(Format.bytes(bytes)))"))]
        if let note { m["note"] = .string(note) }
        return m
    }
}
