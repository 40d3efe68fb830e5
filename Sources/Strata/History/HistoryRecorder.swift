import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// What one save changes in one store, gathered as the save writes, then written as one
/// history record in the same transaction (`HistoryRecord`), with the oldest records past the
/// store's retention pruned in it too.
final class HistoryRecorder {
    /// The runs closed so far; the open run is kept in the fields below, so that adding a row
    /// to it is a few comparisons (a cascade over 100,000 rows adds 100,000).
    @exclusivity(unchecked) private var closed: [HistoryRecord.Run] = []
    @exclusivity(unchecked) private var openKind: HistoryRecord.Kind?
    @exclusivity(unchecked) private var openEntity: Entity?
    @exclusivity(unchecked) private var openFirst: RowID = 0
    @exclusivity(unchecked) private var openEnd: RowID = 0
    @exclusivity(unchecked) private var openAttributes: [String] = []
    /// The open update run's changed properties, by index (`openAttributes` are their names).
    @exclusivity(unchecked) private var openChanged = PropertyBits()
    @exclusivity(unchecked) private var openTombstones: [[(name: String, bytes: [UInt8])]] = []
    let retention: HistoryRetention

    init(retention: HistoryRetention) { self.retention = retention }

    /// Every run, the open one last.
    var runs: [HistoryRecord.Run] {
        guard let openKind, let openEntity else { return closed }
        return closed + [HistoryRecord.Run(kind: openKind, entity: openEntity.name, firstRow: openFirst, count: Int(openEnd - openFirst),
                                           attributes: openAttributes, tombstones: openTombstones)]
    }

    @inline(__always)
    private func extends(_ kind: HistoryRecord.Kind, _ entity: Entity, _ row: RowID) -> Bool {
        openKind == kind && openEnd == row && openEntity === entity
    }

    func insert(_ entity: Entity, _ row: RowID) {
        if extends(.insert, entity, row) && openTombstones.isEmpty { return openEnd += 1 }
        open(.insert, entity, row, attributes: [], tombstone: nil)
    }

    /// An updated row, and the indexes of the properties it changed. (Names are made only for
    /// a run that opens: an upsert made a list of names per row, W6.)
    func update(_ entity: Entity, _ row: RowID, changed: PropertyBits) {
        if extends(.update, entity, row) && openChanged == changed { return openEnd += 1 }
        open(.update, entity, row, attributes: changed.indexes.map { entity.properties[$0].name }, tombstone: nil)
        openChanged = changed
    }

    /// Room for `rows` more rows' runs (each may be a run of its own): a large deletion's runs,
    /// grown by doubling, were copied about twice over.
    func reserveRuns(_ rows: Int) {
        closed.reserveCapacity(closed.count + rows)
    }

    /// A deleted row, with its preserved fields (empty when the model preserves none).
    func delete(_ entity: Entity, _ row: RowID, tombstone: [(name: String, bytes: [UInt8])]) {
        if extends(.delete, entity, row) && openTombstones.isEmpty == tombstone.isEmpty {
            if !tombstone.isEmpty { openTombstones.append(tombstone) }
            return openEnd += 1
        }
        open(.delete, entity, row, attributes: [], tombstone: tombstone.isEmpty ? nil : tombstone)
    }

    private func open(_ kind: HistoryRecord.Kind, _ entity: Entity, _ row: RowID, attributes: [String], tombstone: [(name: String, bytes: [UInt8])]?) {
        if let openKind, let openEntity {
            closed.append(HistoryRecord.Run(kind: openKind, entity: openEntity.name, firstRow: openFirst, count: Int(openEnd - openFirst),
                                            attributes: openAttributes, tombstones: openTombstones))
        }
        openKind = kind
        openEntity = entity
        openFirst = row
        openEnd = row + 1
        openAttributes = attributes
        openTombstones = tombstone.map { [$0] } ?? []
    }

    /// Writes the transaction's record (nothing when the save changed nothing here) and prunes
    /// what the retention no longer keeps. Returns the token (a custom store's is its own, given
    /// when it commits: then the row the record was put at).
    func write(to writer: any StorageWriter, author: String?) throws -> Int64? {
        let runs = Self.oneChangePerRow(self.runs)
        guard !runs.isEmpty else { return nil }
        let collection = try writer.collection(named: HistoryRecord.collection) ?? writer.createCollection(named: HistoryRecord.collection)
        // (The retention's pruning counts from the token: then it must be the store's newest.)
        let token = retention.limit == nil ? try writer.rowForNewHistoryRecord(in: collection) : try writer.nextRowID(in: collection)
        let record = HistoryRecord(timestamp: Date(), author: author, bundleIdentifier: ProcessIdentity.bundle,
                                   processIdentifier: ProcessIdentity.pid, runs: runs)
        try record.encode().withUnsafeBytes { try writer.put($0, row: token, in: collection, indexKeys: [], previousKeys: []) }
        if let limit = retention.limit { try prune(collection, keeping: limit, newest: token, writer: writer) }
        return Int64(token)
    }

    /// The runs with each row of an entity once, as SwiftData records one change per object in
    /// a transaction: a save that upserts onto one row twice (two new objects with the same
    /// unique value, the later winning) records it twice as it writes. An insert and later
    /// updates of a row are its insert; updates are one update of every attribute they name.
    /// (Only updates can repeat a row: each row is inserted or deleted once in a save.)
    static func oneChangePerRow(_ runs: [HistoryRecord.Run]) -> [HistoryRecord.Run] {
        guard runs.count > 1, runs.contains(where: { $0.kind == .update }) else { return runs }
        // Rows repeat only if two runs of one entity overlap: sort their ranges to see.
        var ranges = runs.indices.map { (entity: runs[$0].entity, first: runs[$0].firstRow, end: runs[$0].firstRow + RowID(runs[$0].count)) }
        ranges.sort { $0.entity != $1.entity ? $0.entity < $1.entity : $0.first < $1.first }
        guard zip(ranges, ranges.dropFirst()).contains(where: { $0.entity == $1.entity && $1.first < $0.end }) else { return runs }
        // Each row's change, in the order rows were first recorded.
        struct Change { var kind: HistoryRecord.Kind; var attributes: [String]; var tombstone: [(name: String, bytes: [UInt8])]? }
        struct Key: Hashable { let entity: String; let row: RowID }
        var order: [Key] = []
        var changes: [Key: Change] = [:]
        for run in runs {
            for i in 0..<run.count {
                let key = Key(entity: run.entity, row: run.firstRow + RowID(i))
                let tombstone = run.tombstones.isEmpty ? nil : run.tombstones[i]
                guard var change = changes[key] else {
                    order.append(key)
                    changes[key] = Change(kind: run.kind, attributes: run.attributes, tombstone: tombstone)
                    continue
                }
                switch (change.kind, run.kind) {
                case (.update, .update):
                    change.attributes += run.attributes.filter { !change.attributes.contains($0) }
                case (_, .delete):
                    change = Change(kind: .delete, attributes: [], tombstone: tombstone)
                default:
                    break   // an insert stays the insert; an update after it changes nothing more
                }
                changes[key] = change
            }
        }
        var merged: [HistoryRecord.Run] = []
        for key in order {
            guard let change = changes[key] else { continue }
            if var last = merged.last, last.kind == change.kind, last.entity == key.entity, last.firstRow + RowID(last.count) == key.row,
               last.attributes == change.attributes, last.tombstones.isEmpty == (change.tombstone == nil) {
                last.count += 1
                if let tombstone = change.tombstone { last.tombstones.append(tombstone) }
                merged[merged.count - 1] = last
            } else {
                merged.append(HistoryRecord.Run(kind: change.kind, entity: key.entity, firstRow: key.row, count: 1,
                                                attributes: change.attributes, tombstones: change.tombstone.map { [$0] } ?? []))
            }
        }
        return merged
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

extension HistoryRecorder {
    /// The preserved fields of a row about to be deleted, as stored (read where the deletion
    /// removes it).
    static func tombstone(_ preserved: [PersistedProperty], view: RecordView) throws -> [(name: String, bytes: [UInt8])] {
        try preserved.map { ($0.name, Array(try view.field($0.index))) }
    }
}

extension Entity {
    /// The attributes whose values a deletion keeps in its history tombstone
    /// (`.preserveValueOnDeletion`; external values are not kept).
    var preservedOnDeletion: [PersistedProperty] {
        properties.filter { $0 is AttributeProperty && !$0.isExternal && $0.declaration.has(.preserveValueOnDeletion) }
    }
}
