import Foundation
import StrataEngine

/// Where objects are inserted, changed, deleted, fetched and saved. Same as SwiftData's
/// `ModelContext`: not `Sendable`; use one per thread (or actor), all from one container.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Trip(name: "Lisbon", startDate: .now))
/// try context.save()
/// let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
/// ```
///
/// Identity: one context never holds two objects for the same stored row. The context keeps
/// strong references only to objects with unsaved changes; others stay registered while
/// something else holds them. An object without unsaved changes keeps its context (and
/// container) alive, as in SwiftData, where a fetched object's `modelContext` is never nil:
/// `try ModelContext(container).fetch(d).first?.stops` reads its relationships.
public final class ModelContext {
    private let strongContainer: ModelContainer?
    private unowned let unownedContainer: ModelContainer

    /// The container this context belongs to.
    public var container: ModelContainer { unownedContainer }

    /// Whether the context saves by itself. On Linux there is no UI run loop to save at the
    /// end of each event, so with `autosaveEnabled` Strata saves:
    /// - for the main context (where it is on by default, as in SwiftData): on the main actor's
    ///   next turn after a change, i.e. once the code that made the change has returned;
    /// - for any context: when `processPendingChanges()` is called, and when the unsaved
    ///   changes reach `autosaveThreshold`.
    /// Differs from SwiftData in the triggers only; a failed autosave leaves the changes pending.
    public var autosaveEnabled = false
    /// True for `ModelContainer.mainContext`.
    var isMainContext = false
    private var autosaveScheduled = false

    struct RowKey: Hashable {
        let entity: ObjectIdentifier
        let row: RowID
    }

    struct Registration {
        unowned(unsafe) let backing: ModelBacking
        let object: Unmanaged<AnyObject>
    }

    var registered: [RowKey: Registration] = [:]
    var inserted = OrderedObjects()
    var changed = OrderedObjects()
    var deleted = OrderedObjects()
    /// During a save: how to undo what delete rules and upserts changed, if the save fails.
    var ruleUndo: [() -> Void] = []
    /// During a save: the blobs written for external values, applied to the objects once it commits.
    var externalWrites: [(object: AnyObject, property: AnyProperty, blob: UInt64)] = []
    /// During a save: the row each upserted insert moved to, by entity (for relationship fields).
    var rowRemap: [ObjectIdentifier: [RowID: RowID]] = [:]
    /// Rows selected by `delete(model:where:)` that were not registered as objects.
    var batchDeletes: [ObjectIdentifier: Set<RowID>] = [:]

    /// Makes a context for `container`. Same as SwiftData's `ModelContext(_:)`.
    public init(_ container: ModelContainer) {
        strongContainer = container
        unownedContainer = container
    }

    /// The main context does not keep its container alive (the container keeps it).
    init(unownedContainer container: ModelContainer) {
        strongContainer = nil
        unownedContainer = container
    }

    deinit {
        for registration in registered.values { registration.backing.context = nil }
    }

    // MARK: Registration

    func key(_ entity: Entity, _ row: RowID) -> RowKey { RowKey(entity: ObjectIdentifier(entity), row: row) }

    func register(_ object: AnyObject, _ backing: ModelBacking) {
        guard let entity = backing.entity else { return }
        registered[key(entity, backing.rowID)] = Registration(backing: backing, object: .passUnretained(object))
    }

    func unregister(_ backing: ModelBacking) {
        guard let entity = backing.entity else { return }
        let k = key(entity, backing.rowID)
        if let r = registered[k], r.backing === backing { registered.removeValue(forKey: k) }
    }

    /// An object went away (nothing held it): forget it.
    func objectWentAway(_ backing: ModelBacking) {
        unregister(backing)
    }

    func objectDidChange(_ object: AnyObject, _ backing: ModelBacking) {
        changed.append(object)
        if autosaveEnabled { autosaveIfNeeded() }
    }

    func registeredObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        registered[key(entity, row)]?.object.takeUnretainedValue()
    }

    /// Attaches a backing to every property of `object`.
    func attach(_ object: AnyObject, entity: Entity, backing: ModelBacking?) {
        backing?.object = object
        for p in entity.properties { p.setBacking(backing, of: object) }
    }

    // MARK: External storage

    /// Reads and decodes the blob of an `.externalStorage` value.
    static func loadExternal<Value>(_ blob: UInt64, from handle: StoreHandle) -> Value? {
        do {
            // A Data value is the blob's bytes: read into the Data itself, with no copy.
            if Value.self == Data.self { return try handle.store.read { try $0.blobData(BlobID(rawValue: blob)) } as? Value }
            let bytes = try handle.store.read { try $0.blob(BlobID(rawValue: blob)) }
            let codec = try Codecs.make(Value.self)
            return try bytes.withUnsafeBytes { try codec.decode($0) }
        } catch {
            return nil
        }
    }

    // MARK: Relationships

    /// The object of a related row: the registered one, or one loaded from the store.
    func relatedObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        if let registered = registeredObject(entity, row) { return registered }
        guard let (handle, table) = container.location(ofEntityNamed: entity.name), let collection = table.collection else { return nil }
        return try? handle.store.read { tx in
            try tx.withRecord(row, in: collection) { raw in
                try self.materialize(row, view: try RecordView(raw, layouts: table.layouts), entity: entity, handle: handle)
            }
        }
    }

    /// Makes sure a related object is in this context (inserting it if it is new) and returns its backing.
    @discardableResult
    func insertRelated(_ object: AnyObject, entity: Entity) -> ModelBacking? {
        if let b = entity.backing(of: object), b.context === self, b.status != .detached { return b }
        guard let model = object as? any PersistentModel else { return nil }
        insert(model)
        return entity.backing(of: object)
    }

    /// After an object is registered: inserts the new objects its relationships hold, names
    /// them by row, and makes the inverse sides name this object by row too.
    func linkRelationships(of object: AnyObject, backing: ModelBacking, entity: Entity) {
        for relationship in entity.relationships {
            guard let references = relationship.references(of: object) else { continue }
            var rows: [RelatedReference] = []
            let inverse = relationship.inverse(in: entity)
            for reference in references {
                switch reference {
                case .row(let r):
                    rows.append(.row(r))
                case .object(let o):
                    guard let b = insertRelated(o, entity: relationship.targetEntity) else { continue }
                    rows.append(.row(b.rowID))
                    if let inverse {
                        // The other side may name this object by identity (set before insert).
                        inverse.unlink(.object(ObjectIdentifier(object)), from: o)
                        inverse.link(object, ownerKey: .row(backing.rowID), into: o, back: relationship, context: self)
                    }
                }
            }
            relationship.setReferences(rows, of: object)
        }
    }

    // MARK: Inserting and deleting

    /// Inserts a new object; it is saved by the next `save()`. Inserting an object that is
    /// already registered here does nothing. Same as SwiftData's `insert(_:)`; with a unique
    /// attribute, the save updates a stored object with the same value instead (an upsert).
    public func insert<T: PersistentModel>(_ model: T) {
        if let backing = model.backing {
            if backing.context === self {
                if backing.status == .deleted {
                    // Inserting a deleted object again undoes the deletion.
                    deleted.remove(model)
                    backing.status = backing.wasInserted ? .inserted : .persisted
                }
                return
            }
            precondition(backing.context == nil || backing.status == .detached,
                         "\(T.self) is registered in another ModelContext; insert it in one context only.")
        }
        do {
            // The object's own class decides its model (a subclass instance typed as its base).
            let (handle, table) = try container.location(of: type(of: model))
            let backing = ModelBacking(entity: table.entity, rowID: handle.allocateRow(table.entity), context: self,
                                       status: .inserted, storeIdentifier: handle.identifier)
            attach(model, entity: table.entity, backing: backing)
            register(model, backing)
            inserted.append(model)
            if !table.entity.relationships.isEmpty { linkRelationships(of: model, backing: backing, entity: table.entity) }
            if autosaveEnabled { autosaveIfNeeded() }
        } catch {
            preconditionFailure("\(error)")
        }
    }

    /// Marks an object for deletion by the next `save()`. Same as SwiftData's `delete(_:)`.
    public func delete<T: PersistentModel>(_ model: T) {
        guard let backing = model.backing, backing.context === self else { return }
        switch backing.status {
        case .inserted:
            inserted.remove(model)
            backing.wasInserted = true
            backing.status = .deleted
            deleted.append(model)
        case .persisted:
            changed.remove(model)
            backing.status = .deleted
            deleted.append(model)
        case .deleted, .detached:
            return
        }
        if autosaveEnabled { autosaveIfNeeded() }
    }

    // MARK: State

    /// True when there are unsaved inserts, changes or deletions. Same as SwiftData.
    public var hasChanges: Bool { !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty || !batchDeletes.isEmpty }

    /// The objects inserted since the last save. Same as SwiftData.
    public var insertedModelsArray: [any PersistentModel] { inserted.objects.compactMap { $0 as? any PersistentModel } }
    /// The objects changed since the last save. Same as SwiftData.
    public var changedModelsArray: [any PersistentModel] { changed.objects.compactMap { $0 as? any PersistentModel } }
    /// The objects deleted since the last save. Same as SwiftData.
    public var deletedModelsArray: [any PersistentModel] { deleted.objects.compactMap { $0 as? any PersistentModel } }

    /// Drops unsaved inserts and deletions and restores changed objects to their saved values.
    /// Same as SwiftData's `rollback()`.
    public func rollback() {
        for object in inserted.objects {
            guard let backing = backingOf(object) else { continue }
            unregister(backing)
            backing.status = .detached
            backing.context = nil
        }
        for object in deleted.objects {
            guard let backing = backingOf(object) else { continue }
            if backing.wasInserted {
                unregister(backing)
                backing.status = .detached
                backing.context = nil
            } else {
                backing.status = .persisted
                if backing.isChanged { changed.append(object) }
            }
        }
        for object in changed.objects {
            guard let backing = backingOf(object), let entity = backing.entity else { continue }
            backing.isChanged = false
            try? reload(object, entity: entity, row: backing.rowID)
        }
        inserted.removeAll()
        deleted.removeAll()
        changed.removeAll()
        batchDeletes.removeAll()
    }

    func backingOf(_ object: AnyObject) -> ModelBacking? {
        guard let entity = EntityRegistry.shared.entity(forClassOf: object) else { return nil }
        for p in entity.properties { if let b = p.backing(of: object) { return b } }
        return nil
    }

    /// Re-reads an object's values from its store.
    func reload(_ object: AnyObject, entity: Entity, row: RowID) throws {
        guard let (handle, table) = container.location(ofEntityNamed: entity.name), let collection = table.collection else { return }
        try handle.store.read { tx in
            _ = try tx.withRecord(row, in: collection) { raw in
                let view = try RecordView(raw, layouts: table.layouts)
                for p in entity.properties { try p.decodeValue(try view.field(p.index), into: object) }
            }
        }
    }

    /// Saves when autosave is on and changes have piled up; for the main context, schedules a
    /// save on the main actor's next turn.
    func autosaveIfNeeded() {
        guard autosaveEnabled else { return }
        if inserted.count + changed.count + deleted.count >= ModelContext.autosaveThreshold {
            try? save()
            return
        }
        guard isMainContext, !autosaveScheduled else { return }
        autosaveScheduled = true
        nonisolated(unsafe) let context = self
        Task { @MainActor in
            context.autosaveScheduled = false
            if context.autosaveEnabled && context.hasChanges { try? context.save() }
        }
    }

    /// Strata extra: how many unsaved changes trigger an autosave when `autosaveEnabled` is true.
    nonisolated(unsafe) public static var autosaveThreshold = 1000

    /// Posted before a save that has changes, with the context as object. Same as SwiftData.
    public static let willSave = Notification.Name("ModelContext.willSave")
    /// Posted after a save that has changes, with the context as object and the identifiers
    /// of the inserted, updated and deleted objects in `userInfo`. Same as SwiftData.
    public static let didSave = Notification.Name("ModelContext.didSave")

    /// Keys of `didSave`'s `userInfo`. Same as SwiftData's `ModelContext.NotificationKey`.
    public enum NotificationKey: String {
        case insertedIdentifiers, updatedIdentifiers, deletedIdentifiers, queryGeneration, invalidatedAllIdentifiers
    }
}

/// Objects in the order they were added, each once.
struct OrderedObjects {
    private var slots: [AnyObject?] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { positions.isEmpty }
    var count: Int { positions.count }
    var objects: [AnyObject] { slots.compactMap { $0 } }

    mutating func append(_ object: AnyObject) {
        let id = ObjectIdentifier(object)
        guard positions[id] == nil else { return }
        positions[id] = slots.count
        slots.append(object)
    }

    mutating func remove(_ object: AnyObject) {
        guard let p = positions.removeValue(forKey: ObjectIdentifier(object)) else { return }
        slots[p] = nil
        if positions.isEmpty { slots.removeAll() }
    }

    func contains(_ object: AnyObject) -> Bool { positions[ObjectIdentifier(object)] != nil }

    mutating func removeAll() {
        slots.removeAll()
        positions.removeAll()
    }
}
