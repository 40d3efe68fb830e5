import Foundation
import StrataEngine

/// What one save changes in one store, gathered as the save writes, then written as one
/// history record in the same transaction (`HistoryRecord`), with the oldest records past the
/// store's retention pruned in it too.
final class HistoryRecorder {
    private(set) var runs: [HistoryRecord.Run] = []
    let retention: HistoryRetention

    init(retention: HistoryRetention) { self.retention = retention }

    var isEmpty: Bool { runs.isEmpty }

    func insert(_ entity: Entity, _ row: RowID) { append(.insert, entity.name, row, attributes: []) }

    func update(_ entity: Entity, _ row: RowID, attributes: [String]) { append(.update, entity.name, row, attributes: attributes) }

    /// A deleted row, with its preserved fields (empty: it joins the run before it).
    func delete(_ entity: Entity, _ row: RowID, tombstone: [(name: String, bytes: [UInt8])]) {
        if tombstone.isEmpty { return append(.delete, entity.name, row, attributes: []) }
        if var last = runs.last, last.kind == .delete, last.entity == entity.name, last.firstRow + RowID(last.count) == row,
           last.tombstones.count == last.count {
            last.count += 1
            last.tombstones.append(tombstone)
            runs[runs.count - 1] = last
            return
        }
        runs.append(HistoryRecord.Run(kind: .delete, entity: entity.name, firstRow: row, count: 1, attributes: [], tombstones: [tombstone]))
    }

    private func append(_ kind: HistoryRecord.Kind, _ entity: String, _ row: RowID, attributes: [String]) {
        if var last = runs.last, last.kind == kind, last.entity == entity, last.firstRow + RowID(last.count) == row,
           last.tombstones.isEmpty, last.attributes == attributes {
            last.count += 1
            runs[runs.count - 1] = last
            return
        }
        runs.append(HistoryRecord.Run(kind: kind, entity: entity, firstRow: row, count: 1, attributes: attributes, tombstones: []))
    }

    /// Writes the transaction's record (nothing when the save changed nothing here) and prunes
    /// what the retention no longer keeps. Returns the token.
    func write(to writer: any StorageWriter, author: String?) throws -> Int64? {
        guard !runs.isEmpty else { return nil }
        let collection = try writer.collection(named: HistoryRecord.collection) ?? writer.createCollection(named: HistoryRecord.collection)
        let token = try writer.nextRowID(in: collection)
        let record = HistoryRecord(timestamp: Date(), author: author, bundleIdentifier: ProcessIdentity.bundle,
                                   processIdentifier: ProcessIdentity.pid, runs: runs)
        try record.encode().withUnsafeBytes { try writer.put($0, row: token, in: collection, indexKeys: [], previousKeys: []) }
        if let limit = retention.limit { try prune(collection, keeping: limit, newest: token, writer: writer) }
        return Int64(token)
    }

    /// Deletes the records older than the last `limit`, once they are a sixteenth of the limit
    /// past it (so most saves prune nothing), and moves the pruned watermark.
    private func prune(_ collection: CollectionID, keeping limit: Int, newest: RowID, writer: any StorageWriter) throws {
        guard newest > RowID(limit) else { return }
        let pruned = try HistoryStore.pruned(writer)
        let keepFrom = newest - RowID(limit) + 1
        guard keepFrom > pruned + 1 + RowID(max(1, limit / 16)) else { return }
        try HistoryStore.delete(rowsBelow: keepFrom, from: pruned + 1, collection: collection, writer: writer)
    }
}

/// The saving process as history records name it.
enum ProcessIdentity {
    static let bundle: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    static let pid: String = String(ProcessInfo.processInfo.processIdentifier)
}

/// Reading and deleting a store's history records.
enum HistoryStore {
    /// The largest pruned token (0: none).
    static func pruned(_ reader: any StorageReader) throws -> RowID {
        guard let bytes = try reader.metadata(HistoryRecord.prunedMetadata), bytes.count == 8 else { return 0 }
        return bytes.withUnsafeBytes { RowID(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    static func setPruned(_ token: RowID, _ writer: any StorageWriter) throws {
        try writer.setMetadata(HistoryRecord.prunedMetadata, withUnsafeBytes(of: token.littleEndian) { Array($0) })
    }

    /// Deletes every record from `start` below `end` and raises the watermark to `end - 1`.
    static func delete(rowsBelow end: RowID, from start: RowID, collection: CollectionID, writer: any StorageWriter) throws {
        var rows: [RowID] = []
        try writer.forEachRecord(in: collection, from: start) { row, _ in
            guard row < end else { return false }
            rows.append(row)
            return true
        }
        for row in rows { try writer.delete(row, in: collection, indexKeys: []) }
        if end - 1 > (try pruned(writer)) { try setPruned(end - 1, writer) }
    }

    /// Calls `body` with each record from `start` on (decoded), in token order, until it returns false.
    static func forEach(_ reader: any StorageReader, from start: RowID, _ body: (RowID, HistoryRecord) throws -> Bool) throws {
        guard let collection = reader.collection(named: HistoryRecord.collection) else { return }
        try reader.forEachRecord(in: collection, from: start) { row, raw in try body(row, try HistoryRecord(decoding: raw)) }
    }
}

extension HistoryRecorder {
    /// The preserved fields of a row about to be deleted, as stored.
    static func tombstone(of row: RowID, _ preserved: [PersistedProperty], table: Table, reader: any StorageReader) throws -> [(name: String, bytes: [UInt8])] {
        try reader.withRecord(row, in: table) { view in try preserved.map { ($0.name, Array(try view.field($0.index))) } } ?? []
    }
}

extension Entity {
    /// The attributes whose values a deletion keeps in its history tombstone
    /// (`.preserveValueOnDeletion`; external values are not kept).
    var preservedOnDeletion: [PersistedProperty] {
        properties.filter { $0 is AttributeProperty && !$0.isExternal && $0.declaration.has(.preserveValueOnDeletion) }
    }
}
