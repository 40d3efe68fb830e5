import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

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
    /// Who makes this context's saves, recorded with each history transaction they write
    /// (`DefaultHistoryTransaction.author`). Same as SwiftData's `author`.
    public var author: String?
    /// True for `ModelContainer.mainContext`.
    @exclusivity(unchecked) var isMainContext = false
    @exclusivity(unchecked) private var autosaveScheduled = false

    /// The identity maps, by model.
    @exclusivity(unchecked) var identityMaps = TypeMap<IdentityMap>()
    /// The map `identityMap(_:)` gave last (a fetch asks for the same model's map per row;
    /// maps are never removed, so it stays right). Unretained: `identityMaps` holds it.
    @exclusivity(unchecked) var lastIdentityMap: (model: ObjectIdentifier, map: Unmanaged<IdentityMap>)?
    @exclusivity(unchecked) var inserted = OrderedObjects()
    @exclusivity(unchecked) var changed = OrderedObjects()
    @exclusivity(unchecked) var deleted = OrderedObjects()
    /// Rows selected by `delete(model:where:)` that were not registered as objects, by model.
    @exclusivity(unchecked) var batchDeletes: [ObjectIdentifier: RowSet] = [:]
    /// `delete(model:where:)` requests a custom store that deletes by predicate itself
    /// (`DataStoreBatching`) gets at the next save, by store handle.
    @exclusivity(unchecked) var storeBatchDeletes: [ObjectIdentifier: [StoreBatchDelete]] = [:]
    /// Records of prefetched related rows, by model (Query/Prefetch.swift).
    @exclusivity(unchecked) var rowCache: [ObjectIdentifier: [RowID: [UInt8]]] = [:]
    /// The run of the last point fetch (`QueryPart.run`): once the fetch is done, nothing else
    /// holds it, and the next point fetch of the same part binds it to its key, written over the
    /// last one. A fetch by a unique value then allocates no run and no key.
    @exclusivity(unchecked) var pointRun: QueryRun?

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
        for map in identityMaps.values {
            for backing in map.backings { backing.context = nil }
        }
    }

    // MARK: State

    /// True when there are unsaved inserts, changes or deletions. Same as SwiftData.
    public var hasChanges: Bool { !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty || !batchDeletes.isEmpty || !storeBatchDeletes.isEmpty }

    /// The objects inserted since the last save. Same as SwiftData.
    public var insertedModelsArray: [any PersistentModel] { inserted.objects.compactMap { $0 as? any PersistentModel } }
    /// The objects changed since the last save. Same as SwiftData.
    public var changedModelsArray: [any PersistentModel] { changed.objects.compactMap { $0 as? any PersistentModel } }
    /// The objects deleted since the last save. Same as SwiftData.
    public var deletedModelsArray: [any PersistentModel] { deleted.objects.compactMap { $0 as? any PersistentModel } }

    /// Runs `block`, then saves (SwiftData's `transaction(block:)`). If `block` throws, nothing
    /// is saved and the error is rethrown (the changes stay pending, as in SwiftData).
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Applies pending changes (inverse relationships are kept as they are set, so this only
    /// autosaves when `autosaveEnabled` is true). Same as SwiftData's `processPendingChanges()`.
    public func processPendingChanges() {
        if autosaveEnabled && hasChanges { try? save() }
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
