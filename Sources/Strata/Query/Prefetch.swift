import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// `relationshipKeyPathsForPrefetching`: the related rows of a whole result are read in one pass
// (sorted by row, in one snapshot) and kept as records in the context's row cache, so that
// reading the relationships afterwards makes the objects without reading the store again (no
// N+1 reads). The cache holds bytes, not objects, so it keeps no object alive; an entry goes
// when its object is made, and the whole cache with the next save or rollback.

extension ModelContext {
    /// Loads the related rows of `objects` through the relationships `keyPaths` name (other key
    /// paths are ignored, as SwiftData ignores them).
    func prefetch<T: PersistentModel>(_ keyPaths: [AnyKeyPath], of objects: [T]) throws {
        var byEntity: [ObjectIdentifier: [T]] = [:]
        for object in objects {
            guard let backing = backingOf(object) else { continue }
            byEntity[ObjectIdentifier(backing.entity), default: []].append(object)
        }
        for group in byEntity.values {
            guard let entity = group.first.flatMap({ backingOf($0)?.entity }) else { continue }
            for keyPath in keyPaths {
                guard let relationship = entity.property(for: keyPath) as? RelationshipProperty else { continue }
                try prefetch(relationship, of: group)
            }
        }
    }

    private func prefetch(_ relationship: RelationshipProperty, of objects: [AnyObject]) throws {
        let target = relationship.targetEntity
        guard let (handle, table) = container.location(of: target), let collection = table.collection else { return }
        var rows = Set<RowID>()
        for object in objects {
            for row in relationship.rows(of: object) where registeredObject(target, row) == nil && rowCache[ObjectIdentifier(target)]?[row] == nil {
                rows.insert(row)
            }
        }
        guard !rows.isEmpty else { return }
        try handle.storage.read { reader in
            for row in rows.sorted() {
                if let record = try reader.withRecord(row, in: collection, { Array($0) }) {
                    rowCache[ObjectIdentifier(target), default: [:]][row] = record
                }
            }
        }
    }

    /// The object of a prefetched row, made from its cached record (which then goes).
    func prefetchedObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        guard let record = rowCache[ObjectIdentifier(entity)]?.removeValue(forKey: row),
              let (handle, table) = container.location(of: entity) else { return nil }
        return try? record.withUnsafeBytes { raw in
            try object(row, view: try RecordView(raw, layouts: table.layouts), table: table, handle: handle)
        }
    }
}
