import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// A custom store (`DataStore`) behind the storage seam: the context reads and writes records
/// by row as it does on Strata's engine, and this bridge speaks to the store in snapshots.
///
/// - Rows are this process's names for the store's objects: the bridge maps each row to the
///   identifier the store gave (`PersistentIdentifier.identifier(for:entityName:primaryKey:)`),
///   or, before the first save, to a temporary identifier (negative `rowID`). The store's
///   remapped identifiers replace the temporary ones in the map, so every relationship that
///   names a row (its record holds rows) names the permanent identifier from then on.
/// - A fetch goes to the store with the descriptor (`candidates`, from `StoreFetch`): the
///   snapshots it answers with, and its related snapshots, are kept as records by row; the
///   context then reads, filters, sorts and pages those rows itself, so a predicate or a sort
///   the store refuses is done in memory, and an answer is never trusted beyond what it holds.
/// - A save's writes are gathered and sent as one `save` request at commit: inserted rows
///   (no identifier from the store yet), updated rows and deleted rows, as snapshots. A store
///   that resolves an insert onto an object it holds (a unique value it has) answers with that
///   object's identifier: the row it was known by takes the insert's place (`movedRows`).
/// - The store keeps nothing of Strata's: collections, indexes and metadata live in the
///   bridge, for the process's life. Its indexes hold no entries; no read asks them.
final class DataStoreStorage: StorageBackend, @unchecked Sendable {
    let box: any AnyDataStore
    /// The bridge's own rows (`BridgeRows`): below them, a row is an integer key.
    let rows = RowAllocator(firstRow: BridgeRows.firstAllocated)
    let editingState = EditingState(id: UUID(), author: nil)
    let isReadOnly = false
    let evaluatesQueries = true
    /// Entities by name (the models this store keeps).
    private let entities: [String: Entity]
    private let lock = NSLock()
    private var state = BridgeState()
    /// One save at a time goes to the store.
    let writerGate = DispatchSemaphore(value: 1)
    /// How many bytes of records the bridge keeps from one read or save to the next
    /// (`BridgeState.KeptRecords`): past it, the oldest are let go, and read again from the
    /// store if they are asked for. (Kept for the process's life, every row a long-lived server
    /// ever read or saved stayed in memory.)
    var recordBudget: Int {
        get { withState { $0.kept.budget } }
        set { withState { $0.kept.budget = newValue } }
    }
    static let defaultRecordBudget = 32 << 20

    init(_ box: any AnyDataStore, entities: [Entity]) {
        self.box = box
        self.entities = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        state.storeIdentifier = box.identifier
        state.metadata[HistoryRecord.storeIdentifierMetadata] = Array(box.identifier.utf8)
        // The history collection stands for the store's history records
        // (`HistoryRecordingDataStore`): the context reads and writes it as on the engine.
        if box.recordsHistory {
            state.collections[HistoryRecord.collection] = BridgeState.historyCollection
            state.collectionNames[BridgeState.historyCollection.rawValue] = HistoryRecord.collection
        }
    }

    func read(_ body: (any StorageReader) throws -> Void) throws { try body(BridgeReader(self)) }
    func beginRead() throws -> any StorageReader { BridgeReader(self) }

    func beginWrite() throws -> any StorageWriter {
        writerGate.wait()
        return BridgeWriter(self)
    }

    func sync() throws {}
    func compact() throws {}

    // MARK: Rows and identifiers

    /// The identifier of `entity`'s row: the store's, or a temporary one before the first save.
    func identifier(_ entity: Entity, _ row: RowID) -> PersistentIdentifier {
        if let id = withState({ $0.tables[entity.name]?.identifier(row) }) { return id }
        // (A key's row is its identifier's whether or not the model's maps are made yet.)
        if row > 0, row < BridgeRows.firstAllocated {
            return PersistentIdentifier(scope: .keyedByRow(entityName: entity.name, storeIdentifier: box.identifier), rowID: Int64(row))
        }
        return Self.temporary(entity, row)
    }

    static func temporary(_ entity: Entity, _ row: RowID) -> PersistentIdentifier {
        PersistentIdentifier(scope: entity.temporaryScope, rowID: -Int64(bitPattern: row))
    }

    /// The row an identifier names: a temporary one's own, a known one's, or a new row for an
    /// identifier the store made that this process has not read yet.
    func row(for id: PersistentIdentifier, _ entity: Entity) -> RowID? {
        if id.isTemporary { return RowID(-id.rowID) }
        guard id.hasPrimaryKey, id.storeIdentifier == box.identifier else { return nil }
        return withState { state in state.row(for: id, entity, rows: rows) }
    }

    func withState<R>(_ body: (inout BridgeState) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    func isHistory(_ collection: CollectionID) -> Bool { collection == BridgeState.historyCollection }

    func entity(_ collection: CollectionID) throws -> Entity {
        // Asked for each record a read visits: the last answer is kept (a collection never
        // changes its model), where the model's name was hashed each time (1% of W7).
        let found = withState { state -> Entity? in
            if let last = state.lastEntity, last.collection == collection.rawValue { return last.entity }
            guard let name = state.collectionNames[collection.rawValue], let entity = entities[name] else { return nil }
            state.lastEntity = (collection.rawValue, entity)
            return entity
        }
        guard let found else {
            throw StrataError(.unknownModel, "The custom store \(box.identifier) has no collection \(collection).")
        }
        return found
    }

    func entity(named name: String) -> Entity? { entities[name] }

    // MARK: Reading from the store

    /// Keeps the store's snapshots as records; the models and rows of `fetched`, in order.
    @discardableResult
    func ingest(_ fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot]) throws -> [(entity: String, row: RowID)] {
        try withState { state in try ingest(fetched, related: related, into: &state) }
    }

    /// `ingest` on the state the caller holds: the oldest records kept before go first, past
    /// the budget (`recordBudget`), so that none of what this read keeps goes.
    private func ingest(_ fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot],
                        into state: inout BridgeState) throws -> [(entity: String, row: RowID)] {
        state.forgetOldRecords()
        for snapshot in related.values { _ = try state.keep(snapshot, entities: entities, rows: rows) }
        return try state.keep(fetched, entities: entities, rows: rows)
    }

    /// The rows of `entity` a fetch selects, read from a store that fetches in batches
    /// (`DataStoreBatchedFetching`): each batch's records are kept while `body` visits its rows,
    /// then let go (a row read again is fetched again), so an enumeration holds one batch.
    /// False, with `body` never called, when the store does not fetch in batches or refuses the
    /// descriptor.
    func fetchInBatches(_ fetch: any StoreFetch, batchSize: Int, paging: Bool, entity: Entity,
                        _ body: ([RowID]) throws -> Bool) throws -> Bool {
        try fetch.fetchBatches(in: box, batchSize: batchSize, paging: paging, editingState) { snapshots in
            let rows = try ingest(snapshots, related: [:]).filter { $0.entity == entity.name }.map(\.row)
            defer { release(rows, entity) }
            return try body(rows)
        }
    }

    /// The rows a fetch selects, from their identifiers only (`StoreFetch.identifiers`): what
    /// `fetch(_:batchSize:)` holds before it reads a batch. Nil when the store does not answer
    /// so.
    func rows(selectedBy fetch: any StoreFetch, entity: Entity) throws -> [RowID]? {
        guard let ids = try fetch.identifiers(in: box, editingState) else { return nil }
        // As the store's snapshots are kept (`BridgeState.keep`): its identifiers as they are.
        return withState { state in ids.compactMap { id in id.entityName == entity.name ? state.row(for: id, entity, rows: rows) : nil } }
    }

    /// Reads the records of these rows that this process has not kept, with one fetch, and
    /// keeps them until `release`: a batch of `fetch(_:batchSize:)` is made from them.
    func load(_ rows: [RowID], _ entity: Entity) throws {
        let ids = withState { state in
            rows.compactMap { row -> PersistentIdentifier? in
                guard let table = state.tables[entity.name], table.records[row] == nil, !table.deleted.contains(row) else { return nil }
                return table.identifier(row)
            }
        }
        guard !ids.isEmpty else { return }
        let answer = try StoreFetches.some(entity.type, ids).fetch(in: box, extra: 0, editingState)
        // Only the batch is kept: not what a store that refuses the predicate answers besides,
        // nor related snapshots (a related object's record is read when it is asked for).
        let asked = Set(ids)
        try ingest(answer.fetched.filter { asked.contains($0.persistentIdentifier) }, related: [:])
    }

    /// Lets go of the records of these rows (read again from the store if asked for).
    func release(_ rows: [RowID], _ entity: Entity) {
        withState { state in
            // The model's rows taken out once, not looked up by name for each row (an
            // enumeration lets go of each batch's rows here).
            guard var table = state.tables.removeValue(forKey: entity.name) else { return }
            for row in rows { table.records[row] = nil }
            state.tables[entity.name] = table
        }
    }

    /// The record of a row, read from the store if this process has not kept it.
    func record(_ row: RowID, _ entity: Entity) throws -> [UInt8]? {
        // The model's rows looked up once: a batch's reads each come here.
        let (kept, id) = withState { state -> ([UInt8]?, PersistentIdentifier?) in
            if let kept = state.tables[entity.name]?.records[row] { return (kept, nil) }
            guard let table = state.tables[entity.name], !table.deleted.contains(row) else { return (nil, nil) }
            return (nil, table.identifier(row))
        }
        if let kept { return kept }
        guard let id else { return nil }
        let answer = try StoreFetches.one(entity.type, id).fetch(in: box, extra: 0, editingState)
        // Kept and read under one lock: another thread's read may let it go right after.
        return try withState { state in
            _ = try ingest(answer.fetched.filter { $0.persistentIdentifier == id }, related: answer.related, into: &state)
            return state.tables[entity.name]?.records[row]
        }
    }
}

/// What the bridge keeps: its catalog, metadata, and each model's rows.
struct BridgeState {
    /// The history collection's id (the models' collections are numbered from 1).
    static let historyCollection = CollectionID(rawValue: UInt32.max)
    var collections: [String: CollectionID] = [:]
    var collectionNames: [UInt32: String] = [:]
    /// The model of the collection `DataStoreStorage.entity(_:)` was asked for last.
    var lastEntity: (collection: UInt32, entity: Entity)?
    var indexes: [UInt32: [(id: IndexID, name: String)]] = [:]
    var nextIndex: UInt32 = 1
    var metadata: [String: [UInt8]] = [:]
    var tables: [String: EntityRows] = [:]
    /// The store's identifier: its models' integer-keyed scopes are this store's.
    var storeIdentifier: String?
    var commits: UInt64 = 0
    /// The temporary identifiers of inserts the store resolved onto objects it held, and those
    /// objects' identifiers (a store that kept a reference to such a temporary identifier is
    /// read as referring to the object). Any other temporary identifier names its own row.
    var remapped = Remapped()

    /// `remapped`: the newest `limit` entries, and always all of the last save's (its records
    /// are made from its snapshots with them). Kept for the process's life, a server upserting
    /// onto stored objects grew by an entry for each upsert, without bound. An older temporary
    /// identifier that a store still answers with names the row its insert was made at, which
    /// no object holds any more.
    struct Remapped {
        private var map: [PersistentIdentifier: PersistentIdentifier] = [:]
        private var order: [PersistentIdentifier] = []
        /// Entries of `order` before it are gone.
        private var first = 0
        var limit = 1 << 16

        var isEmpty: Bool { map.isEmpty }
        var count: Int { map.count }

        subscript(temporary: PersistentIdentifier) -> PersistentIdentifier? { map.isEmpty ? nil : map[temporary] }

        mutating func note(_ temporary: PersistentIdentifier, _ permanent: PersistentIdentifier) {
            if map.updateValue(permanent, forKey: temporary) == nil { order.append(temporary) }
        }

        /// Lets go of the oldest entries past `limit`: called before a save notes its own.
        mutating func trim() {
            while order.count - first > limit {
                map[order[first]] = nil
                first += 1
            }
            if first > 0, 2 * first >= order.count {
                order.removeFirst(first)
                first = 0
            }
        }
    }
    /// The records kept, oldest first (`forgetOldRecords`).
    var kept = KeptRecords()
    /// The versions this container's own saves moved rows from and to.
    var ownSaves = OwnSaves()

    /// Where this container's own saves took rows, version to version: an update sent at a
    /// version this container's save replaced is sent at the version that save gave instead.
    /// So two contexts of one container that change one object meet the engine's rule (the
    /// later save wins), while a change made by another container or process in between, which
    /// leaves no step here, stays a conflict (Docs/CustomStores.md, "Versions"). The newest
    /// `limit` steps are kept: a context whose object is older than that gets a conflict
    /// where the engine's rule would have let its save through, never the reverse.
    struct OwnSaves {
        struct Step: Hashable {
            let collection: UInt32
            let row: RowID
            let from: Int64
        }
        private var next: [Step: Int64] = [:]
        private var order: [Step] = []
        /// Steps of `order` before it are gone.
        private var first = 0
        static let limit = 1 << 16

        var isEmpty: Bool { next.isEmpty }

        /// A save of this container took `row` from version `from` to `to`.
        mutating func note(_ collection: CollectionID, _ row: RowID, from: Int64, to: Int64) {
            let step = Step(collection: collection.rawValue, row: row, from: from)
            if next.updateValue(to, forKey: step) == nil { order.append(step) }
            while order.count - first > Self.limit {
                next[order[first]] = nil
                first += 1
            }
            if first > 0, 2 * first >= order.count {
                order.removeFirst(first)
                first = 0
            }
        }

        /// Forgets the steps that lead on from `version` of `row`: an earlier object's, when a
        /// new object comes to the row of a deleted one (a store that gives keys again).
        mutating func forget(_ collection: CollectionID, _ row: RowID, from version: Int64) {
            var version = version
            var steps = 0
            while let to = next.removeValue(forKey: Step(collection: collection.rawValue, row: row, from: version)), steps <= Self.limit {
                version = to
                steps += 1
            }
        }

        /// The version this container's saves took `row` to from `version` (itself, when none did).
        func latest(_ collection: CollectionID, _ row: RowID, from version: Int64) -> Int64 {
            var version = version
            var steps = 0
            while let to = next[Step(collection: collection.rawValue, row: row, from: version)], to != version, steps <= Self.limit {
                version = to
                steps += 1
            }
            return version
        }
    }

    /// The records the bridge kept, in the order it kept them, with their sizes. A record that
    /// replaced an earlier one of its row is noted again, and the earlier note, when it comes
    /// to go, lets the later record go too: a row is read again from the store sooner than it
    /// had to be, never kept past the budget.
    struct KeptRecords {
        /// Bytes of records (each counted with `overhead` more, for its array and its note).
        var budget = DataStoreStorage.defaultRecordBudget
        private(set) var bytes = 0
        private var names: [String] = []
        private var rows: [RowID] = []
        private var sizes: [Int] = []
        /// Notes before it are gone.
        private var first = 0
        static let overhead = 64

        mutating func note(_ name: String, _ row: RowID, _ record: [UInt8]) {
            let size = record.count + Self.overhead
            names.append(name)
            rows.append(row)
            sizes.append(size)
            bytes += size
        }

        /// Takes the oldest notes off until at most `budget` bytes are noted; each one's model and row.
        mutating func takeOldest() -> [(name: String, row: RowID)] {
            var taken: [(name: String, row: RowID)] = []
            while bytes > budget, first < rows.count {
                taken.append((names[first], rows[first]))
                bytes -= sizes[first]
                first += 1
            }
            // The notes' arrays move down once half of them is gone (amortized constant time).
            if first > 0, 2 * first >= rows.count {
                names.removeFirst(first)
                rows.removeFirst(first)
                sizes.removeFirst(first)
                first = 0
            }
            return taken
        }
    }

    /// Lets go of the oldest records kept, past the budget: called before a read or a save's
    /// result keeps more, so that what an operation keeps stays while it runs. A record let go
    /// is read from the store when it is asked for (`DataStoreStorage.record`), so no reader
    /// may take a missing record for a row the store does not hold.
    mutating func forgetOldRecords() {
        guard kept.bytes > kept.budget else { return }
        let taken = kept.takeOldest()
        for run in taken.runs(by: { $0.name }) {
            let name = taken[run.lowerBound].name
            guard var table = tables.removeValue(forKey: name) else { continue }
            for (_, row) in taken[run] { table.records[row] = nil }
            tables[name] = table
        }
    }

    /// One model's rows. An identifier of the model's integer-keyed scope names the row equal
    /// to its key, and no map holds it (`BridgeRows`); the maps hold the bridge's own rows
    /// (inserts, keys of other kinds) and the records kept.
    struct EntityRows {
        /// The scope of the model's identifiers in this store whose keys are rows.
        let keyedScope: IdentifierScope
        var rowByID = RowsByIdentifier()
        var idByRow = ValuesByRow<PersistentIdentifier>()
        var records = ValuesByRow<[UInt8]>()
        /// Rows this bridge saw deleted: they keep their identifier (a deleted object's
        /// `persistentModelID`, a conflict's objects), and are stored no more. A bit a row
        /// where they are dense (keys), as `keyedRowsSeen`.
        var deleted = RowSet()
        /// The keys handed out as rows: an insert the store resolves onto one of them moves
        /// to it (`SavePlan.apply`), as onto an object of the maps. A bit a row where keys are
        /// dense, as a sequence's are: about an eighth of a byte a row read, where the maps
        /// took about 50.
        var keyedRowsSeen = RowSet()

        init(_ name: String, storeIdentifier: String?) {
            keyedScope = .keyedByRow(entityName: name, storeIdentifier: storeIdentifier)
        }

        /// The row an identifier of the keyed scope names (its key), without a map; nil for
        /// any other identifier.
        func keyedRow(_ id: PersistentIdentifier) -> RowID? {
            guard id.rowID > 0, UInt64(id.rowID) < BridgeRows.firstAllocated else { return nil }
            // (One scope a model for the process's life; compared as identifiers compare
            // scopes, should another be equal.)
            guard id.scope === keyedScope || (id.scope.keyIsRow && id.scope.hash == keyedScope.hash
                && id.entityName == keyedScope.entityName && id.storeIdentifier == keyedScope.storeIdentifier) else { return nil }
            return RowID(id.rowID)
        }

        /// The identifier of a row this bridge handed out; nil for a new object's row (no
        /// identifier from the store yet).
        func identifier(_ row: RowID) -> PersistentIdentifier? {
            if row < BridgeRows.firstAllocated {
                return row > 0 ? PersistentIdentifier(scope: keyedScope, rowID: Int64(row)) : nil
            }
            return idByRow[row]
        }

        /// The row of an identifier the bridge knows or that names its own (a key), noted as
        /// handed out; nil when it needs a row of the bridge's.
        mutating func knownRow(_ id: PersistentIdentifier) -> RowID? {
            if let row = rowByID[id] { return row }
            guard let row = keyedRow(id) else { return nil }
            keyedRowsSeen.insert(row)
            return row
        }

        /// The row an insert the store resolved onto `id` moves to, if some object already
        /// has it: a row of the maps, or a key handed out.
        func rowHeld(by id: PersistentIdentifier) -> RowID? {
            if let row = rowByID[id] { return row }
            guard let row = keyedRow(id), keyedRowsSeen.contains(row) else { return nil }
            return row
        }

        /// Names a row of the bridge's by an identifier.
        mutating func map(_ id: PersistentIdentifier, to row: RowID) {
            rowByID[id] = row
            idByRow[row] = id
        }
    }

    /// A model's rows taken out of the state (or made), to be put back (`tables[name] = `):
    /// its name hashed once for a run of changes.
    mutating func takeTable(_ name: String) -> EntityRows {
        tables.removeValue(forKey: name) ?? EntityRows(name, storeIdentifier: storeIdentifier)
    }

    /// `body` on a model's rows (made first if need be), in place.
    mutating func withTable<R>(_ name: String, _ body: (inout EntityRows) throws -> R) rethrows -> R {
        try body(&tables[name, default: EntityRows(name, storeIdentifier: storeIdentifier)])
    }

    mutating func row(for id: PersistentIdentifier, _ entity: Entity, rows: RowAllocator) -> RowID {
        let id = remapped[id] ?? id
        return withTable(entity.name) { table in
            if let row = table.knownRow(id) { return row }
            if id.isTemporary { return RowID(-id.rowID) }
            let row = rows.allocate(entity.name)
            table.map(id, to: row)
            return row
        }
    }

    /// Keeps a snapshot as its row's record; its row (nil for a model this store does not keep).
    mutating func keep(_ snapshot: DefaultSnapshot, entities: [String: Entity], rows: RowAllocator) throws -> RowID? {
        guard let entity = entities[snapshot.persistentIdentifier.entityName] else {
            throw StrataError(.unknownModel, "A custom store answered with a snapshot of \(snapshot.persistentIdentifier.entityName), which is not a model this container keeps in it. Answer with snapshots of its schema's models only.")
        }
        let row = row(for: snapshot.persistentIdentifier, entity, rows: rows)
        let record = try record(of: snapshot, entity, rows: rows)
        withTable(entity.name) { table in
            table.records[row] = record
            table.deleted.remove(row)
        }
        kept.note(entity.name, row, record)
        return row
    }

    /// Keeps snapshots as their rows' records (`keep(_:entities:rows:)` for each); their models
    /// and rows. A run of snapshots of one model without relationships is kept with its rows
    /// taken out of the state once: its name is hashed once, not four times a snapshot.
    mutating func keep(_ snapshots: [DefaultSnapshot], entities: [String: Entity], rows: RowAllocator) throws -> [(entity: String, row: RowID)] {
        var kept: [(entity: String, row: RowID)] = []
        kept.reserveCapacity(snapshots.count)
        for run in snapshots.runs(by: \.persistentIdentifier.entityName) {
            let name = snapshots[run.lowerBound].persistentIdentifier.entityName
            guard let entity = entities[name], entity.relationships.isEmpty else {
                for snapshot in snapshots[run] {
                    if let row = try keep(snapshot, entities: entities, rows: rows) { kept.append((name, row)) }
                }
                continue
            }
            var table = takeTable(name)
            defer { tables[name] = table }
            let records = SnapshotRecords(entity: entity)
            // A layout's positions, found once for its run of snapshots.
            var positions: SnapshotRecords.LayoutPositions? = nil
            for snapshot in snapshots[run] {
                let id = remapped[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
                let row: RowID
                if let known = table.knownRow(id) {
                    row = known
                } else if id.isTemporary {
                    row = RowID(-id.rowID)
                } else {
                    row = rows.allocate(name)
                    table.map(id, to: row)
                }
                let record = try records.record(of: snapshot, positions: &positions) { target, id in
                    throw StrataError(.corruptRecord, "A custom store's snapshot of \(name) refers to \(id), which is not a \(target.name).")
                }
                table.records[row] = record
                self.kept.note(name, row, record)
                if !table.deleted.isEmpty { table.deleted.remove(row) }
                kept.append((name, row))
            }
        }
        return kept
    }

    /// The record of a snapshot's values, its related identifiers named by rows.
    mutating func record(of snapshot: DefaultSnapshot, _ entity: Entity, rows: RowAllocator) throws -> [UInt8] {
        var related: [PersistentIdentifier: RowID] = [:]
        for relationship in entity.relationships {
            guard case .identifiers(let ids)? = snapshot[relationship.name] else { continue }
            for id in ids { related[id] = row(for: id, relationship.targetEntity, rows: rows) }
        }
        return try SnapshotRecords(entity: entity).record(of: snapshot) { target, id in
            guard let row = related[id] else {
                throw StrataError(.corruptRecord, "A custom store's snapshot of \(entity.name) refers to \(id), which is not a \(target.name).")
            }
            return row
        }
    }
}
