import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// A read of a custom store through its bridge: what the bridge keeps, and what the store
/// answers for the descriptors the context sends (`candidates`).
class BridgeReader: StorageReader {
    let bridge: DataStoreStorage

    init(_ bridge: DataStoreStorage) { self.bridge = bridge }

    func collection(named name: String) -> CollectionID? { bridge.withState { $0.collections[name] } }

    func indexID(named name: String, in collection: CollectionID) -> IndexID? {
        bridge.withState { $0.indexes[collection.rawValue]?.first { $0.name == name }?.id }
    }

    func indexNames(of collection: CollectionID) -> [(id: IndexID, name: String)] { bridge.withState { $0.indexes[collection.rawValue] ?? [] } }

    func count(in collection: CollectionID) throws -> Int {
        if bridge.isHistory(collection) { return try bridge.box.historyRecords(after: 0).count }
        let entity = try bridge.entity(collection)
        let fetch = StoreFetches.all(entity.type)
        if let n = try fetch.count(in: bridge.box, bridge.editingState) { return n }
        return try fetch.fetch(in: bridge.box, extra: 0, bridge.editingState).fetched.count
    }

    func nextRowID(in collection: CollectionID) throws -> RowID {
        // (A history token is the store's to give: this one only names the save's record.)
        if bridge.isHistory(collection) { return RowID(max(0, try bridge.box.newestHistoryToken())) + 1 }
        // The bridge's own rows (`BridgeRows`): below them, rows are keys.
        return BridgeRows.firstAllocated
    }

    func visitRecord(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard let record = try record(row, collection) else { return false }
        try record.withUnsafeBytes { try body($0) }
        return true
    }

    func record(_ row: RowID, _ collection: CollectionID) throws -> [UInt8]? {
        if bridge.isHistory(collection) {
            return try bridge.box.historyRecords(after: Int64(row) - 1).first { $0.token == Int64(row) }.map { try $0.record.historyRecord(bridge: bridge).encode() }
        }
        return try bridge.record(row, try bridge.entity(collection))
    }

    /// Every object of the collection's model, from the store, in row order.
    func forEachRecord(in collection: CollectionID, from start: RowID?, _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        if bridge.isHistory(collection) {
            // The store's history records, their objects named by rows of this process.
            for (token, record) in try bridge.box.historyRecords(after: Int64(max(1, start ?? 1)) - 1) {
                let bytes = try record.historyRecord(bridge: bridge).encode()
                if try !bytes.withUnsafeBytes({ try body(RowID(token), $0) }) { return }
            }
            return
        }
        let entity = try bridge.entity(collection)
        let answer = try StoreFetches.all(entity.type).fetch(in: bridge.box, extra: 0, bridge.editingState)
        let rows = try bridge.ingest(answer.fetched, related: answer.related).filter { $0.entity == entity.name }.map(\.row).sorted()
        for row in rows where row >= (start ?? 0) {
            guard let record = try record(row, collection) else { continue }
            if try !record.withUnsafeBytes({ try body(row, $0) }) { return }
        }
    }

    /// A custom store keeps no Strata index entries: a unique value is the store's to resolve.
    func lookup(_ key: [UInt8], in index: IndexID) throws -> RowID? { nil }

    func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, _ body: (RowID) throws -> Bool) throws {
        throw StrataError(.storeFailure, "A custom store keeps no Strata index entries; this read should have gone to the store (please report it).")
    }

    /// The rows the store answers with for the run's descriptor, in the store's order (those
    /// of the run's model: a store may answer with snapshots of others too).
    func candidates(_ query: StorageQuery) throws -> StoreCandidates? {
        guard let fetch = query.storeFetch else { return nil }
        let answer = try fetch.fetch(in: bridge.box, extra: query.pendingRows, bridge.editingState)
        let name = try bridge.entity(query.collection).name
        return StoreCandidates(rows: try bridge.ingest(answer.fetched, related: answer.related).filter { $0.entity == name }.map(\.row),
                               skippedOffset: answer.skippedOffset)
    }

    func count(_ query: StorageQuery) throws -> Int? {
        try query.storeFetch?.count(in: bridge.box, bridge.editingState)
    }

    /// A custom store's records hold their external values inline (`SaveOperation.writeBlobs`,
    /// `SnapshotRecords`): no record names a blob.
    func blob(_ id: BlobID) throws -> [UInt8] { throw Self.noBlobs(id) }

    /// What a record that names blob `id` is, in a custom store's bridge.
    static func noBlobs(_ id: BlobID) -> StrataError {
        StrataError(.corruptRecord, "A record of a custom store names the external value \(id), but a custom store's records hold their external values inline. The record is damaged (please report it).")
    }

    func blobFileExists(_ id: BlobID) throws -> Bool { false }

    func metadata(_ name: String) throws -> [UInt8]? {
        if name == HistoryRecord.prunedMetadata, bridge.box.recordsHistory {
            // The store's: every token below its oldest record (all it gave, when none is left).
            let pruned = try bridge.box.oldestHistoryToken().map { $0 - 1 } ?? bridge.box.newestHistoryToken()
            return withUnsafeBytes(of: RowID(max(0, pruned)).littleEndian) { Array($0) }
        }
        return bridge.withState { $0.metadata[name] }
    }

    /// The store's own change token when it has one (changes by other processes show), else
    /// the saves made through this bridge.
    var commitSequence: UInt64? { bridge.box.changeToken() ?? bridge.withState { $0.commits } }
}

/// The writer of a custom store's bridge: a save's writes, sent to the store as one request
/// when it commits.
final class BridgeWriter: BridgeReader, StorageWriter {
    private struct Put { let entity: Entity; let record: [UInt8] }
    private struct Target: Hashable { let collection: CollectionID; let row: RowID }
    private var puts: [Target: Put] = [:]
    private var putOrder: [Target] = []
    private var deletes: [(entity: Entity, row: RowID)] = []
    private var metadataChanges: [String: [UInt8]?] = [:]
    private var finished = false
    /// Who saves (`ModelContext.author`), told to the store in the request's editing state.
    var author: String?
    /// The save's history record (the context wrote it in the history collection), and the
    /// history records `deleteHistory` deletes.
    private var history: DataStoreHistoryRecord?
    private var historyDeletes: [Int64] = []
    /// After commit: inserted rows the store resolved onto objects it holds, by collection.
    private(set) var movedRows: [CollectionID: [RowID: RowID]] = [:]
    /// The store's versions of the objects the saving context read (`expectVersion`), and of
    /// the records this writer read itself (an edit of a row without its object, a deletion a
    /// rule reached): each update or deletion is sent with its row's, the version its values
    /// were read at (Docs/CustomStores.md, "Versions").
    private var expected: [Target: Int64] = [:]
    private var readVersions: [Target: Int64] = [:]
    /// After commit: the store's version of each saved row (`DataStoreSaveChangesResult
    /// .savedVersions`), by collection and row (an insert's, at the row it went to).
    private(set) var savedVersions: [CollectionID: [RowID: Int64]] = [:]

    deinit { finish() }

    private func finish() {
        guard !finished else { return }
        finished = true
        bridge.endWriting()
    }

    func createCollection(named name: String) throws -> CollectionID {
        bridge.withState { state in
            if let id = state.collections[name] { return id }
            let id = CollectionID(rawValue: UInt32(state.collections.count + 1))
            state.collections[name] = id
            state.collectionNames[id.rawValue] = name
            return id
        }
    }

    func createIndex(named name: String, on collection: CollectionID, unique: Bool) throws -> IndexID {
        bridge.withState { state in
            if let found = state.indexes[collection.rawValue]?.first(where: { $0.name == name }) { return found.id }
            let id = IndexID(rawValue: state.nextIndex)
            state.nextIndex += 1
            state.indexes[collection.rawValue, default: []].append((id, name))
            return id
        }
    }

    func dropIndex(_ index: IndexID) throws {
        bridge.withState { state in for key in state.indexes.keys { state.indexes[key]?.removeAll { $0.id == index } } }
    }

    override func record(_ row: RowID, _ collection: CollectionID) throws -> [UInt8]? {
        let target = Target(collection: collection, row: row)
        if let put = puts[target] { return put.record }
        let record = try super.record(row, collection)
        if let record, !bridge.isHistory(collection), readVersions[target] == nil,
           let version = SnapshotRecords.storeVersion(of: record, propertyCount: try bridge.entity(collection).properties.count) {
            readVersions[target] = version
        }
        return record
    }

    /// The saving context read `row` at the store's `version`: its update or deletion is sent
    /// with it (rather than the version of the record the bridge holds now, which another
    /// context's later read may have replaced).
    func expectVersion(_ version: Int64, row: RowID, in collection: CollectionID) {
        expected[Target(collection: collection, row: row)] = version
    }

    /// The version an update or deletion of `row` is sent with: the context's, else the one
    /// this writer read, else (`stored`) the one of the record the bridge holds; then the
    /// version this container's own saves took it to from there (`BridgeState.OwnSaves`).
    private func version(_ row: RowID, _ collection: CollectionID, stored: [UInt8]?, _ entity: Entity,
                         own: BridgeState.OwnSaves) -> Int64? {
        let target = Target(collection: collection, row: row)
        guard let version = expected[target] ?? readVersions[target]
                ?? stored.flatMap({ SnapshotRecords.storeVersion(of: $0, propertyCount: entity.properties.count) }) else { return nil }
        return own.isEmpty ? version : own.latest(collection, row, from: version)
    }

    private func isStored(_ row: RowID, _ entity: Entity) -> Bool {
        bridge.withState { $0.tables[entity.name].map { $0.identifier(row) != nil && !$0.deleted.contains(row) } ?? false }
    }

    /// Room for `count` records at once (at most one per object of the save): grown from
    /// empty, the map of a 20k-object save's records was copied a dozen times.
    func expectPuts(_ count: Int) {
        puts.reserveCapacity(count)
        putOrder.reserveCapacity(count)
    }

    func put(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey], previousKeys: [IndexKey]) throws {
        if bridge.isHistory(collection) {
            // Named by identifiers now, while the new objects' temporary ones are in the map.
            history = try DataStoreHistoryRecord(try HistoryRecord(decoding: record), bridge: bridge)
            return
        }
        let entity = try bridge.entity(collection)
        let target = Target(collection: collection, row: row)
        if puts[target] == nil { putOrder.append(target) }
        puts[target] = Put(entity: entity, record: Array(record))
    }

    func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                       indexKeys: [IndexKey], previousKeys: [IndexKey]) throws -> StorageConflict? {
        try put(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys)
        return nil
    }

    func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                       previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> StorageConflict? {
        let entity = try bridge.entity(collection)
        if isStored(row, entity) || puts[Target(collection: collection, row: row)] != nil, let old = try self.record(row, collection) {
            _ = try old.withUnsafeBytes { try previousKeysOf($0) }
        }
        try put(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: [])
        return nil
    }

    /// The store gives the token when it saves (`put` keeps the record, not its row): any row
    /// names it, and asking the store for its newest token cost each save a round trip.
    func rowForNewHistoryRecord(in collection: CollectionID) throws -> RowID {
        bridge.isHistory(collection) ? BridgeRows.firstAllocated : try nextRowID(in: collection)
    }

    @discardableResult
    func delete(_ row: RowID, in collection: CollectionID, indexKeys: [IndexKey]) throws -> Bool {
        if bridge.isHistory(collection) {
            historyDeletes.append(Int64(row))
            return true
        }
        let entity = try bridge.entity(collection)
        let target = Target(collection: collection, row: row)
        let pending = puts.removeValue(forKey: target) != nil
        putOrder.removeAll { $0 == target }
        guard isStored(row, entity) else { return pending }
        deletes.append((entity, row))
        return true
    }

    /// Never asked: a save keeps a custom store's external values inline in their records.
    func putBlob(_ bytes: [UInt8]) throws -> BlobID {
        throw StrataError(.storeFailure, "A custom store keeps external values inline in its snapshots, not in blobs; this save should not have asked for one (please report it).")
    }

    func deleteBlob(_ id: BlobID) throws {}

    func setMetadata(_ name: String, _ value: [UInt8]?) throws {
        // A history-recording store's expired tokens follow from its records (`metadata`).
        if name == HistoryRecord.prunedMetadata, bridge.box.recordsHistory { return }
        metadataChanges[name] = .some(value)
    }

    override func metadata(_ name: String) throws -> [UInt8]? {
        if let changed = metadataChanges[name] { return changed }
        return try super.metadata(name)
    }

    func rollback() { finish() }

    /// The save's writes as snapshots, each update and deletion at its version. (A function of
    /// its own: the copy of the container's steps it reads is let go before `SavePlan.apply`
    /// notes more, which would otherwise copy them all.)
    private func makePlan() throws -> SavePlan {
        let (collections, own) = bridge.withState { ($0.collections, $0.ownSaves) }
        return try SavePlan(puts: putOrder.compactMap { target in puts[target].map { (target.row, $0.entity, $0.record) } },
                            deletes: deletes, bridge: bridge) { row, entity, stored in
            collections[entity.name].flatMap { version(row, $0, stored: stored, entity, own: own) }
        }
    }

    /// Sends the writes to the store as one save request; the bridge's map and records change
    /// only once the store has saved them.
    func commit() throws {
        defer { finish() }
        let editingState = EditingState(id: bridge.editingState.id, author: author)
        let plan = try makePlan()
        var answer = DataStoreSaveAnswer()
        if !plan.isEmpty {
            answer = try bridge.box.save(inserted: plan.inserted.map(\.snapshot), updated: plan.updated.map(\.snapshot),
                                         deleted: plan.deleted.map(\.snapshot), history: history, editingState)
        }
        if !historyDeletes.isEmpty { try bridge.box.deleteHistoryRecords(historyDeletes) }
        (movedRows, savedVersions) = try bridge.withState { state in
            state.forgetOldRecords()
            let applied = try plan.apply(remapped: answer.remapped, versions: answer.versions, replaced: answer.replacedVersions,
                                         to: &state, rows: bridge.rows)
            for (name, value) in metadataChanges { state.metadata[name] = value }
            if !plan.isEmpty { state.commits += 1 }
            return applied
        }
        if !answer.reregister.isEmpty { try bridge.ingest(Array(answer.reregister.values), related: [:]) }
    }
}

extension DataStoreStorage {
    func endWriting() { writerGate.signal() }

    /// Sends `delete(model:where:)` requests to a `DataStoreBatching` store, each a request of
    /// its own (`ModelContext.sendStoreBatchDeletes`), the writer gate held as a save holds it.
    /// `body` gets the function that sends one: false when the store declines it, as it does not
    /// evaluate its predicate (`DataStoreError.preferInMemoryFilter`).
    func sendingBatchDeletes(author: String?, _ body: ((StoreBatchDelete) throws -> Bool) throws -> Void) throws {
        writerGate.wait()
        defer { writerGate.signal() }
        let editingState = EditingState(id: self.editingState.id, author: author)
        try body { delete in
            do {
                try delete.send(box, editingState)
            } catch let error as DataStoreError where error == .preferInMemoryFilter {
                return false
            }
            withState { $0.commits += 1 }
            return true
        }
    }
}

extension RandomAccessCollection where Index == Int {
    /// The runs of consecutive elements with the same key, in order, as ranges of indexes.
    func runs<Key: Equatable>(by key: (Element) -> Key) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start = startIndex
        while start < endIndex {
            let first = key(self[start])
            var end = start + 1
            while end < endIndex, key(self[end]) == first { end += 1 }
            runs.append(start..<end)
            start = end
        }
        return runs
    }
}

/// One save's writes as the snapshots a store receives.
struct SavePlan {
    struct Item {
        let entity: Entity
        let row: RowID
        let snapshot: DefaultSnapshot
        /// The record the snapshot was made from (an insert's or an update's).
        var record: [UInt8]? = nil
    }
    private(set) var inserted: [Item] = []
    private(set) var updated: [Item] = []
    private(set) var deleted: [Item] = []
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// `version` gives the version an update or deletion of a row is sent with, from the record
    /// the bridge holds (nil for an update, whose record is the context's).
    init(puts: [(RowID, Entity, [UInt8])], deletes: [(entity: Entity, row: RowID)], bridge: DataStoreStorage,
         version: (RowID, Entity, _ stored: [UInt8]?) -> Int64?) throws {
        // The snapshots are of one layout per model (its properties' names, in order): no
        // dictionary is made per object, and a store finds each value's position once.
        var layouts: [ObjectIdentifier: DefaultSnapshot.Layout] = [:]
        func snapshot(_ id: PersistentIdentifier, _ record: [UInt8], _ entity: Entity, version: Int64?) throws -> DefaultSnapshot {
            let records = SnapshotRecords(entity: entity)
            let values = try record.withUnsafeBytes { raw in
                try records.orderedValues(of: raw, identifier: { bridge.identifier($0, $1) }, blob: { throw BridgeReader.noBlobs(BlobID(rawValue: $0)) })
            }
            let layout: DefaultSnapshot.Layout
            if let known = layouts[ObjectIdentifier(entity)] { layout = known } else {
                layout = records.layout
                layouts[ObjectIdentifier(entity)] = layout
            }
            return DefaultSnapshot(persistentIdentifier: id, layout: layout, values: values, version: version)
        }
        for (row, entity, record) in puts {
            let id = bridge.identifier(entity, row)
            let item = Item(entity: entity, row: row, snapshot: try snapshot(id, record, entity, version: id.isTemporary ? nil : version(row, entity, nil)),
                            record: record)
            if id.isTemporary { inserted.append(item) } else { updated.append(item) }
        }
        // The stored values go with a deletion, as a store may want them (a tombstone): the
        // records the bridge let go (`BridgeState.forgetOldRecords`) read again first, with one
        // fetch a model.
        for run in deletes.runs(by: { ObjectIdentifier($0.entity) }) {
            let entity = deletes[run.lowerBound].entity
            try bridge.load(deletes[run].map(\.row), entity)
        }
        for (entity, row) in deletes {
            let id = bridge.identifier(entity, row)
            let record = try bridge.record(row, entity)
            let version = version(row, entity, record)
            let stored = try record.map { try snapshot(id, $0, entity, version: version) }
            deleted.append(Item(entity: entity, row: row, snapshot: stored ?? DefaultSnapshot(persistentIdentifier: id, values: [:], version: version)))
        }
    }

    /// After the store saved: each inserted row is named by its permanent identifier (or, an
    /// insert the store resolved onto an object it holds, moves to that object's row), the
    /// records are kept with the store's new versions (`versions`, by the snapshots'
    /// identifiers; `replaced`: the versions upserts replaced), the deleted rows forgotten.
    /// Returns the moved rows and the saved rows' versions, by collection.
    func apply(remapped: [PersistentIdentifier: PersistentIdentifier], versions: [PersistentIdentifier: Int64],
               replaced: [PersistentIdentifier: Int64] = [:], to state: inout BridgeState,
               rows: RowAllocator) throws -> (moved: [CollectionID: [RowID: RowID]], versions: [CollectionID: [RowID: Int64]]) {
        var moved: [CollectionID: [RowID: RowID]] = [:]
        var saved: [CollectionID: [RowID: Int64]] = [:]
        // Each model's rows are taken out of the state while its new objects go in: its name
        // is hashed once, not four times an object, and its maps grow once. (The items are read
        // by index, field by field: a loop over them copied each item, retaining its parts.)
        if !inserted.isEmpty { state.remapped.trim() }
        for run in inserted.indices.runs(by: { ObjectIdentifier(inserted[$0].entity) }) {
            let name = inserted[run.lowerBound].entity.name
            var table = state.takeTable(name)
            table.idByRow.reserveCapacity(run.count)
            let collection = state.collections[name]
            for i in run {
                let temporary = inserted[i].snapshot.persistentIdentifier, itemRow = inserted[i].row
                let permanent = remapped[temporary] ?? temporary
                if let existing = table.rowHeld(by: permanent), existing != itemRow {
                    // Only an insert that moved needs its temporary identifier kept: any other
                    // names its own row (`BridgeState.row(for:)`), and the map would grow by
                    // every object a process ever inserts.
                    state.remapped.note(temporary, permanent)
                    if let collection { moved[collection, default: Dictionary(minimumCapacity: run.count)][itemRow] = existing }
                    if table.deleted.contains(existing) { reuse(existing, of: name, version: versions[temporary], &table, &state) }
                } else if let key = table.keyedRow(permanent), let collection {
                    // A key that is a row (`BridgeRows`): the insert moves to it, as an upsert
                    // moves to the row of the object it updated, and no map holds it. (Kept
                    // under its own row, each object a process inserts would stay in the maps
                    // for the process's life.)
                    state.remapped.note(temporary, permanent)
                    table.keyedRowsSeen.insert(key)
                    if table.deleted.contains(key) { reuse(key, of: name, version: versions[temporary], &table, &state) }
                    moved[collection, default: Dictionary(minimumCapacity: run.count)][itemRow] = key
                } else {
                    // (The insert keeps the row it was made at, named by the store's
                    // identifier: a key no object had is mapped to it.)
                    table.map(permanent, to: itemRow)
                }
            }
            state.tables[name] = table
        }
        for items in [inserted, updated] {
            for run in items.indices.runs(by: { ObjectIdentifier(items[$0].entity) }) {
                let entity = items[run.lowerBound].entity
                // The context's own records, unless one names a row an insert moved from (the
                // snapshot's identifiers lead to the row it moved to): then each record is
                // made anew from its snapshot, with the whole state in place.
                let ownRecords = (moved.isEmpty || entity.relationships.isEmpty) && run.allSatisfy { items[$0].record != nil }
                let collection = state.collections[entity.name]
                var table = state.takeTable(entity.name)
                if ownRecords { table.records.reserveCapacity(run.count) }
                for i in run {
                    let id = items[i].snapshot.persistentIdentifier
                    let known = state.remapped[id] ?? id
                    let row = table.rowByID[known] ?? table.keyedRow(known) ?? items[i].row
                    // The record is kept with the version the store gave it now, or with none
                    // (never the one the update was sent with).
                    let version = versions.isEmpty ? nil : versions[id]
                    if let version, let collection {
                        saved[collection, default: Dictionary(minimumCapacity: run.count)][row] = version
                        // An update's step is from the version it was sent at; an upsert's, from
                        // the one the store says it replaced.
                        if let from = items[i].snapshot.version ?? (replaced.isEmpty ? nil : replaced[id]), from != version {
                            state.ownSaves.note(collection, row, from: from, to: version)
                        }
                    }
                    if ownRecords, var record = items[i].record {
                        if let version { record = try SnapshotRecords.record(record, propertyCount: entity.properties.count, version: version) }
                        table.records[row] = record
                        state.kept.note(entity.name, row, record)
                    } else {
                        state.tables[entity.name] = table
                        let record = try state.record(of: items[i].snapshot.withVersion(version), entity, rows: rows)
                        table = state.takeTable(entity.name)
                        table.records[row] = record
                        state.kept.note(entity.name, row, record)
                    }
                }
                state.tables[entity.name] = table
            }
        }
        for item in deleted {
            // The row keeps its identifier: the deleted object's `persistentModelID` stays.
            state.tables[item.entity.name]?.records[item.row] = nil
            state.tables[item.entity.name]?.deleted.insert(item.row)
        }
        return (moved, saved)
    }

    /// A new object at the row of a deleted one: a store may give a deleted object's key to a
    /// new object. The row holds a stored object again (else its changes were taken for a
    /// conflict and its deletion never sent), and the version steps this container's saves
    /// made of the deleted object are not the new one's (else its first update was sent at the
    /// old object's version).
    private func reuse(_ row: RowID, of name: String, version: Int64?, _ table: inout BridgeState.EntityRows, _ state: inout BridgeState) {
        table.deleted.remove(row)
        if let version, let collection = state.collections[name] { state.ownSaves.forget(collection, row, from: version) }
    }
}
