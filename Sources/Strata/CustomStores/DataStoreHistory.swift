import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// Strata-only: a custom store that keeps Strata's history of the saves made through it
/// (`fetchHistory`, `historyChanges()`, `HistoryObserver`), written in the save's own
/// transaction, with tokens in commit order. SwiftData's `HistoryProviding` leaves a store to
/// make its own transaction values; this one hands the store plain records to keep, and Strata
/// makes SwiftData's `DefaultHistoryTransaction` values from them.
public protocol HistoryRecordingDataStore: DataStore {
    /// Saves the request and records `history` in the same transaction (its identifiers of new
    /// objects remapped, `DataStoreHistoryRecord.remapped(_:)`), with a token above every token
    /// committed before it.
    func save(_ request: DataStoreSaveChangesRequest<Self.Snapshot>, history: DataStoreHistoryRecord) throws -> DataStoreSaveChangesResult<Self.Snapshot>
    /// The records with a token above `token`, in token order.
    func historyRecords(after token: Int64) throws -> [(token: Int64, record: DataStoreHistoryRecord)]
    /// Deletes the records with these tokens.
    func deleteHistoryRecords(_ tokens: [Int64]) throws
    /// The newest token the store ever gave (0 when none), its record deleted or not: a token
    /// is never given twice.
    func newestHistoryToken() throws -> Int64
    /// The oldest record's token (nil when there is none). Tokens below it, and every token
    /// when there is none, have expired: history after them was deleted. (Default: the first of
    /// `historyRecords(after: 0)`.)
    func oldestHistoryToken() throws -> Int64?
}

extension HistoryRecordingDataStore {
    public func oldestHistoryToken() throws -> Int64? { try historyRecords(after: 0).first?.token }
}

/// Strata-only: one save's history as a custom store keeps it: who saved, when, and each
/// object's change (one per object).
public struct DataStoreHistoryRecord: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable { case insert, update, delete }

    public struct Change: Codable, Sendable, Hashable {
        public var kind: Kind
        public var identifier: PersistentIdentifier
        /// The attributes an update changed.
        public var attributes: [String]
        /// A deletion's `.preserveValueOnDeletion` values.
        public var tombstone: [String: SnapshotValue]

        public init(kind: Kind, identifier: PersistentIdentifier, attributes: [String] = [], tombstone: [String: SnapshotValue] = [:]) {
            self.kind = kind
            self.identifier = identifier
            self.attributes = attributes
            self.tombstone = tombstone
        }
    }

    public var timestamp: Date
    public var author: String?
    public var bundleIdentifier: String
    public var processIdentifier: String
    public var changes: [Change]

    public init(timestamp: Date, author: String?, bundleIdentifier: String, processIdentifier: String, changes: [Change]) {
        self.timestamp = timestamp
        self.author = author
        self.bundleIdentifier = bundleIdentifier
        self.processIdentifier = processIdentifier
        self.changes = changes
    }

    /// The record with the temporary identifiers of new objects replaced by their permanent ones.
    public func remapped(_ remap: [PersistentIdentifier: PersistentIdentifier]) -> DataStoreHistoryRecord {
        var copy = self
        for i in copy.changes.indices { copy.changes[i].identifier = remap[copy.changes[i].identifier] ?? copy.changes[i].identifier }
        return copy
    }
}

extension DataStoreHistoryRecord {
    /// A history record of the context's (rows of this process) as a store keeps it (identifiers).
    init(_ record: HistoryRecord, bridge: DataStoreStorage) throws {
        var changes: [Change] = []
        for run in record.runs {
            guard let entity = bridge.entity(named: run.entity) else { continue }
            let kind: Kind = switch run.kind {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
            for i in 0..<run.count {
                var tombstone: [String: SnapshotValue] = [:]
                if i < run.tombstones.count {
                    for field in run.tombstones[i] {
                        guard let index = entity.propertyIndex[field.name], let attribute = entity.properties[index] as? AttributeProperty else { continue }
                        tombstone[field.name] = try field.bytes.withUnsafeBytes { try attribute.access.snapshotOfField($0) }
                    }
                }
                changes.append(Change(kind: kind, identifier: bridge.identifier(entity, run.firstRow + RowID(i)), attributes: run.attributes, tombstone: tombstone))
            }
        }
        self.init(timestamp: record.timestamp, author: record.author, bundleIdentifier: record.bundleIdentifier,
                  processIdentifier: record.processIdentifier, changes: changes)
    }

    /// The record as the context reads history: rows of this process (one run a change).
    func historyRecord(bridge: DataStoreStorage) throws -> HistoryRecord {
        var runs: [HistoryRecord.Run] = []
        for change in changes {
            guard let entity = bridge.entity(named: change.identifier.entityName), let row = bridge.row(for: change.identifier, entity) else { continue }
            let kind: HistoryRecord.Kind = switch change.kind {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
            var fields: [(name: String, bytes: [UInt8])] = []
            for (name, value) in change.tombstone.sorted(by: { $0.key < $1.key }) {
                guard let index = entity.propertyIndex[name], let attribute = entity.properties[index] as? AttributeProperty else { continue }
                var bytes: [UInt8] = []
                try attribute.access.fieldOfSnapshot(value, &bytes)
                fields.append((name, bytes))
            }
            runs.append(HistoryRecord.Run(kind: kind, entity: entity.name, firstRow: row, count: 1, attributes: change.attributes,
                                          tombstones: kind == .delete && !fields.isEmpty ? [fields] : []))
        }
        return HistoryRecord(timestamp: timestamp, author: author, bundleIdentifier: bundleIdentifier, processIdentifier: processIdentifier, runs: runs)
    }
}
