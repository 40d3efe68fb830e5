import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// One `save()`, as a type of its own, in three named phases:
/// - **prepare**: the delete rules (on registered objects and on stored rows), upsert
///   resolution (unique keys looked up once, inside the write), relationship counts, and the
///   blobs of external values;
/// - **write**: one transaction per store: deletions, edits of stored rows, changes and
///   inserts, each record encoded and written once;
/// - **apply**: after every store committed, the objects' rows and states are brought up to
///   date.
/// Its working state lives here, not in the context; the encoder of a record gets what it
/// needs handed down (`RecordEncoding`). A failed save undoes what it changed in memory.
final class SaveOperation {
    /// The identifiers `didSave` reports.
    struct Saved {
        var inserted: [PersistentIdentifier] = []
        var updated: [PersistentIdentifier] = []
        var deleted: [PersistentIdentifier] = []
    }

    let context: ModelContext
    var container: ModelContainer { context.container }
    /// Each store's part, by position in the container's stores.
    @exclusivity(unchecked) var stores: [StoreWork]
    /// What prepare changed in memory (delete rules, upserts), undone newest first on failure.
    @exclusivity(unchecked) var undo: [() -> Void] = []
    /// The arrays `indexKeys(of:_:_:)` makes each object's index keys in, kept from object to
    /// object (SaveOperation+Write.swift).
    @exclusivity(unchecked) var keyScratch: [IndexKey] = []
    /// The array `encode(_:table:)` makes each object's record in, likewise.
    @exclusivity(unchecked) var recordScratch: [UInt8] = []
    /// Rows being deleted, by model (objects' rows and rows of rules and `delete(model:where:)`).
    @exclusivity(unchecked) var deleting: [ObjectIdentifier: RowSet] = [:]
    /// Deleted registered objects (rules add to them), and the inserts as the save found them.
    @exclusivity(unchecked) var deleted: [ModelBacking]
    let inserted: [ModelBacking]
    /// Rows that inserts move to (upserts onto stored objects), by model, for relationship fields.
    @exclusivity(unchecked) var movedRows: [ObjectIdentifier: [RowID: RowID]] = [:]
    /// The rows prepare decided inserts go to (models that take part in relationships).
    @exclusivity(unchecked) var resolvedRows: [ObjectKey: RowID] = [:]
    /// The latest insert decided to go to each row (an earlier one to the same row is superseded).
    @exclusivity(unchecked) var rowTakers: [Edit.Target: AnyObject] = [:]
    /// Objects whose record is not written because an insert takes their row.
    @exclusivity(unchecked) var superseded = Set<ObjectKey>()
    /// Stored rows whose relationship fields rules and upserts edit (rows without objects).
    @exclusivity(unchecked) var edits: [Edit.Target: Edit] = [:]
    /// The blobs prepare wrote for external values, by object and property index, and the
    /// objects' external values to update once the save committed.
    @exclusivity(unchecked) var blobs: [ObjectIdentifier: [Int: UInt64]] = [:]
    @exclusivity(unchecked) var externalWrites: [(object: AnyObject, property: AttributeProperty, blob: UInt64)] = []
    @exclusivity(unchecked) var saved = Saved()
    /// How many of `deleted` the context asked to delete (the first ones; rules add the rest).
    let requestedDeletions: Int
    /// Objects the save changes or deletes whose rows are gone (another context or process
    /// deleted them after this context read them): the save fails with `saveConflict`.
    @exclusivity(unchecked) var vanished: [PersistentIdentifier] = []

    init(_ context: ModelContext) {
        self.context = context
        self.stores = context.container.handles.map { StoreWork(handle: $0) }
        self.deleted = context.deleted.backings
        self.requestedDeletions = deleted.count
        self.inserted = context.inserted.backings
    }

    /// Runs the save: the identifiers of what it inserted, updated and deleted.
    func run() throws -> Saved {
        do {
            try beginWriting()
            try prepare()
            try write()
            try commit()
        } catch {
            for store in stores { store.writer?.rollback() }
            for undo in undo.reversed() { undo() }
            throw StrataError.store(error, while: "save")
        }
        apply()
        container.changeHub.committed()
        return saved
    }

    // MARK: Prepare

    private func prepare() throws {
        try applyDeleteRules()
        try resolveUpserts()
        try checkRelationshipCounts()
        try writeBlobs()
    }

    /// The context's changed objects as the write finds them (rules and upserts add to them),
    /// without those that are deleted or that an insert supersedes.
    var changed: [ModelBacking] {
        context.changed.backings.filter { $0.status == .persisted && !superseded.contains(ObjectKey($0.object)) }
    }

    // MARK: Stores

    /// The store part and table of a model.
    func location(_ entity: Entity) -> (store: StoreWork, table: Table)? {
        // Asked per object: the last answer is kept, as a save's objects come in runs of one model.
        if let last = lastLocation, last.entity === entity { return (last.store, last.table) }
        guard let (handle, table) = container.location(of: entity),
              let store = stores.first(where: { $0.handle === handle }) else { return nil }
        lastLocation = (entity, store, table)
        return (store, table)
    }
    @exclusivity(unchecked) private var lastLocation: (entity: Entity, store: StoreWork, table: Table)?

    /// Opens the writers of the stores this save may touch, in the container's order (so that
    /// two saves never wait on each other): those with work, and with deletions whose rules
    /// may reach other stores, all writable ones.
    private func beginWriting() throws {
        let cascading = !deleted.isEmpty || !context.batchDeletes.isEmpty
        // (The three lists asked in turn, not joined: a join copied every object of a large
        // save, a retain and release each.)
        let changedBackings = context.changed.backings
        let pendingCount = inserted.count + changedBackings.count + deleted.count
        for store in stores {
            let handle = store.handle
            func inStore(_ backing: ModelBacking) -> Bool { handle.table(for: backing.entity) != nil }
            let hasWork = inserted.contains(where: inStore) || changedBackings.contains(where: inStore) || deleted.contains(where: inStore)
                || handle.tables.contains { context.batchDeletes[ObjectIdentifier($0.entity)] != nil }
            if hasWork && !handle.configuration.allowsSave {
                throw StrataError(.readOnly, "The store \(handle.location) was opened with allowsSave: false; it cannot save changes.")
            }
            guard handle.configuration.allowsSave, hasWork || (cascading && container.handles.count > 1) else { continue }
            store.writer = try handle.storage.beginWrite()
            if let bridge = store.writer as? BridgeWriter {
                bridge.author = context.author
                bridge.expectPuts(pendingCount)
            }
            if handle.configuration.historyRetention.isRecording { store.history = HistoryRecorder(retention: handle.configuration.historyRetention) }
        }
    }

    /// The writer of the store a model is in (a store the save did not open cannot be written).
    func writer(for entity: Entity) throws -> (any StorageWriter, Table) {
        let (writer, table, _) = try storeWriter(for: entity)
        return (writer, table)
    }

    /// `writer(for:)` with the store's part of the save, found once.
    func storeWriter(for entity: Entity) throws -> (any StorageWriter, Table, StoreWork) {
        guard let (store, table) = location(entity) else {
            throw StrataError(.unknownModel, "\(entity.name) is not in this container's schema.")
        }
        guard let writer = store.writer else {
            throw StrataError(.readOnly, "The store \(store.handle.location) was opened with allowsSave: false; it cannot save changes.")
        }
        store.touched = true
        return (writer, table, store)
    }

    private func commit() throws {
        for store in stores {
            guard let writer = store.writer else { continue }
            if store.touched {
                store.token = try store.history?.write(to: writer, author: context.author)
                try writer.commit()
                takeMovedRows(writer.movedRows, store)
                if store.handle.custom != nil, let bridge = writer as? BridgeWriter { store.savedVersions = bridge.savedVersions }
            } else {
                writer.rollback()
            }
            store.writer = nil
        }
    }
}

extension SaveOperation {
    /// Inserts a store put in the place of objects it held (a custom store resolving an insert
    /// by a unique value, `StorageWriter.movedRows`): they are saved at those rows, and
    /// references to them follow (`apply`).
    func takeMovedRows(_ moves: [CollectionID: [RowID: RowID]], _ store: StoreWork) {
        guard !moves.isEmpty else { return }
        for table in store.handle.tables {
            guard let collection = table.collection, let moved = moves[collection] else { continue }
            movedRows[ObjectIdentifier(table.entity), default: [:]].merge(moved) { _, new in new }
            for i in store.decided.indices where store.decided[i].backing.entity === table.entity {
                if let to = moved[store.decided[i].row] { store.decided[i].row = to }
            }
        }
    }
}

/// One store's part of a save.
final class StoreWork {
    let handle: StoreHandle
    @exclusivity(unchecked) var writer: (any StorageWriter)?
    /// True once the save wrote (or read for writing) through `writer`.
    @exclusivity(unchecked) var touched = false
    /// Inserts and the rows they were written to (their own, or an upsert's).
    /// (The context holds the objects until the save is over; a backing names its object.)
    @exclusivity(unchecked) var decided: [(backing: ModelBacking, row: RowID)] = []
    /// The history this save records in the store (nil when the store records none), and
    /// the token of its transaction once written.
    @exclusivity(unchecked) var history: HistoryRecorder?
    @exclusivity(unchecked) var token: Int64?
    /// A custom store's versions of the rows it saved (`BridgeWriter.savedVersions`).
    @exclusivity(unchecked) var savedVersions: [CollectionID: [RowID: Int64]] = [:]

    init(handle: StoreHandle) { self.handle = handle }
}

/// What a save reads of a stored row it replaces or deletes, once: the index keys it was
/// stored with, and the blobs of its external values.
struct StoredRow {
    var keys: [IndexKey]
    var blobs: [UInt64]

    static let none = StoredRow(keys: [], blobs: [])

    init(keys: [IndexKey], blobs: [UInt64]) {
        self.keys = keys
        self.blobs = blobs
    }

    init(_ view: RecordView, table: Table) throws {
        keys = try table.indexKeys(of: view)
        blobs = try StoredRow.blobs(view, table: table)
    }

    /// The blobs of a stored record's external values.
    static func blobs(_ view: RecordView, table: Table) throws -> [UInt64] {
        try table.entity.externals.compactMap { AttributeProperty.blob(ofField: try view.field($0.index)) }
    }

    /// The stored row that `record`, with index keys `recordKeys` (computed from its object),
    /// replaces. When the indexed fields hold the same bytes in both (an upsert that changes
    /// other attributes), the stored keys are `recordKeys` and are not computed again from the
    /// stored record. (The engine checks them against the row's digest all the same.)
    init(_ view: RecordView, table: Table, replacedBy record: RecordView, recordKeys: [IndexKey]) throws {
        keys = try table.sameIndexedFields(view, record) ? recordKeys : try table.indexKeys(of: view)
        blobs = try StoredRow.blobs(view, table: table)
    }
}
