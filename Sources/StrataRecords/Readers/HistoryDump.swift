import Foundation
import StrataEngine

// The history as `strata history` prints it, read without the model classes: records decoded
// with `HistoryRecord`, tombstone values with the schema stored in the file.

/// A store's history read through the engine alone.
package struct HistoryDump {
    package let storeIdentifier: String?
    /// The largest pruned token (0: none).
    package let pruned: Int64
    private let schema: StoredModelSchema?
    private let tx: ReadTransaction

    package init(_ tx: ReadTransaction) throws {
        self.tx = tx
        storeIdentifier = try tx.metadata(HistoryRecord.storeIdentifierMetadata).map { String(decoding: $0, as: UTF8.self) }
        pruned = Int64(HistoryRecord.prunedToken(try tx.metadata(HistoryRecord.prunedMetadata)))
        schema = try StoredModelSchema(tx)
    }

    /// Calls `body` with each transaction after `since` (all with nil), in token order.
    package func forEach(after since: Int64?, _ body: (Int64, HistoryRecord) throws -> Bool) throws {
        guard let collection = tx.collection(named: HistoryRecord.collection) else { return }
        try tx.forEachRecord(in: collection, from: RowID(max(0, since ?? 0) + 1), reverse: false) { row, raw in
            try body(Int64(row), try HistoryRecord(decoding: raw))
        }
    }

    /// The transaction as one JSON object: token, store, timestamp, author, bundle and process
    /// identifiers, and its changes as runs (`kind`, `entity`, `firstRow`, `count`, an update's
    /// `attributes`, a delete's `tombstones`).
    package func json(_ token: Int64, _ record: HistoryRecord) -> JSONValue {
        var members: [(String, JSONValue)] = [("token", .integer(token))]
        if let storeIdentifier { members.append(("store", .string(storeIdentifier))) }
        members += [
            ("timestamp", .string(ISO8601DateFormatter().string(from: record.timestamp))),
            ("author", record.author.map { .string($0) } ?? .null),
            ("bundleIdentifier", .string(record.bundleIdentifier)),
            ("processIdentifier", .string(record.processIdentifier)),
            ("changes", .array(record.runs.map(json))),
        ]
        return .object(members)
    }

    private func json(_ run: HistoryRecord.Run) -> JSONValue {
        let kind = switch run.kind { case .insert: "insert" case .update: "update" case .delete: "delete" }
        var members: [(String, JSONValue)] = [("kind", .string(kind)), ("entity", .string(run.entity)),
                                              ("firstRow", .unsigned(run.firstRow)), ("count", .integer(Int64(run.count)))]
        if run.kind == .update { members.append(("attributes", .array(run.attributes.map { .string($0) }))) }
        if !run.tombstones.isEmpty {
            members.append(("tombstones", .array(run.tombstones.map { fields in .object(fields.map { ($0.name, value(run.entity, $0.name, $0.bytes)) }) })))
        }
        return .object(members)
    }

    /// A tombstone field as JSON, decoded with the stored schema (base64 when it has none).
    private func value(_ entity: String, _ name: String, _ bytes: [UInt8]) -> JSONValue {
        guard let attribute = schema?.entity(named: entity)?.attributes.first(where: { $0.name == name }),
              let decoded = try? bytes.withUnsafeBytes({ try attribute.decode($0, loadBlob: nil) }) else {
            return .string(Data(bytes).base64EncodedString())
        }
        return decoded
    }

    /// One line per change run, for people: `insert Trip rows 1-3`, `update Trip row 5: name`,
    /// `delete Trip row 7 {"title":"Lisbon"}`.
    package func lines(_ record: HistoryRecord) -> [String] {
        record.runs.map { run in
            let rows = run.count == 1 ? "row \(run.firstRow)" : "rows \(run.firstRow)-\(run.firstRow + RowID(run.count) - 1)"
            switch run.kind {
            case .insert: return "insert \(run.entity) \(rows)"
            case .update: return "update \(run.entity) \(rows)" + (run.attributes.isEmpty ? "" : ": " + run.attributes.joined(separator: ", "))
            case .delete:
                let stones = run.tombstones.map { fields in JSONValue.object(fields.map { ($0.name, value(run.entity, $0.name, $0.bytes)) }).serialized }
                return "delete \(run.entity) \(rows)" + (stones.isEmpty ? "" : " " + stones.joined(separator: " "))
            }
        }
    }
}
