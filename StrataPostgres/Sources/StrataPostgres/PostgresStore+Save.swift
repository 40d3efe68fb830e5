import Foundation
import Strata

extension PostgresStore {
    /// One save in one SQL transaction (Docs/Postgres.md, "Saves"), retried as a whole on a
    /// serialization failure, a deadlock, or a unique value another writer took meanwhile. A
    /// save of new objects, of changed ones or of deleted ones, of one model without
    /// relationships is one statement, which is a transaction of its own
    /// (`SaveRun.runAsOneStatement`).
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try saveChanges(request, history: nil)
    }

    /// The save, with its history record written in the same transaction (Strata-only,
    /// `HistoryRecordingDataStore`).
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, history: DataStoreHistoryRecord) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try saveChanges(request, history: history)
    }

    func saveChanges(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, history: DataStoreHistoryRecord?) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        guard configuration.allowsSave else {
            throw StrataError(.readOnly, "The PostgreSQL store at \(configuration.location) was opened with allowsSave: false; it cannot save changes.")
        }
        // Inserts try a plain insert first (`SaveRun.insert`); once one met a row another
        // writer inserted meanwhile, the retries upsert with `ON CONFLICT`, which cannot fail so.
        // A pinned session is not retried, so it upserts from the start.
        var plainInserts = !session.isPinned
        if plainInserts, let history, let table = oneStatementTable(request) {
            do {
                let outcome = try session.statement { c in
                    var run = SaveRun(store: self, request: request, history: history, plainInserts: true)
                    return try run.runAsOneStatement(table, history, c)
                }
                savedHere()
                return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: outcome.remapped, savedVersions: outcome.saved,
                                                  replacedVersions: outcome.replaced)
            } catch let error where PostgresStoreError.sqlState(error) == "23505" || isUnfinished(error) {
                // A unique value a row holds (the objects are upserts), an object another
                // writer changed, or a missing counter row: the statement changed nothing, and
                // the transaction upserts, or says what is wrong.
            }
        }
        let outcome = try session.transaction(alsoRetrying: ["23505"]) { c in
            var run = SaveRun(store: self, request: request, history: history, plainInserts: plainInserts)
            do { return try run.run(c) } catch {
                if run.plainInsertCollided { plainInserts = false }
                throw error
            }
        }
        savedHere()
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: outcome.remapped, savedVersions: outcome.saved,
                                          replacedVersions: outcome.replaced)
    }
}

extension PostgresStore {
    /// The table of a save that `SaveRun.runAsOneStatement` can make: new objects only, changed
    /// ones only, or deleted ones only, of one model without relationships or external values,
    /// few enough for one statement.
    fileprivate func oneStatementTable(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) -> PostgresTable? {
        let kinds = [request.inserted, request.updated, request.deleted].filter { !$0.isEmpty }
        guard kinds.count == 1, let objects = kinds.first else { return nil }
        guard let first = objects.first, objects.count <= configuration.bulkPartSize else { return nil }
        let name = first.persistentIdentifier.entityName
        guard let table = tables[name], table.toOnes.isEmpty, table.toManys.isEmpty, table.entity.relationships.isEmpty,
              table.externals.isEmpty, objects.allSatisfy({ $0.persistentIdentifier.entityName == name }) else { return nil }
        return table
    }
}

/// What a save did, for the store to remember once it committed.
struct SaveOutcome {
    var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
    /// The new version of each inserted and updated object, by the identifier its snapshot had
    /// (`DataStoreSaveChangesResult.savedVersions`).
    var saved: [PersistentIdentifier: Int64] = [:]
    /// For each insert that upserted onto a stored row, the version of the row it replaced
    /// (`DataStoreSaveChangesResult.replacedVersions`): one less than the version it left, as
    /// every statement raises `_version` by one.
    var replaced: [PersistentIdentifier: Int64] = [:]
}

/// One run of a save's transaction (a retry starts a new one).
struct SaveRun {
    let store: PostgresStore
    let request: DataStoreSaveChangesRequest<DefaultSnapshot>
    let history: DataStoreHistoryRecord?
    /// Inserted objects' rows: the id allocated, then the row they went to (an upsert's).
    private var allocated: [PersistentIdentifier: Int64] = [:]
    private var final: [PersistentIdentifier: Int64] = [:]
    private var outcome = SaveOutcome()
    /// The attributes each insert that upserted onto a stored row changed (with history).
    private var upsertChanges: [PersistentIdentifier: [String]] = [:]
    /// True once an insert went to a stored row (its history change becomes an update).
    private var upserted = false
    /// The rows an upsert unlinked from the row it went to, and their new versions, by model.
    private var raisedRows: [String: [Int64: Int64]] = [:]
    private var conflicts: [PersistentIdentifier] = []
    /// The objects a written relationship names that are not in the store when it is written:
    /// deleted by this save (its deletes run first) or before (`checkReferences`). They are
    /// written as no reference, as the engine reads them; the deferred foreign key would
    /// otherwise refuse the commit.
    private var gone: Set<PersistentIdentifier>
    /// Whether a model with one unique constraint inserts with a plain `INSERT` of the rows
    /// whose unique values no row holds, upserting only the others (see `insert`).
    private let plainInserts: Bool
    /// Set when that plain insert met a unique value another writer inserted after the
    /// statement began (23505): the transaction is retried, upserting.
    private(set) var plainInsertCollided = false

    init(store: PostgresStore, request: DataStoreSaveChangesRequest<DefaultSnapshot>, history: DataStoreHistoryRecord?, plainInserts: Bool = false) {
        self.store = store
        self.request = request
        self.history = history
        self.plainInserts = plainInserts
        gone = request.deleted.isEmpty ? [] : Set(request.deleted.map(\.persistentIdentifier))
    }

    private var namespace: String { store.namespace }

    mutating func run(_ c: SQLConnection) throws -> SaveOutcome {
        try allocateIdentifiers(c)
        // The engine's order: deletes, then updates, then inserts, so that a unique value a
        // delete or an update gives up is free for an insert, and an insert that upserts onto
        // a stored object wins over the same save's update of it.
        for (table, snapshots) in try grouped(request.deleted) { try delete(table, snapshots, c) }
        try checkReferences(c)
        for (table, snapshots) in try grouped(request.updated) {
            try update(table, snapshots.map { (try pk($0.persistentIdentifier), $0, true) }, c)
        }
        var resolvedUpdates: [(PostgresTable, Int64, DefaultSnapshot)] = []
        for (table, snapshots) in try grouped(request.inserted) {
            try insert(table, snapshots, c, resolvedUpdates: &resolvedUpdates)
        }
        try fixReferencesToUpserts(c)
        for (table, id, snapshot) in resolvedUpdates { try update(table, [(id, snapshot, false)], c, comparing: history != nil) }
        if !conflicts.isEmpty {
            let shown = conflicts.prefix(10).map(\.description).joined(separator: ", ")
            throw StrataError(.saveConflict, "The save changes or deletes \(conflicts.count) object(s) that another writer changed or deleted after this context read them (\(shown)). Nothing was saved, and the context keeps its changes: call rollback() or fetch them again, then save.", objects: conflicts)
        }
        try writeRelationships(c)
        try unlinkWhatUpsertsDropped(c)
        try writeExternals(c)
        // (By index: a loop over the snapshots copied each one, retaining its values.)
        for i in request.inserted.indices {
            let temporary = request.inserted[i].persistentIdentifier
            guard let id = final[temporary] else { continue }
            outcome.remapped[temporary] = try store.identifier(temporary.entityName, id)
        }
        try store.announceCommit(history: history.map { (upserted ? upsertsAsUpdates($0) : $0).remapped(outcome.remapped) }, c)
        if upserted { try raiseUpdatesOfUpsertedRows() }
        return outcome
    }

    /// A save of new objects, of changed ones or of deleted ones, of one model that has no
    /// relationships and no external values (`PostgresStore.oneStatementTable`), with its
    /// history record: the writes and the save's close (`PostgresStore.closingExpressions`) in
    /// one statement, run outside a transaction, where it is all or nothing as a transaction
    /// is: one round trip, where the transaction takes four (Docs/Postgres.md, "Saves").
    /// Prepared from its second run.
    ///
    /// New objects go in with a plain `INSERT`: a unique value a row holds fails it whole
    /// (23505, thrown as it is). Changed and deleted objects are updated or deleted at the
    /// versions the context read (optimistic locking, as `update` and `delete`); unless every
    /// row was, the record's token is left NULL, which fails the statement whole (23502, as for
    /// a missing counter row, `PostgresStore.isUnfinished`). Either way nothing is saved, and
    /// the caller then saves in a transaction, which upserts, or says which objects another
    /// writer changed.
    mutating func runAsOneStatement(_ table: PostgresTable, _ record: DataStoreHistoryRecord, _ c: SQLConnection) throws -> SaveOutcome {
        if !request.updated.isEmpty { return try updateAsOneStatement(table, record, c) }
        if !request.deleted.isEmpty { return try deleteAsOneStatement(table, record, c) }
        try allocateIdentifiers(c)
        let inserted = request.inserted
        var ids: [Int64] = []
        ids.reserveCapacity(inserted.count)
        for i in inserted.indices {
            let temporary = inserted[i].persistentIdentifier
            guard let id = allocated[temporary] else { throw StrataError(.storeFailure, "No identifier was allocated for \(temporary).") }
            ids.append(id)
            outcome.saved[temporary] = 1
            outcome.remapped[temporary] = try store.identifier(temporary.entityName, id)
        }
        let binds = [SQLArray(ids), SQLArray(.bigint)] + (try columnArrays(table, inserted))
        let sql = store.oneStatementSave(table.name) {
            let (names, values) = columnValues(table)
            let allNames = ["\"_id\"", "\"_version\""] + names, allValues = ["u.c0::bigint", "1"] + values
            return """
                WITH inserted AS (INSERT INTO \(table.qualified) (\(allNames.joined(separator: ", ")))
                                  SELECT \(allValues.joined(separator: ", ")) FROM \(unnest(binds, ordinality: false)) RETURNING 1),
                \(store.closingExpressions(from: binds.count + 1))
                SELECT (SELECT count(*) FROM inserted)::text, (SELECT count(*) FROM notified)::text, (SELECT count(*) FROM kept)::text
                """
        }
        let rows = try c.query(sql, arrays: binds, then: try store.closingBinds(record.remapped(outcome.remapped)), reused: true)
        try expectWritten(rows, inserted.count, "new", table)
        return outcome
    }

    /// The one row of a one-statement insert or deletion: the rows it wrote (all of them), and
    /// its notification and record (one each).
    private func expectWritten(_ rows: [[String?]], _ count: Int, _ kind: String, _ table: PostgresTable) throws {
        guard let counts = rows.first, counts.map({ $0 ?? "" }) == [String(count), "1", "1"] else {
            throw StrataError(.storeFailure, "The PostgreSQL server at \(store.configuration.location) answered a save of \(count) \(kind) \(table.name) objects with the counts \(rows.first.map { "\($0)" } ?? "none") (written, notified, recorded); the save may have been committed. Fetch the objects to see.")
        }
    }

    /// `runAsOneStatement` of changed objects: each row updated where its version is the one
    /// the context read, and the close only when every row was (`complete`).
    private mutating func updateAsOneStatement(_ table: PostgresTable, _ record: DataStoreHistoryRecord, _ c: SQLConnection) throws -> SaveOutcome {
        let updated = request.updated
        var ids: [Int64] = []
        ids.reserveCapacity(updated.count)
        var objects: [Int64: PersistentIdentifier] = [:]
        objects.reserveCapacity(updated.count)
        for snapshot in updated {
            let id = try pk(snapshot.persistentIdentifier)
            ids.append(id)
            objects[id] = snapshot.persistentIdentifier
        }
        let binds = [SQLArray(ids), SQLArray(updated.map(\.version))] + (try columnArrays(table, updated))
        let sql = store.oneStatementSave(table.name + "#update") {
            """
                WITH updated AS (UPDATE \(table.qualified) t SET \(assignments(table)) FROM \(unnest(binds, ordinality: false))
                                 WHERE t."_id" = u.c0::bigint AND (u.c1 IS NULL OR t."_version" = u.c1::bigint) RETURNING t."_id", t."_version"),
                complete AS (SELECT 1 WHERE (SELECT count(*) FROM updated) = $\(binds.count + 4)::text::bigint),
                \(store.closingExpressions(from: binds.count + 1, onlyIf: "complete"))
                SELECT r."_id"::text, r."_version"::text, (SELECT count(*) FROM notified)::text, (SELECT count(*) FROM kept)::text FROM updated r
                """
        }
        let rows = try c.query(sql, arrays: binds, then: try store.closingBinds(record) + [String(updated.count)], reused: true)
        for row in rows {
            guard row.count == 4, row[2] == "1", row[3] == "1", let id = row[0].flatMap(Int64.init), let version = row[1].flatMap(Int64.init),
                  let object = objects[id] else { continue }
            outcome.saved[object] = version
        }
        guard outcome.saved.count == updated.count else {
            throw StrataError(.storeFailure, "The PostgreSQL server at \(store.configuration.location) answered a save of \(updated.count) changed \(table.name) objects with \(rows.count) rows for \(outcome.saved.count) of them; the save may have been committed. Fetch the objects to see.")
        }
        return outcome
    }

    /// `runAsOneStatement` of deleted objects: each row deleted where its version is the one the
    /// context read, and the close only when every row was (`complete`).
    private mutating func deleteAsOneStatement(_ table: PostgresTable, _ record: DataStoreHistoryRecord, _ c: SQLConnection) throws -> SaveOutcome {
        let deleted = request.deleted
        let binds = [SQLArray(try deleted.map { try pk($0.persistentIdentifier) }), SQLArray(deleted.map(\.version))]
        let sql = store.oneStatementSave(table.name + "#delete") {
            """
                WITH deleted AS (DELETE FROM \(table.qualified) t USING unnest($1::bigint[], $2::bigint[]) AS u(c0, c1)
                                 WHERE t."_id" = u.c0 AND (u.c1 IS NULL OR t."_version" = u.c1) RETURNING 1),
                complete AS (SELECT 1 WHERE (SELECT count(*) FROM deleted) = $6::text::bigint),
                \(store.closingExpressions(from: 3, onlyIf: "complete"))
                SELECT (SELECT count(*) FROM deleted)::text, (SELECT count(*) FROM notified)::text, (SELECT count(*) FROM kept)::text
                """
        }
        let rows = try c.query(sql, arrays: binds, then: try store.closingBinds(record) + [String(deleted.count)], reused: true)
        try expectWritten(rows, deleted.count, "deleted", table)
        return outcome
    }

    /// An update of a row that an insert of the same save then upserted onto, or unlinked from
    /// the row it upserted onto (`raisedRows`): the update's object takes the version the
    /// row was left at (`outcome.saved` is filled as each statement returns its rows'
    /// versions, the update's first).
    private mutating func raiseUpdatesOfUpsertedRows() throws {
        guard !request.updated.isEmpty else { return }
        var upsertedRows = raisedRows
        for snapshot in request.inserted {
            let id = snapshot.persistentIdentifier
            guard let row = final[id], row != allocated[id], let version = outcome.saved[id] else { continue }
            upsertedRows[id.entityName, default: [:]][row] = version
        }
        guard !upsertedRows.isEmpty else { return }
        for snapshot in request.updated {
            let id = snapshot.persistentIdentifier
            if let version = upsertedRows[id.entityName]?[try pk(id)] { outcome.saved[id] = version }
        }
    }

    /// The context records an insert for each new object; one that upserted onto a stored row
    /// (found here, by the server) updated that row: the attributes whose values it changed,
    /// as the statement that wrote it compared them with the row it found.
    private func upsertsAsUpdates(_ record: DataStoreHistoryRecord) -> DataStoreHistoryRecord {
        struct UpsertedRow: Hashable { let entityName: String; let row: Int64 }
        var record = record
        var seen = Set<UpsertedRow>()
        // The last model's attribute names (a save's changes come in runs of one model).
        var last: (name: String, attributes: [String])? = nil
        record.changes = record.changes.compactMap { change in
            guard change.kind == .insert else { return change }
            let id = change.identifier
            guard let row = final[id], row != allocated[id] else { return change }
            let name = id.entityName
            if last?.name != name {
                guard let table = store.tables[name] else { return change }
                last = (name, table.entity.attributes.map(\.name))
            }
            // Two inserts of one save that landed on one stored row: one change.
            guard seen.insert(UpsertedRow(entityName: name, row: row)).inserted else { return nil }
            var change = change
            change.kind = .update
            change.attributes = upsertChanges[id] ?? last?.attributes ?? []
            return change
        }
        return record
    }

    // MARK: Identifiers

    /// One id from the sequence for each inserted object, in one round trip.
    private mutating func allocateIdentifiers(_ c: SQLConnection) throws {
        let count = request.inserted.count
        guard count > 0 else { return }
        // One row, the ids as one array's text: 20k rows of one id each took 2.4% of a
        // 20k-object save's time to read.
        // The sequence as a `regclass` constant, its name quoted as it was made: the server
        // finds it once, not once per id (20k ids: 13 -> 7 ms), and a namespace with capitals
        // or punctuation is found at all (unquoted, "Trips" was looked for as "trips").
        // A save of fewer objects than a block takes a block, and keeps the rest for the next
        // small saves of the store, which then need no round trip for theirs.
        var ids: [Int64]
        if let spare = store.takeSpareIDs(count) {
            ids = spare
        } else {
            let sequence = SQL.literal(PostgresTable.qualified(namespace, "strata_ids"))
            let asked = max(count, PostgresStore.idBlock)
            let rows = try c.query("SELECT array_agg(nextval(\(sequence)::regclass))::text FROM generate_series(1, $1::int)", [String(asked)], reused: true)
            ids = rows.first?.first.flatMap { $0 }.flatMap(Self.integers) ?? []
            guard ids.count == asked else { throw StrataError(.storeFailure, "The PostgreSQL server gave \(ids.count) identifiers for \(asked) asked.") }
            store.keepSpareIDs(ids[count...])
            ids.removeLast(asked - count)
        }
        // Room for every insert at once in the maps that hold one entry per insert (grown from
        // empty, each was copied a dozen times in a 20k-object save).
        allocated.reserveCapacity(count)
        final.reserveCapacity(count)
        outcome.remapped.reserveCapacity(count)
        outcome.saved.reserveCapacity(count + request.updated.count)
        for i in ids.indices { allocated[request.inserted[i].persistentIdentifier] = ids[i] }
    }

    /// The integers of a `bigint[]`'s text (`{1,2,3}`); nil if it is not one.
    static func integers(_ text: String) -> [Int64]? {
        var text = text
        return text.withUTF8 { bytes -> [Int64]? in
            guard bytes.count >= 2, bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}") else { return nil }
            var out: [Int64] = []
            out.reserveCapacity(bytes.count / 4)
            var value: Int64 = 0, digits = 0, negative = false
            for byte in bytes[1...] {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let (times, o1) = value.multipliedReportingOverflow(by: 10)
                    let (next, o2) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    guard !o1, !o2 else { return nil }
                    value = next
                    digits += 1
                case UInt8(ascii: "-") where digits == 0 && !negative: negative = true
                case UInt8(ascii: ","), UInt8(ascii: "}"):
                    guard digits > 0 else { return byte == UInt8(ascii: "}") && out.isEmpty && !negative ? out : nil }
                    out.append(negative ? -value : value)
                    value = 0; digits = 0; negative = false
                default: return nil
                }
            }
            return out
        }
    }

    /// The row an identifier names: a new object's (its upsert's), or a stored one's.
    private func pk(_ id: PersistentIdentifier) throws -> Int64 {
        if let row = final[id] ?? allocated[id] { return row }
        if let row = store.primaryKey(id) { return row }
        throw StrataError(.unknownModel, "The save refers to \(id), which is neither new in it nor an object of the PostgreSQL store at \(store.configuration.location).")
    }

    private func grouped(_ snapshots: [DefaultSnapshot]) throws -> [(PostgresTable, [DefaultSnapshot])] {
        // Groups in the order their models first appear. A request lists each model's objects
        // together, so a snapshot of the model before it joins that group without hashing its
        // model's name (a dictionary lookup per snapshot was 1.8% of a 20k-object save, `perf`).
        // One model's snapshots (a save of one model, the common case) are one group as they are.
        if let first = snapshots.first?.persistentIdentifier.entityName,
           snapshots.allSatisfy({ $0.persistentIdentifier.entityName == first }) {
            guard let table = store.tables[first] else {
                throw StrataError(.unknownModel, "\(first) is not in the schema of the PostgreSQL store at \(store.configuration.location).")
            }
            return [(table, snapshots)]
        }
        var names: [String] = []
        var groups: [[DefaultSnapshot]] = []
        var positions: [String: Int] = [:]
        var last = -1
        for snapshot in snapshots {
            let name = snapshot.persistentIdentifier.entityName
            if last < 0 || names[last] != name {
                if let known = positions[name] {
                    last = known
                } else {
                    last = names.count
                    positions[name] = last
                    names.append(name)
                    groups.append([])
                }
            }
            groups[last].append(snapshot)
        }
        return try zip(names, groups).map { name, group in
            guard let table = store.tables[name] else {
                throw StrataError(.unknownModel, "\(name) is not in the schema of the PostgreSQL store at \(store.configuration.location).")
            }
            return (table, group)
        }
    }

    /// Finds the stored objects that the written objects' relationships name and that are no
    /// longer stored, into `gone`. A context can name one: a relationship without an inverse
    /// keeps naming an object deleted later (no delete rule reaches it), and an object another
    /// writer deleted is still named by what this process read before. One query per model
    /// named, and none for a save that names no stored object.
    private mutating func checkReferences(_ c: SQLConnection) throws {
        guard store.tables.values.contains(where: { !$0.toOnes.isEmpty || !$0.toManys.isEmpty }) else { return }
        var named: [String: [Int64: PersistentIdentifier]] = [:]
        for snapshot in request.inserted + request.updated {
            guard let table = store.tables[snapshot.persistentIdentifier.entityName] else { continue }
            for relationship in table.toOnes.map(\.relationship) + table.toManys.map(\.relationship) {
                for target in snapshot.relatedIdentifiers(relationship.name) where allocated[target] == nil && !gone.contains(target) {
                    named[target.entityName, default: [:]][try pk(target)] = target
                }
            }
        }
        for (entity, targets) in named {
            guard let table = store.tables[entity] else { continue }
            // `FOR KEY SHARE`: a row found stays until this save commits (another writer's
            // delete of it waits), and a row another writer is deleting is waited for, then
            // not found. Read without a lock, a row deleted between this check and the commit
            // made the deferred foreign key refuse the commit (SQLSTATE 23503).
            let rows = try c.query("SELECT \"_id\"::text FROM \(table.qualified) WHERE \"_id\" = ANY($1::bigint[]) ORDER BY \"_id\" FOR KEY SHARE",
                                   [PostgresValues.arrayLiteral(targets.keys.map { String($0) })])
            let stored = Set(rows.compactMap { $0.first.flatMap { $0 }.flatMap(Int64.init) })
            for (id, target) in targets where !stored.contains(id) { gone.insert(target) }
        }
    }

    // MARK: Rows

    /// Runs the statement `sql` makes of a part's arrays (`$1` the ids, `$2` no versions, then
    /// `columnArrays`) on the new objects `snapshots`, in parts of the configuration's
    /// `bulkPartSize` rows; the rows they changed, summed. Each part is sent as soon as it is
    /// made, so the client makes the next part's arrays while the server runs the one before
    /// (20k rows in one statement: about 45 ms making the arrays before the server could start).
    /// postgres-nio writes a statement only once the one before it has ended, so the sending
    /// does not overlap. Every part sent is waited for; the first error is thrown.
    private func inParts(_ table: PostgresTable, _ snapshots: [DefaultSnapshot], _ ids: [Int64], _ c: SQLConnection,
                         _ sql: ([SQLArray]) -> String) throws -> Int {
        let partSize = max(1, store.configuration.bulkPartSize)
        var sent: [SQLConnection.PendingCount] = []
        var failure: (any Error)? = nil
        var start = 0
        while start < snapshots.count {
            let end = min(snapshots.count, start + partSize)
            do {
                let binds = [SQLArray(ids[start..<end]), SQLArray(.bigint)] + (try columnArrays(table, snapshots[start..<end]))
                sent.append(c.executeSoon(sql(binds), arrays: binds))
            } catch {
                failure = error
                break
            }
            start = end
        }
        var changed = 0
        for part in sent {
            do { changed += try part.wait() } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
        return changed
    }

    /// Each column's values, as typed arrays for `unnest`: the attributes, then the to-ones.
    private func columnArrays<Snapshots: Collection<DefaultSnapshot>>(_ table: PostgresTable, _ snapshots: Snapshots) throws -> [SQLArray] {
        var arrays = table.columns.map { SQLArray(SQLArray.Element($0.kind), capacity: snapshots.count) }
            + table.toOnes.map { _ in SQLArray(.bigint, capacity: snapshots.count) }
        // Each column's position in a layout, found once for the snapshots of that layout.
        var layout: DefaultSnapshot.Layout? = nil
        var positions: [Int?] = []
        for snapshot in snapshots {
            let own = snapshot.layout
            if let own, own !== layout {
                layout = own
                positions = table.columns.map { own.position(of: $0.property) }
            }
            for (i, column) in table.columns.enumerated() {
                let value = own == nil ? snapshot[column.property] : positions[i].flatMap(snapshot.value(at:))
                do { try arrays[i].append(value ?? .null, column.kind) } catch {
                    throw StrataError(.corruptRecord, "\(table.name).\(column.property) of \(snapshot.persistentIdentifier) has a value that does not fit its \(column.sqlType) column.", underlying: error)
                }
            }
            for (j, toOne) in table.toOnes.enumerated() {
                if let target = snapshot.relatedIdentifiers(toOne.relationship.name).first, !gone.contains(target) {
                    arrays[table.columns.count + j].append(try pk(target))
                } else {
                    arrays[table.columns.count + j].appendNull()
                }
            }
        }
        return arrays
    }

    /// The columns a row statement names, and each one's value from `u.c<k>` (k from 2: 0 is
    /// the id, 1 the version).
    private func columnValues(_ table: PostgresTable) -> (names: [String], values: [String]) {
        var names: [String] = [], values: [String] = []
        for (i, column) in table.columns.enumerated() {
            names.append(column.name)
            values.append("u.c\(i + 2)::\(column.sqlType)")
            if column.kind == .date {
                names.append(column.timestampName)
                values.append("to_timestamp(u.c\(i + 2)::double precision + 978307200)")
            }
        }
        for (j, toOne) in table.toOnes.enumerated() {
            names.append(toOne.column)
            values.append("u.c\(table.columns.count + j + 2)::bigint")
        }
        return (names, values)
    }

    /// An `UPDATE`'s `SET` list from the `unnest` rows aliased `u` (`columnValues`), the row's
    /// version raised by one.
    private func assignments(_ table: PostgresTable) -> String {
        let (names, values) = columnValues(table)
        return (zip(names, values).map { "\($0) = \($1)" } + ["\"_version\" = t.\"_version\" + 1"]).joined(separator: ", ")
    }

    /// The value of the column named `column` (quoted; an attribute's or a to-one's) in the rows
    /// of `unnest` aliased `alias`, cast to the column's type: `u.c<k>::type` (see `columnValues`).
    private func unnested(_ column: String, of table: PostgresTable, from alias: String, cast: Bool = true) -> String {
        let k = inputIndex(column, of: table)
        let type = table.columns.first { $0.name == column }?.sqlType ?? "bigint"
        return "\(alias).c\(k)" + (cast ? "::\(type)" : "")
    }

    /// `k` of the `c<k>` (and of the parameter `$<k+1>`) holding the column named `column`.
    private func inputIndex(_ column: String, of table: PostgresTable) -> Int {
        if let i = table.columns.firstIndex(where: { $0.name == column }) { return i + 2 }
        return table.columns.count + (table.toOnes.firstIndex { $0.column == column } ?? 0) + 2
    }

    /// The names of the attributes whose values in the row `old` differ from those of the
    /// `unnest` rows aliased `input`, as one text, comma-separated.
    private func changedAttributes(_ table: PostgresTable, old: String, input: String) -> String {
        let differences = table.columns.map { column in
            // json has no equality: its text, kept as written, is compared.
            let differs = column.keepsJSONText
                ? "\(old).\(column.name)::text IS DISTINCT FROM \(unnested(column.name, of: table, from: input, cast: false))"
                : "\(old).\(column.name) IS DISTINCT FROM \(unnested(column.name, of: table, from: input))"
            return "CASE WHEN \(differs) THEN \(SQL.literal(column.property)) END"
        }
        return "concat_ws(',', \((differences + ["''"]).joined(separator: ", ")))"
    }

    /// `unnest` of the array parameters as `u(c0, …, c<n-1>, ord)` (`ordinality`: with `ord`).
    private func unnest(_ arrays: [SQLArray], as alias: String = "u", ordinality: Bool = true) -> String {
        "unnest(\(arrays.indices.map { "$\($0 + 1)::\(arrays[$0].sqlType)" }.joined(separator: ", ")))"
            + (ordinality ? " WITH ORDINALITY" : "")
            + " AS \(alias)(\(arrays.indices.map { "c\($0)" }.joined(separator: ", "))\(ordinality ? ", ord" : ""))"
    }

    /// Inserts a model's new objects. With one unique constraint, an insert whose unique values
    /// a row has updates that row (`ON CONFLICT … DO UPDATE`, atomic against other writers);
    /// with several, the rows holding any of them are found first (one insert may match one row
    /// only), and a row another writer inserts meanwhile makes the transaction run again.
    private mutating func insert(_ table: PostgresTable, _ snapshots: [DefaultSnapshot], _ c: SQLConnection,
                                 resolvedUpdates: inout [(PostgresTable, Int64, DefaultSnapshot)]) throws {
        var pending = snapshots
        if table.uniques.count > 1 {
            let holders = try holdersOfUniqueValues(table, pending, c)
            var inserts: [DefaultSnapshot] = []
            for (i, snapshot) in pending.enumerated() {
                if let row = holders[i] {
                    upserted = true
                    final[snapshot.persistentIdentifier] = row
                    resolvedUpdates.append((table, row, snapshot))
                } else {
                    inserts.append(snapshot)
                }
            }
            pending = inserts
        }
        guard !pending.isEmpty else { return }
        var ids: [Int64] = []
        ids.reserveCapacity(pending.count)
        for i in pending.indices {
            guard let id = allocated[pending[i].persistentIdentifier] else { throw StrataError(.storeFailure, "No identifier was allocated for \(pending[i].persistentIdentifier).") }
            ids.append(id)
        }
        // The version of an inserted row is 1, a constant of the statement: its parameter is
        // an empty array (`unnest` pads a shorter array with NULLs), not 1 sent once a row.
        let noVersions = SQLArray(.bigint)
        let (names, values) = columnValues(table)
        let allNames = ["\"_id\"", "\"_version\""] + names
        let allValues = ["u.c0::bigint", "1"] + values
        if table.uniques.count != 1 {
            // A plain insert: each row is at the id it was given, version 1.
            _ = try inParts(table, pending, ids, c) { binds in
                "INSERT INTO \(table.qualified) (\(allNames.joined(separator: ", "))) SELECT \(allValues.joined(separator: ", ")) FROM \(unnest(binds))"
            }
            for i in pending.indices {
                final[pending[i].persistentIdentifier] = ids[i]
                outcome.saved[pending[i].persistentIdentifier] = 1
            }
            return
        }
        let unique = table.uniques[0]
        let updates = names.map { "\($0) = EXCLUDED.\($0)" } + ["\"_version\" = t.\"_version\" + 1"]
        // Each input row's row, by its unique values. NULL is one value there (the constraint
        // is NULLS NOT DISTINCT): a nullable column is compared as (is NULL, text), an equality
        // the server hashes, as `IS NOT DISTINCT FROM` is not (20k rows compared pairwise: 160 s).
        func key(_ row: String, _ input: String) -> (stored: [String], input: [String]) {
            var key: (stored: [String], input: [String]) = ([], [])
            for column in unique {
                let value = unnested(column, of: table, from: input)
                if table.isNullable(column) {
                    key.stored += ["(\(row).\(column) IS NULL)", "coalesce(\(row).\(column)::text, '')"]
                    key.input += ["(\(value) IS NULL)", "coalesce((\(value))::text, '')"]
                } else {
                    key.stored.append("\(row).\(column)")
                    key.input.append(value)
                }
            }
            return key
        }
        func same(_ row: String, _ input: String) -> String {
            let key = key(row, input)
            return zip(key.stored, key.input).map { "\($0) = \($1)" }.joined(separator: " AND ")
        }
        if plainInserts, !unique.contains(where: table.isNullable) {
            // First a plain insert of the rows whose unique values no row holds: `ON CONFLICT`
            // makes each row a speculative insertion, confirmed or undone, and the history's
            // comparison with the rows upserted onto reads the inputs again. 20k new rows on
            // the server: 172 ms that way, 119 ms this way (Docs/Postgres.md, "Saves"). The
            // test of each row is a lookup in the unique constraint's index (its columns are
            // not null, so it compares them as they are). A row another writer inserts after
            // the statement began fails it (23505): the transaction is retried with `ON CONFLICT`.
            let inserted: Int
            do {
                inserted = try inParts(table, pending, ids, c) { binds in """
                    INSERT INTO \(table.qualified) (\(allNames.joined(separator: ", "))) SELECT \(allValues.joined(separator: ", ")) FROM \(unnest(binds, ordinality: false))
                    WHERE NOT EXISTS (SELECT 1 FROM \(table.qualified) s WHERE \(same("s", "u")))
                    """
                }
            } catch let error where PostgresStoreError.sqlState(error) == "23505" {
                plainInsertCollided = true
                throw error
            }
            // The rows it left out (their unique values are held) are upserted below. Found by
            // the ids they were not inserted at, so that a save of new objects only, the common
            // case, reads nothing back.
            var held = [Bool](repeating: false, count: pending.count)
            var heldCount = 0
            if inserted != pending.count {
                let rows = try c.query("""
                    SELECT u.ord::text FROM unnest($1::bigint[]) WITH ORDINALITY AS u(id, ord)
                    WHERE NOT EXISTS (SELECT 1 FROM \(table.qualified) t WHERE t."_id" = u.id)
                    """, arrays: [SQLArray(ids)])
                for row in rows {
                    guard let ord = row.first.flatMap({ $0 }).flatMap(Int.init), ord >= 1, ord <= pending.count, !held[ord - 1] else { continue }
                    held[ord - 1] = true
                    heldCount += 1
                }
                guard heldCount == pending.count - inserted else {
                    throw StrataError(.storeFailure, "The PostgreSQL server inserted \(inserted) of \(pending.count) new \(table.name) objects, but \(heldCount) were found left out.")
                }
            }
            for i in pending.indices where !held[i] {
                final[pending[i].persistentIdentifier] = ids[i]
                outcome.saved[pending[i].persistentIdentifier] = 1
            }
            guard heldCount > 0 else { return }
            pending = pending.indices.filter { held[$0] }.map { pending[$0] }
            ids = ids.indices.filter { held[$0] }.map { ids[$0] }
        }
        let binds = [SQLArray(ids), noVersions] + (try columnArrays(table, pending))
        // With history: the stored rows the inputs upsert onto, each with the attributes its
        // input changes, compared with the row as the statement finds it (`old`: every part of
        // one statement reads the same snapshot, before the insert). It reads the parameters
        // again rather than `input`: a second reader of that CTE made the statement 2 to 3
        // times slower (20k new rows: 0.7-1 s, not 0.35 s).
        let oldRows = history == nil ? "" : """
            , old AS (SELECT DISTINCT ON (o."_id") o."_id", \(changedAttributes(table, old: "o", input: "v")) AS changed \
            FROM \(table.qualified) o JOIN \(unnest(binds, as: "v", ordinality: false)) ON \(same("o", "v")))
            """
        // Only the rows the statement updated come back: an inserted row is at the id it was
        // given, at version 1, and an updated one is at version 2 or more (`_version` + 1), so
        // `_version <> 1` tells them apart. Each updated row's input is found by its unique
        // values: only the inputs' positions and keys are joined (a join of the whole inputs
        // sorted 20k wide rows, spilling to disk). 20k new rows: the join and the 20k rows
        // returned took about 50 ms of the save, between the server and the client.
        let keyColumns = unique.map { "c\(inputIndex($0, of: table))" }.joined(separator: ", ")
        let select = "SELECT k.ord::text, done.\"_id\"::text, done.\"_version\"::text, \(history == nil ? "NULL" : "old.changed")"
        let withOld = history == nil ? "" : " LEFT JOIN old ON old.\"_id\" = done.\"_id\""
        let returned = try c.query("""
            WITH input AS (SELECT * FROM \(unnest(binds)))\(oldRows),
            done AS (INSERT INTO \(table.qualified) AS t (\(allNames.joined(separator: ", "))) SELECT \(allValues.joined(separator: ", ")) FROM input u
                     ON CONFLICT ON CONSTRAINT \(SQL.identifier("\(table.name)_unique_0")) DO UPDATE SET \(updates.joined(separator: ", "))
                     RETURNING t."_id", t."_version", \(unique.map { "t.\($0)" }.joined(separator: ", ")))
            \(select) FROM (SELECT * FROM done WHERE done."_version" <> 1) done JOIN (SELECT ord, \(keyColumns) FROM input) k ON \(same("done", "k"))\(withOld)
            """, arrays: binds)
        var updated = [Bool](repeating: false, count: pending.count)
        for row in returned {
            guard row.count == 4, let ord = row[0].flatMap(Int.init), ord >= 1, ord <= pending.count,
                  let id = row[1].flatMap(Int64.init), let version = row[2].flatMap(Int64.init) else { continue }
            updated[ord - 1] = true
            upserted = true
            final[pending[ord - 1].persistentIdentifier] = id
            outcome.saved[pending[ord - 1].persistentIdentifier] = version
            outcome.replaced[pending[ord - 1].persistentIdentifier] = version - 1
            if let names = row[3] { upsertChanges[pending[ord - 1].persistentIdentifier] = names.split(separator: ",").map(String.init) }
        }
        for i in pending.indices where !updated[i] {
            final[pending[i].persistentIdentifier] = ids[i]
            outcome.saved[pending[i].persistentIdentifier] = 1
        }
    }

    /// For a model with several unique constraints: the row that holds any unique value of
    /// each insert (by position), found with a lock on it; an insert whose values two rows
    /// hold is an error naming them.
    private func holdersOfUniqueValues(_ table: PostgresTable, _ snapshots: [DefaultSnapshot], _ c: SQLConnection) throws -> [Int: Int64] {
        let zeros = SQLArray(Array(repeating: 0, count: snapshots.count))
        let binds = [zeros, zeros] + (try columnArrays(table, snapshots))
        let conditions = table.uniques.map { unique in
            "(" + unique.map { column in
                let value = unnested(column, of: table, from: "u")
                return table.isNullable(column) ? "(t.\(column) = \(value) OR (t.\(column) IS NULL AND \(value) IS NULL))" : "t.\(column) = \(value)"
            }.joined(separator: " AND ") + ")"
        }
        let rows = try c.query("""
            SELECT u.ord::text, t."_id"::text FROM \(unnest(binds)) JOIN \(table.qualified) t ON \(conditions.joined(separator: " OR ")) FOR UPDATE OF t
            """, arrays: binds)
        var holders: [Int: Set<Int64>] = [:]
        for row in rows {
            guard row.count == 2, let ord = row[0].flatMap(Int.init), let id = row[1].flatMap(Int64.init) else { continue }
            holders[ord - 1, default: []].insert(id)
        }
        var found: [Int: Int64] = [:]
        for (position, ids) in holders {
            guard ids.count == 1, let id = ids.first else {
                throw StrataError(.uniqueConstraintViolation, "A new \(table.name) matches two different stored objects on its unique attributes (rows \(ids.sorted())). Make the values agree or delete one of the stored objects.")
            }
            found[position] = id
        }
        return found
    }

    /// After upserts that landed on stored rows: references to the ids their inserts were
    /// given (by other new objects of the save) name those rows.
    private func fixReferencesToUpserts(_ c: SQLConnection) throws {
        // (No to-one column in the schema, nothing to fix: every insert was looked up and its
        // row written out as text for nothing, 0.8% of a 20k-object upsert's CPU, W6.)
        guard store.tables.values.contains(where: { !$0.toOnes.isEmpty }) else { return }
        let moved = allocated.compactMap { id, row -> (Int64, Int64)? in
            guard let to = final[id], to != row else { return nil }
            return (row, to)
        }
        guard !moved.isEmpty else { return }
        let olds = PostgresValues.arrayLiteral(moved.map { String($0.0) }), news = PostgresValues.arrayLiteral(moved.map { String($0.1) })
        for table in store.tables.values {
            for toOne in table.toOnes {
                try c.execute("UPDATE \(table.qualified) t SET \(toOne.column) = m.new FROM unnest($1::bigint[], $2::bigint[]) AS m(old, new) WHERE t.\(toOne.column) = m.old", [olds, news])
            }
        }
    }

    /// Updates stored rows, each at the version its snapshot carries, the one the context read
    /// (`checked`; a snapshot without one is not checked), raising it.
    /// `comparing`: the attributes each update changed are kept for history (`upsertChanges`),
    /// compared in the statement with the row as it found it (a second reference to the table
    /// reads the rows before the update).
    private mutating func update(_ table: PostgresTable, _ rows: [(id: Int64, snapshot: DefaultSnapshot, checked: Bool)], _ c: SQLConnection,
                                 comparing: Bool = false) throws {
        guard !rows.isEmpty else { return }
        let binds = [SQLArray(rows.map(\.id)), SQLArray(rows.map { $0.checked ? $0.snapshot.version : nil })] + (try columnArrays(table, rows.map(\.snapshot)))
        let old = comparing ? ", \(table.qualified) old" : ""
        let sameRow = comparing ? " AND old.\"_id\" = t.\"_id\"" : ""
        let changed = comparing ? ", \(changedAttributes(table, old: "old", input: "u"))" : ""
        let returned = try c.query("""
            UPDATE \(table.qualified) t SET \(assignments(table)) FROM \(unnest(binds))\(old)
            WHERE t."_id" = u.c0::bigint AND (u.c1 IS NULL OR t."_version" = u.c1::bigint)\(sameRow) RETURNING t."_id"::text, t."_version"::text\(changed)
            """, arrays: binds)
        var done = Set<Int64>()
        let snapshots = Dictionary(rows.map { ($0.id, $0.snapshot) }, uniquingKeysWith: { _, last in last })
        // Unchecked updates are inserts' that upserted onto stored rows (`run`).
        let upserts = !rows.contains { $0.checked }
        for row in returned {
            guard row.count == (comparing ? 3 : 2), let id = row[0].flatMap(Int64.init), let version = row[1].flatMap(Int64.init) else { continue }
            done.insert(id)
            guard let snapshot = snapshots[id] else { continue }
            outcome.saved[snapshot.persistentIdentifier] = version
            if upserts { outcome.replaced[snapshot.persistentIdentifier] = version - 1 }
            if comparing, let names = row[2] { upsertChanges[snapshot.persistentIdentifier] = names.split(separator: ",").map(String.init) }
        }
        for row in rows where !done.contains(row.id) { conflicts.append(row.snapshot.persistentIdentifier) }
    }

    /// Deletes stored rows, each at the version its snapshot carries (the one the context read;
    /// a snapshot without one is not checked).
    private mutating func delete(_ table: PostgresTable, _ snapshots: [DefaultSnapshot], _ c: SQLConnection) throws {
        let ids = try snapshots.map { try pk($0.persistentIdentifier) }
        let returned = try c.query("""
            DELETE FROM \(table.qualified) t USING unnest($1::text[], $2::text[]) AS u(id, v)
            WHERE t."_id" = u.id::bigint AND (u.v IS NULL OR t."_version" = u.v::bigint) RETURNING t."_id"::text
            """, [PostgresValues.arrayLiteral(ids.map { String($0) }), PostgresValues.arrayLiteral(snapshots.map { $0.version.map { String($0) } })])
        let done = Set(returned.compactMap { $0.first.flatMap { $0 }.flatMap(Int64.init) })
        for (id, snapshot) in zip(ids, snapshots) where !done.contains(id) { conflicts.append(snapshot.persistentIdentifier) }
    }

    // MARK: Relationships and external values

    /// The join rows of every to-many of the inserted and updated objects, written again.
    private func writeRelationships(_ c: SQLConnection) throws {
        // (Grouping a 20k-object save again only to find no to-many took 1.5% of its time.)
        guard store.tables.values.contains(where: { !$0.toManys.isEmpty }) else { return }
        for (table, snapshots) in try grouped(request.inserted + request.updated) where !table.toManys.isEmpty {
            let owners = try snapshots.map { try pk($0.persistentIdentifier) }
            let ownerList = PostgresValues.arrayLiteral(owners.map { String($0) })
            for toMany in table.toManys {
                try c.execute("DELETE FROM \(toMany.table) WHERE \"owner_id\" = ANY($1::bigint[])", [ownerList])
                var ownerColumn: [String?] = [], positions: [String?] = [], targets: [String?] = []
                for (owner, snapshot) in zip(owners, snapshots) {
                    var position = 0
                    for target in snapshot.relatedIdentifiers(toMany.relationship.name) where !gone.contains(target) {
                        ownerColumn.append(String(owner))
                        positions.append(String(position))
                        targets.append(String(try pk(target)))
                        position += 1
                    }
                }
                guard !ownerColumn.isEmpty else { continue }
                try c.execute("INSERT INTO \(toMany.table) (\"owner_id\", \"position\", \"target_id\") SELECT * FROM unnest($1::bigint[], $2::int[], $3::bigint[])",
                              [PostgresValues.arrayLiteral(ownerColumn), PostgresValues.arrayLiteral(positions), PostgresValues.arrayLiteral(targets)])
            }
        }
    }

    /// An insert that upserted onto a stored row replaced that row's relationships: the objects
    /// the stored row was related to that the insert is not lose it on their side (their
    /// foreign key, or their to-many's entry), as if the relationship had been set on the row.
    /// Their version is raised, so a process that holds them as they were gets a conflict.
    private mutating func unlinkWhatUpsertsDropped(_ c: SQLConnection) throws {
        guard store.tables.values.contains(where: { !$0.entity.relationships.isEmpty }) else { return }
        for snapshot in request.inserted {
            let id = snapshot.persistentIdentifier
            guard let row = final[id], row != allocated[id], let table = store.tables[id.entityName] else { continue }
            for relationship in table.entity.relationships {
                guard let inverseName = relationship.inverseName, let target = store.tables[relationship.destination],
                      let inverse = target.entity.relationshipsByName[inverseName] else { continue }
                let kept = PostgresValues.arrayLiteral(try snapshot.relatedIdentifiers(relationship.name).map { String(try pk($0)) })
                if inverse.isToOneRelationship {
                    let column = SQL.identifier(inverse.name + "_id")
                    let changed = try c.query("""
                        UPDATE \(target.qualified) SET \(column) = NULL, "_version" = "_version" + 1 WHERE \(column) = $1::bigint AND NOT ("_id" = ANY($2::bigint[]))
                        RETURNING "_id"::text, "_version"::text
                        """, [String(row), kept])
                    for r in changed {
                        guard r.count == 2, let id = r[0].flatMap(Int64.init), let version = r[1].flatMap(Int64.init) else { continue }
                        raisedRows[target.name, default: [:]][id] = version
                    }
                } else if let join = target.toManys.first(where: { $0.relationship.name == inverse.name }) {
                    try c.execute("DELETE FROM \(join.table) WHERE \"target_id\" = $1::bigint AND NOT (\"owner_id\" = ANY($2::bigint[]))", [String(row), kept])
                }
            }
        }
    }

    /// The external values of the inserted and updated objects, in the side tables.
    private func writeExternals(_ c: SQLConnection) throws {
        guard store.tables.values.contains(where: { !$0.externals.isEmpty }) else { return }
        for (table, snapshots) in try grouped(request.inserted + request.updated) where !table.externals.isEmpty {
            var ids: [String?] = [], properties: [String?] = [], data: [String?] = []
            for snapshot in snapshots {
                let id = String(try pk(snapshot.persistentIdentifier))
                for external in table.externals {
                    let bytes: Data?
                    switch snapshot[external.name] ?? .null {
                    case .null: bytes = nil
                    case .data(let d): bytes = d
                    case .json(let j): bytes = j
                    case let other: bytes = Data((try PostgresValues.text(other, .jsonb) ?? "null").utf8)
                    }
                    guard let bytes else { continue }
                    ids.append(id)
                    properties.append(external.name)
                    data.append(PostgresValues.hex(bytes))
                }
            }
            let owners = PostgresValues.arrayLiteral(try snapshots.map { String(try pk($0.persistentIdentifier)) })
            try c.execute("DELETE FROM \(table.externalTable) WHERE \"id\" = ANY($1::bigint[])", [owners])
            guard !ids.isEmpty else { continue }
            try c.execute("INSERT INTO \(table.externalTable) (\"id\", \"property\", \"data\") SELECT u.i::bigint, u.p, u.d::bytea FROM unnest($1::text[], $2::text[], $3::text[]) AS u(i, p, d)",
                          [PostgresValues.arrayLiteral(ids), PostgresValues.arrayLiteral(properties), PostgresValues.arrayLiteral(data)])
        }
    }
}

// MARK: History

extension PostgresStore: HistoryRecordingDataStore {
    var historyTable: String { PostgresTable.qualified(namespace, "strata_history") }
    var meta: String { PostgresTable.qualified(namespace, "strata_meta") }

    /// Ends a write's transaction, in one statement (one round trip, where it took four):
    /// raises the save counter (`changeToken`, read where there is no LISTEN), notifies the
    /// listeners on `channel` (both take effect at commit), and with a history record, writes
    /// it at a new token. The token is the namespace's history counter, raised (never a token
    /// given before, even one whose record was deleted), under the history lock, taken before
    /// either counter's row; both are held to the commit, so tokens follow commit order across
    /// processes and machines. (The lock is a one-time filter of both `UPDATE`s: the server
    /// takes it before it reads their rows.)
    func announceCommit(history record: DataStoreHistoryRecord?, _ c: SQLConnection) throws {
        guard let record else {
            let rows = try c.query("""
                WITH counted AS (UPDATE \(meta) SET "value" = (("value")::bigint + 1)::text WHERE "name" = 'commits' RETURNING 1),
                notified AS (SELECT pg_notify($1::text, ''))
                SELECT (SELECT count(*) FROM counted)::text, (SELECT count(*) FROM notified)::text
                """, [channel], reused: true)
            try expectCounters(rows, history: false)
            return
        }
        let rows: [[String?]]
        do {
            rows = try c.query("""
                WITH \(closingExpressions(from: 1))
                SELECT (SELECT count(*) FROM counted)::text, (SELECT count(*) FROM notified)::text, (SELECT count(*) FROM kept)::text
                """, try closingBinds(record), reused: true)
        } catch where isUnfinished(error) {
            throw missingCounter
        }
        try expectCounters(rows, history: true)
    }

    /// The common table expressions that close a write with a history record (see
    /// `announceCommit`), named `lock`, `token`, `counted`, `kept` and `notified`, with three
    /// parameters from `$first` (`closingBinds`): the record, the lock's key, the channel.
    /// A missing counter row leaves the record's token NULL, which fails the statement whole
    /// (23502, `isUnfinished`), so that a statement run outside a transaction changes nothing
    /// either. `onlyIf`: a table expression with a row when the statement's writes are
    /// complete; without that row, the token is left NULL the same way. (Each parameter is cast
    /// from text first: a statement prepared as it is written takes each as text, its bind's
    /// type.)
    func closingExpressions(from first: Int, onlyIf condition: String? = nil) -> String {
        """
        lock AS (SELECT pg_advisory_xact_lock(hashtext($\(first + 1)::text))\(condition.map { " FROM \($0)" } ?? "")),
        token AS (UPDATE \(meta) SET "value" = (("value")::bigint + 1)::text
                  WHERE "name" = 'history' AND EXISTS (SELECT 1 FROM lock) RETURNING ("value")::bigint AS value),
        counted AS (UPDATE \(meta) SET "value" = (("value")::bigint + 1)::text
                    WHERE "name" = 'commits' AND EXISTS (SELECT 1 FROM lock) RETURNING 1),
        kept AS (INSERT INTO \(historyTable) ("token", "record")
                 SELECT CASE WHEN EXISTS (SELECT 1 FROM counted) THEN (SELECT token.value FROM token) END, $\(first)::text::jsonb RETURNING 1),
        notified AS (SELECT pg_notify($\(first + 2)::text, ''))
        """
    }

    /// The parameters of `closingExpressions`: the record as JSON, the history lock's key, the
    /// channel observers listen on.
    func closingBinds(_ record: DataStoreHistoryRecord) throws -> [String?] {
        let json: String
        if let compact = try PostgresHistoryRecord.json(record, store: self) {
            json = compact
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            json = String(decoding: try encoder.encode(record), as: UTF8.self)
        }
        return [json, historyLockKey, channel]
    }

    /// The statement of `closingExpressions` failed on a NULL token in the history table: for a
    /// missing counter row, or writes its `onlyIf` found incomplete.
    func isUnfinished(_ error: any Error) -> Bool {
        PostgresStoreError.sqlState(error) == "23502" && PostgresStoreError.tableName(error) == "strata_history"
    }

    /// The counters' rows were there: without them, a save would commit unannounced, or
    /// without its history record (the transaction is rolled back instead).
    private func expectCounters(_ rows: [[String?]], history: Bool) throws {
        let counts = rows.first ?? []
        let expected = history ? ["1", "1", "1"] : ["1", "1"]
        guard counts.map({ $0 ?? "" }) == expected else { throw missingCounter }
    }

    var missingCounter: StrataError {
        StrataError(.corruptRecord, "The namespace's table strata_meta of the PostgreSQL store at \(configuration.location) lacks its 'commits' or 'history' counter, so a save could not record itself; nothing was saved. Reopen the store (an open puts the counters back) or restore the rows.")
    }

    public func historyRecords(after token: Int64) throws -> [(token: Int64, record: DataStoreHistoryRecord)] {
        let rows = try session.withConnection { c in
            try c.query("SELECT \"token\"::text, \"record\"::text FROM \(historyTable) WHERE \"token\" > $1::bigint ORDER BY \"token\"", [String(token)])
        }
        let decoder = JSONDecoder()
        return try rows.compactMap { row in
            guard row.count == 2, let token = row[0].flatMap(Int64.init), let json = row[1] else { return nil }
            do { return (token, try PostgresHistoryRecord.decode(json, store: self, decoder: decoder)) } catch {
                throw StrataError(.corruptRecord, "The history record \(token) of the PostgreSQL store at \(configuration.location) cannot be read: \(error).")
            }
        }
    }

    public func deleteHistoryRecords(_ tokens: [Int64]) throws {
        guard !tokens.isEmpty else { return }
        _ = try session.transaction { c in
            try c.execute("DELETE FROM \(historyTable) WHERE \"token\" = ANY($1::bigint[])", [PostgresValues.arrayLiteral(tokens.map { String($0) })])
        }
    }

    public func newestHistoryToken() throws -> Int64 {
        let rows = try session.withConnection { try $0.query("SELECT \"value\" FROM \(meta) WHERE \"name\" = 'history'") }
        return rows.first?.first.flatMap { $0 }.flatMap(Int64.init) ?? 0
    }

    public func oldestHistoryToken() throws -> Int64? {
        let rows = try session.withConnection { try $0.query("SELECT min(\"token\")::text FROM \(historyTable)") }
        return rows.first?.first.flatMap { $0 }.flatMap(Int64.init)
    }
}
