import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// What a table does with its model's entity: index keys from an object's values or from a
// record's fields, and external values loaded. (The table itself is StrataRecords'.)

extension Table {
    convenience init(entity: Entity, collection: CollectionID?, uniqueIndexes: [IndexID], indexes: [IndexID],
                     singleIndex: SingleIndexes, layouts: EntityLayouts = .identity) {
        self.init(owner: entity, uniqueGroups: entity.uniqueGroups, indexGroups: entity.indexGroups, collection: collection,
                  uniqueIndexes: uniqueIndexes, indexes: indexes, singleIndex: singleIndex, layouts: layouts)
    }

    /// The model's entity (the only kind of owner a table has).
    @inline(__always)
    var entity: Entity { unsafeDowncast(owner, to: Entity.self) }

    /// The index keys of an object's values, unique indexes first, made in `keys`, whose
    /// arrays it reuses: a save computes the keys of object after object without allocating
    /// the list and an array per key for each (W1, W6; Docs/Benchmarks.md, "Costs").
    func indexKeys(for object: AnyObject, into keys: inout [IndexKey]) {
        if !hasShape(keys) { keys = emptyKeys() }
        // (The entity and the groups lent: the table holds them.)
        Unmanaged.passUnretained(entity)._withUnsafeGuaranteedRef { entity in
            keyGroups.withUnsafeBufferPointer { groups in
                for i in groups.indices { entity.key(of: groups[i], object: object, into: &keys[i].key) }
            }
        }
    }

    /// A key of each index, without bytes, for `indexKeys(for:into:)` to fill.
    private func emptyKeys() -> [IndexKey] {
        var keys: [IndexKey] = []
        keys.reserveCapacity(keyIndexes.count)
        for index in keyIndexes { keys.append(IndexKey(index, [])) }
        return keys
    }

    /// Whether `keys` holds a key of each of the table's indexes, in order.
    private func hasShape(_ keys: [IndexKey]) -> Bool {
        guard keys.count == keyIndexes.count else { return false }
        for i in keys.indices where keys[i].index != keyIndexes[i] { return false }
        return true
    }

    /// The index keys of a stored record, computed from its fields as `indexKeys(for:into:)`
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
        if !hasShape(keys) { keys = emptyKeys() }
        for i in keyGroups.indices { try entity.key(of: keyGroups[i], view: view, into: &keys[i].key) }
    }

    /// The keys row `row` was saved with, read from its stored record; [] when it has none.
    func storedIndexKeys(row: RowID, reader: any StorageReader) throws -> [IndexKey] {
        guard hasIndexes else { return [] }
        return try reader.withRecord(row, in: self) { try indexKeys(of: $0) } ?? []
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
