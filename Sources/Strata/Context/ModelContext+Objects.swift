import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// Making objects from records: registered objects (what fetches return), and throwaway ones to
// evaluate a predicate or a sort that needs an object.

extension ModelContext {
    /// The registered object of a row, or a new one made from its record and registered.
    /// `loading`: the properties to decode (nil: all); the others load on first access.
    func object(_ row: RowID, view: RecordView, table: Table, handle: StoreHandle, loading: [Int]? = nil) throws -> AnyObject {
        // (Both lent: entities live as long as the process, and the context holds its maps.)
        try Unmanaged.passUnretained(table.entity)._withUnsafeGuaranteedRef { entity in
            try identityMapRef(entity)._withUnsafeGuaranteedRef { map in
                try object(row, view: view, entity: entity, handle: handle, loading: loading, map: map)
            }
        }
    }

    @inline(__always)
    private func object(_ row: RowID, view: RecordView, entity: Entity, handle: StoreHandle, loading: [Int]?, map: IdentityMap) throws -> AnyObject {
        if let existing = map.backing(row) { return existing.object }
        let object = entity.newInstance()
        // The backing's one reference moves to the object's keeper; it is lent from here on.
        let owned = Unmanaged.passRetained(ModelBacking(object: object, entity: entity, row: row, handle: handle, context: self))
        entity.attach(owned: owned, to: object)
        return try owned._withUnsafeGuaranteedRef { backing in
            try fill(object, row: row, view: view, entity: entity, handle: handle, loading: loading, map: map, backing: backing)
        }
    }

    @inline(__always)
    private func fill(_ object: AnyObject, row: RowID, view: RecordView, entity: Entity, handle: StoreHandle, loading: [Int]?,
                      map: IdentityMap, backing: ModelBacking) throws -> AnyObject {
        if let loading {
            for i in loading { try entity.properties[i].decode(try view.field(i), into: object, backing: backing) }
            let rest = Set(entity.properties.indices).subtracting(loading)
            // Unloaded properties hold no value (not their declaration's default), so that the
            // getter loads them.
            for i in rest { entity.properties[i].clear(object) }
            if !rest.isEmpty { backing.unloaded = rest }
        } else {
            try decodeAll(view, into: object, entity: entity, backing: backing)
        }
        if backing.hasExternalBlobs { try checkBlobFiles(backing, handle: handle) }
        if handle.custom != nil { backing.storeVersion = SnapshotRecords.storeVersion(of: view, propertyCount: entity.properties.count) ?? 0 }
        map.insert(backing)
        backing.identityMap = .passUnretained(map)
        return object
    }

    /// Every property of a record into a new object: an attribute stored in its field
    /// straight into its storage (`directDecode`). Field `i` is property `i` (discovery numbers
    /// them in order; reading `property.index` instead cost 5 instructions a field). (The entity
    /// holds the properties for the whole call: they are lent, not retained per property.)
    @inline(__always)
    private func decodeAll(_ view: RecordView, into object: AnyObject, entity: Entity, backing: ModelBacking) throws {
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        try entity.properties.withUnsafeBufferPointer { properties in
            for i in properties.indices {
                try Unmanaged.passUnretained(properties[i])._withUnsafeGuaranteedRef { property in
                    if property.directDecode != nil {
                        try property.directDecode?(try view.field(i), base.advanced(by: property.offset))
                    } else {
                        try property.decode(try view.field(i), into: object, backing: backing)
                    }
                }
            }
        }
    }

    /// External values load when read, and a getter cannot throw: a missing blob file is
    /// reported when the object is made, as damage rather than a trap later.
    private func checkBlobFiles(_ backing: ModelBacking, handle: StoreHandle) throws {
        try handle.storage.read { reader in
            for (index, blob) in backing.externalBlobs where blob != 0 {
                guard try reader.blobFileExists(BlobID(rawValue: blob)) else {
                    throw StrataError(.corruptRecord, "\(backing.entity.name) row \(backing.rowID): the file of its \(backing.entity.properties[index].name) value (blob \(blob)) is missing. The store is damaged; run `strata verify`.")
                }
            }
        }
    }

    /// An object made from a record to evaluate a predicate or a sort on it: its values and
    /// its row's identity (`persistentModelID`), never registered, tracked or observed.
    static func scratchObject(_ row: RowID, view: RecordView, entity: Entity, handle: StoreHandle?, loading: [Int]? = nil) throws -> AnyObject {
        let object = entity.newInstance()
        let backing = ModelBacking(object: object, entity: entity, identityOf: row, handle: handle)
        entity.attach(backing, to: object)
        guard let loading else {
            for p in entity.properties { try p.decode(try view.field(p.index), into: object, backing: backing) }
            return object
        }
        for i in loading { try entity.properties[i].decode(try view.field(i), into: object, backing: backing) }
        let rest = Set(entity.properties.indices).subtracting(loading)
        for i in rest { entity.properties[i].clear(object) }
        if !rest.isEmpty { backing.unloaded = rest }
        return object
    }

    /// The object of a related row: the registered one, or one loaded from the store.
    func relatedObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        if let registered = registeredObject(entity, row) { return registered }
        if let prefetched = prefetchedObject(entity, row) { return prefetched }
        guard let (handle, table) = container.location(of: entity) else { return nil }
        return try? handle.storage.read { reader in
            try reader.withRecord(row, in: table) { view in try self.object(row, view: view, table: table, handle: handle) }
        }
    }

    /// Re-reads an object's values from its store, telling its observers.
    func reload(_ object: AnyObject, backing: ModelBacking) throws {
        guard let (handle, table) = container.location(of: backing.entity) else { return }
        try handle.storage.read { reader in
            _ = try reader.withRecord(backing.rowID, in: table) { view in
                for p in backing.entity.properties { try p.decode(try view.field(p.index), into: object, backing: backing) }
                if handle.custom != nil {
                    backing.storeVersion = SnapshotRecords.storeVersion(of: view, propertyCount: backing.entity.properties.count) ?? 0
                }
            }
        }
        backing.unloaded = nil
        for p in backing.entity.properties { backing.notifyObservers(p.index) }
    }
}
