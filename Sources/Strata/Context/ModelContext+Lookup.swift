import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// The object with this identifier: the registered one, or one loaded from the store.
    /// Same as SwiftData's `model(for:)`, which also hands out an object for an identifier it
    /// cannot find; reading such an object's properties then stops the program.
    ///
    /// An identifier naming a model this container's schema does not have (one decoded from
    /// elsewhere) gives an object of no model of the schema: casting it to a model gives nil.
    /// `existingModel(for:)` answers nil for both cases instead.
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        if let found = try? existingModel(for: persistentModelID) { return found }
        guard let (handle, table) = container.location(ofEntityNamed: persistentModelID.entityName),
              let model = table.entity.newInstance() as? any PersistentModel else {
            return UndiscoverableModel()
        }
        for p in table.entity.properties { p.clear(model) }
        let backing = ModelBacking(object: model, entity: table.entity, row: handle.row(for: persistentModelID, table.entity) ?? 0, handle: handle, context: self)
        table.entity.attach(backing, to: model)
        return model
    }

    /// Strata extra: the object with this identifier, or nil if the store has no such object.
    public func existingModel(for persistentModelID: PersistentIdentifier) throws -> (any PersistentModel)? {
        guard let (handle, table) = container.location(ofEntityNamed: persistentModelID.entityName),
              let row = handle.row(for: persistentModelID, table.entity) else { return nil }
        if let registered = registeredObject(table.entity, row) { return registered as? any PersistentModel }
        do {
            return try handle.storage.read { reader in
                try reader.withRecord(row, in: table) { try self.object(row, view: $0, table: table, handle: handle) } as? any PersistentModel
            }
        } catch { throw StrataError.store(error, while: "load \(persistentModelID)") }
    }

    /// The object with this identifier if this context has it registered. Same as SwiftData.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        guard let (handle, table) = container.location(ofEntityNamed: persistentModelID.entityName),
              let row = handle.row(for: persistentModelID, table.entity) else { return nil }
        return registeredObject(table.entity, row) as? T
    }
}
