import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// How one model (entity) is kept in a store: its collection and indexes, and how to read
/// records written with older layouts of the model.
///
/// A class, though nothing of it changes: the save and the fetch pass it around per object,
/// and a struct of this many references cost a retain and a release of each per copy.
final class Table: @unchecked Sendable {
    let entity: Entity
    /// Nil only in a read-only store that has never held this model.
    let collection: CollectionID?
    let uniqueIndexes: [IndexID]
    let indexes: [IndexID]
    /// For each property with a one-property index: the index and whether it is unique.
    let singleIndex: [Int: (id: IndexID, unique: Bool)]
    /// How to read records written with older layouts of the model (lightweight migration).
    let layouts: EntityLayouts
    /// The properties the index keys are made of, each once.
    let indexedProperties: [Int]

    init(entity: Entity, collection: CollectionID?, uniqueIndexes: [IndexID], indexes: [IndexID],
         singleIndex: [Int: (id: IndexID, unique: Bool)], layouts: EntityLayouts = .identity) {
        self.entity = entity
        self.collection = collection
        self.uniqueIndexes = uniqueIndexes
        self.indexes = indexes
        self.singleIndex = singleIndex
        self.layouts = layouts
        keyGroups = zip(entity.uniqueGroups, uniqueIndexes).map { ($0, $1) } + zip(entity.indexGroups, indexes).map { ($0, $1) }
        indexedProperties = Array(Set(keyGroups.map(\.group).joined())).sorted()
    }

    /// Each index key's properties and index, unique indexes first (the order of `indexKeys`).
    let keyGroups: [(group: [Int], id: IndexID)]

    var hasIndexes: Bool { !uniqueIndexes.isEmpty || !indexes.isEmpty }

    /// The index keys of an object's values.
    func indexKeys(for object: AnyObject) -> [IndexKey] {
        guard hasIndexes else { return [] }
        var keys: [IndexKey] = []
        keys.reserveCapacity(uniqueIndexes.count + indexes.count)
        for (group, id) in zip(entity.uniqueGroups, uniqueIndexes) { keys.append(IndexKey(id, entity.key(of: group, object: object))) }
        for (group, id) in zip(entity.indexGroups, indexes) { keys.append(IndexKey(id, entity.key(of: group, object: object))) }
        return keys
    }

    /// The index keys of a stored record, computed from its fields as `indexKeys(for:)`
    /// computes them from an object: the keys the row was saved with, which the storage needs
    /// to update or delete it.
    func indexKeys(of view: RecordView) throws -> [IndexKey] {
        var keys: [IndexKey] = []
        try indexKeys(of: view, into: &keys)
        return keys
    }

    /// `indexKeys(of:)` into `keys`, reusing its arrays: a deletion computes the keys of row
    /// after row, without allocating three arrays for each (Docs/Benchmarks.md, "Costs").
    func indexKeys(of view: RecordView, into keys: inout [IndexKey]) throws {
        if keys.count != keyGroups.count || !zip(keys, keyGroups).allSatisfy({ $0.index == $1.id }) {
            keys = keyGroups.map { IndexKey($0.id, []) }
        }
        for i in keyGroups.indices { try entity.key(of: keyGroups[i].group, view: view, into: &keys[i].key) }
    }

    /// True when two records (read as the current layout) hold the same bytes in every field
    /// an index key is made of: their index keys are then the same, as keys are computed from
    /// those bytes alone.
    func sameIndexedFields(_ a: RecordView, _ b: RecordView) throws -> Bool {
        for p in indexedProperties where !sameBytes(try a.field(p), try b.field(p)) { return false }
        return true
    }

    /// The keys row `row` was saved with, read from its stored record; [] when it has none.
    func storedIndexKeys(row: RowID, reader: any StorageReader) throws -> [IndexKey] {
        guard hasIndexes else { return [] }
        return try reader.withRecord(row, in: self) { try indexKeys(of: $0) } ?? []
    }
}

extension StorageReader {
    /// Calls `body` with a row's record of `table`, read as the current layout; nil if there
    /// is no such row.
    func withRecord<R>(_ row: RowID, in table: Table, _ body: (RecordView) throws -> R) throws -> R? {
        guard let collection = table.collection else { return nil }
        return try withRecord(row, in: collection) { try body(try RecordView($0, layouts: table.layouts)) }
    }
}

extension StorageBackend {
    /// The value of an external attribute kept in blob `blob`.
    func loadBlob(_ blob: UInt64, as access: AttributeAccess) throws -> Any {
        let id = BlobID(rawValue: blob)
        // A Data value is the blob's bytes: read into the Data itself (the engine maps the
        // blob file), with no zeroing and no copy. An optional one is its bytes after 0x01.
        if access.valueType == Data.self { return try read { try $0.blobData(id) } }
        if access.valueType == Data?.self {
            let data = try read { try $0.blobData(id) }
            guard data.first == 1 else { return try data.withUnsafeBytes { try access.fieldValue($0) } }
            // (A short Data may be held inline, where its bytes' address is not stable: copy it.)
            if data.count <= 64 { return Data?.some(Data(data.dropFirst())) as Any }
            return Data?.some(data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return Data() }
                return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base + 1), count: raw.count - 1,
                            deallocator: .custom { _, _ in withExtendedLifetime(data) {} })
            }) as Any
        }
        let bytes = try read { try $0.blob(id) }
        return try bytes.withUnsafeBytes { try access.fieldValue($0) }
    }
}
