import Foundation
import Strata

/// A save's history as `strata_history.record` keeps it (Docs/Postgres.md, "History and
/// observers across machines"): the changes in runs of one kind and model, each object named by
/// its `_id`, so that a save of 20,000 objects is one string of 20,000 numbers, written without
/// `JSONEncoder`:
///
/// ```json
/// {"v": 3, "timestamp": 786000000.5, "author": "importer", "bundle": "app", "process": "4242",
///  "runs": [{"kind": "insert", "model": "Trip", "ids": "1,2,3"},
///           {"kind": "update", "model": "Trip", "ids": "7", "attributes": ["name"]},
///           {"kind": "delete", "model": "Stop", "ids": "9", "tombstones": [{"place": {"string": "Alfama"}}]}]}
/// ```
///
/// `ids` is one string, not an array of numbers (form 2, still read): the server stores a
/// string as it is, where it made each number of an array a `numeric` (twice the bytes, and
/// about 1 ms more for a batch delete of 5,107 rows, Docs/Postgres.md, "Where the time goes").
/// `timestamp` is seconds since 2001 (as `Date` encodes), a tombstone is a property's
/// `SnapshotValue`s by name. A record naming an object by an identifier of another store is
/// kept as `DataStoreHistoryRecord` encodes itself (the first form), and read in any form.
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

        private enum CodingKeys: String, CodingKey { case kind, model, ids, attributes, tombstones }

        init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            kind = try c.decode(DataStoreHistoryRecord.Kind.self, forKey: .kind)
            model = try c.decode(String.self, forKey: .model)
            attributes = try c.decodeIfPresent([String].self, forKey: .attributes)
            tombstones = try c.decodeIfPresent([[String: SnapshotValue]].self, forKey: .tombstones)
            if let list = try? c.decode(String.self, forKey: .ids) {
                ids = try Self.ids(list, codingPath: c.codingPath + [CodingKeys.ids])
            } else {
                ids = try c.decode([Int64].self, forKey: .ids)
            }
        }

        /// The ids of form 3's string, decimal numbers separated by commas.
        static func ids(_ list: String, codingPath: [CodingKey]) throws -> [Int64] {
            var ids: [Int64] = []
            guard !list.isEmpty else { return ids }
            ids.reserveCapacity(list.utf8.count / 6)
            for part in list.utf8.split(separator: UInt8(ascii: ",")) {
                guard let id = Int64(Substring(part)) else {
                    throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "\"\(Substring(part))\" in a history record's ids is not an identifier"))
                }
                ids.append(id)
            }
            return ids
        }
    }

    /// The JSON text of `record`, or nil when an identifier in it is not `store`'s.
    static func json(_ record: DataStoreHistoryRecord, store: PostgresStore) throws -> String? {
        var out = "{\"v\":3,\"timestamp\":"
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
            out += ",\"ids\":\""
            for j in i..<end {
                guard let key = store.primaryKey(changes[j].identifier) else { return nil }
                if j > i { out += "," }
                out += String(key)
            }
            out += "\""
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

    /// Reads a record in any of its forms (3, 2, or `DataStoreHistoryRecord`'s own); an error
    /// says what is wrong with the form the record looks like.
    static func decode(_ json: String, store: PostgresStore, decoder: JSONDecoder) throws -> DataStoreHistoryRecord {
        let data = Data(json.utf8)
        let compactError: Error
        do {
            let compact = try decoder.decode(PostgresHistoryRecord.self, from: data)
            if compact.v == 2 || compact.v == 3 { return try compact.record(store: store) }
            compactError = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a history record of form \(compact.v), which this version does not know"))
        } catch { compactError = error }
        do { return try decoder.decode(DataStoreHistoryRecord.self, from: data) } catch {
            // What went wrong with the form it looks like.
            throw json.contains("\"runs\"") ? compactError : error
        }
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
    static let sortedKeysEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}
