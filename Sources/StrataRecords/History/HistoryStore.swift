import Foundation
import StrataEngine

/// Reading and deleting a store's history records.
package enum HistoryStore {
    /// The largest pruned token (0: none).
    package static func pruned(_ reader: any StorageReader) throws -> RowID {
        HistoryRecord.prunedToken(try reader.metadata(HistoryRecord.prunedMetadata))
    }

    package static func setPruned(_ token: RowID, _ writer: any StorageWriter) throws {
        try writer.setMetadata(HistoryRecord.prunedMetadata, withUnsafeBytes(of: token.littleEndian) { Array($0) })
    }

    /// Deletes every record from `start` below `end` and raises the watermark to `end - 1`.
    package static func delete(rowsBelow end: RowID, from start: RowID, collection: CollectionID, writer: any StorageWriter) throws {
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
    package static func forEach(_ reader: any StorageReader, from start: RowID, _ body: (RowID, HistoryRecord) throws -> Bool) throws {
        guard let collection = reader.collection(named: HistoryRecord.collection) else { return }
        try reader.forEachRecord(in: collection, from: start) { row, raw in try body(row, try HistoryRecord(decoding: raw)) }
    }
}
