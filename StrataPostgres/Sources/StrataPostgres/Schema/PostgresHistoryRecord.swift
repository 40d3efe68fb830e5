import Foundation
import Strata

/// A save's history as `strata_history.record` keeps it (Docs/Postgres.md, "History and
/// observers across machines"): the changes in runs of one kind and model, each object named by
/// its `_id`, so that a save of 20,000 objects is a list of 20,000 numbers, written without
/// `JSONEncoder`:
///
/// ```json
/// {"v": 2, "timestamp": 786000000.5, "author": "importer", "bundle": "app", "process": "4242",
///  "runs": [{"kind": "insert", "model": "Trip", "ids": [1, 2, 3]},
///           {"kind": "update", "model": "Trip", "ids": [7], "attributes": ["name"]},
///           {"kind": "delete", "model": "Stop", "ids": [9], "tombstones": [{"place": {"string": "Alfama"}}]}]}
/// ```
///
/// `timestamp` is seconds since 2001 (as `Date` encodes), a tombstone is a property's
/// `SnapshotValue`s by name. A record naming an object by an identifier of another store is
/// kept as `DataStoreHistoryRecord` encodes itself (the first form), and read in either form.
struct PostgresHistoryRecord: Codable {
    var v: Int
    var timestamp: Double
    var author: String?
    var bundle: String
    var process: String
    var runs: [Run]

    struct Run: Codable {
        var kind: DataStoreHistoryRecord.Kind
        var model: String
        var ids: [Int64]
        var attributes: [String]?
        var tombstones: [[String: SnapshotValue]]?
    }

    /// The JSON text of `record`, or nil when an identifier in it is not `store`'s.
    static func json(_ record: DataStoreHistoryRecord, store: PostgresStore) throws -> String? {
        var out = "{\"v\":2,\"timestamp\":"
        out.reserveCapacity(128 + record.changes.count * 8)
        out += String(record.timestamp.timeIntervalSinceReferenceDate)
        out += ",\"author\":"
        if let author = record.author { appendString(author, to: &out) } else { out += "null" }
        out += ",\"bundle\":"
        appendString(record.bundleIdentifier, to: &out)
        out += ",\"process\":"
        appendString(record.processIdentifier, to: &out)
        out += ",\"runs\":["
        var i = 0
        let changes = record.changes
        while i < changes.count {
            // A run: changes of one kind, model and attribute list in a row.
            let first = changes[i]
            var end = i + 1
            while end < changes.count, changes[end].kind == first.kind,
                  changes[end].identifier.entityName == first.identifier.entityName, changes[end].attributes == first.attributes { end += 1 }
            if i > 0 { out += "," }
            out += "{\"kind\":\"\(first.kind.rawValue)\",\"model\":"
            appendString(first.identifier.entityName, to: &out)
            out += ",\"ids\":["
            for j in i..<end {
                guard let key = store.primaryKey(changes[j].identifier) else { return nil }
                if j > i { out += "," }
                out += String(key)
            }
            out += "]"
            if !first.attributes.isEmpty {
                out += ",\"attributes\":["
                for (k, name) in first.attributes.enumerated() {
                    if k > 0 { out += "," }
                    appendString(name, to: &out)
                }
                out += "]"
            }
            if changes[i..<end].contains(where: { !$0.tombstone.isEmpty }) {
                out += ",\"tombstones\":"
                out += String(decoding: try SnapshotValue.sortedKeysEncoder.encode(changes[i..<end].map(\.tombstone)), as: UTF8.self)
            }
            out += "}"
            i = end
        }
        out += "]}"
        return out
    }

    /// The record this form keeps, its objects named by `store`'s identifiers.
    func record(store: PostgresStore) throws -> DataStoreHistoryRecord {
        var changes: [DataStoreHistoryRecord.Change] = []
        changes.reserveCapacity(runs.reduce(0) { $0 + $1.ids.count })
        for run in runs {
            for (k, id) in run.ids.enumerated() {
                let tombstone = run.tombstones.flatMap { k < $0.count ? $0[k] : nil } ?? [:]
                changes.append(.init(kind: run.kind, identifier: try store.identifier(run.model, id), attributes: run.attributes ?? [], tombstone: tombstone))
            }
        }
        return DataStoreHistoryRecord(timestamp: Date(timeIntervalSinceReferenceDate: timestamp), author: author,
                                      bundleIdentifier: bundle, processIdentifier: process, changes: changes)
    }

    /// Reads a record in either form.
    static func decode(_ json: String, store: PostgresStore, decoder: JSONDecoder) throws -> DataStoreHistoryRecord {
        let data = Data(json.utf8)
        if let compact = try? decoder.decode(PostgresHistoryRecord.self, from: data), compact.v == 2 {
            return try compact.record(store: store)
        }
        return try decoder.decode(DataStoreHistoryRecord.self, from: data)
    }

    /// `value` as a JSON string, escaped as RFC 8259 requires.
    private static func appendString(_ value: String, to out: inout String) {
        out += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00"
                out += scalar.value < 0x10 ? "0" : ""
                out += String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension SnapshotValue {
    /// Tombstones' values as JSON with sorted keys (made once, for the rare run that has them).
    nonisolated(unsafe) static let sortedKeysEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}
