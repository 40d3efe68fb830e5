import Foundation
import Strata

extension PostgresStore: DataStoreBatching {
    /// `ModelContext.delete(model:where:)` as one `DELETE … WHERE` with the predicate translated
    /// (Docs/Postgres.md, "Batch deletes"), in a transaction of its own that also records the
    /// deletion's history (tombstones included) and wakes observers. A predicate that does not
    /// translate throws `DataStoreError.preferInMemoryFilter` before anything is deleted: the
    /// context then selects the objects itself and deletes them with its save. Same as
    /// SwiftData's `DataStoreBatching.delete(_:)`.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        guard configuration.allowsSave else {
            throw StrataError(.readOnly, "The PostgreSQL store at \(configuration.location) was opened with allowsSave: false; it cannot delete objects.")
        }
        let table = try table(T.self)
        var condition = "TRUE"
        var binds: [String?] = []
        if let predicate = request.predicate {
            guard let translated = PredicateSQL.condition(predicate, resolver: self) else { throw DataStoreError.preferInMemoryFilter }
            condition = Self.cast(translated)
            binds = try translated.binds.map(Self.text)
        }
        // Join rows, external values and to-ones naming the rows go by their foreign keys'
        // ON DELETE (CASCADE, SET NULL); the context sends a batch only for a model whose own
        // relationships have no delete rule to apply.
        let attributes = table.entity.attributesByName
        let preserved = table.columns.filter { attributes[$0.property]?.options.contains(.preserveValueOnDeletion) == true }
        if preserved.isEmpty {
            // No tombstones: the server writes the history record itself, and no id comes back
            // to the client. The one statement also raises the commit counter and notifies
            // observers, when it deleted a row, under the history lock, as `announceCommit`
            // does. It runs alone, outside a transaction (a statement is one), as a prepared
            // statement from its second run: one round trip, where BEGIN, the lock, the
            // statement and COMMIT took four, and no parsing and planning each time.
            // The ids go in as one string (`string_agg`), as `PostgresHistoryRecord` writes them:
            // 5,107 rows in psql took 10.3 ms as `to_jsonb(array_agg(…))` (a JSON array of
            // numbers) compressed with pglz, 7.6 ms so, with lz4 (`PostgresSchemaSetup`); a bare
            // DELETE, 4.2 ms.
            // A missing counter row (never, but for a namespace damaged by hand) leaves the
            // record's token NULL: the statement fails whole (23502), and nothing is deleted.
            let deleted: Int
            do {
                deleted = try session.statement { c -> Int in
                    let n = binds.count
                    let record = "jsonb_build_object('v', 3, 'timestamp', $\(n + 1)::float8, 'author', $\(n + 2)::text, 'bundle', $\(n + 3)::text, "
                        + "'process', $\(n + 4)::text, 'runs', jsonb_build_array(jsonb_build_object('kind', 'delete', 'model', $\(n + 5)::text, 'ids', agg.ids)))"
                    let rows = try c.query("""
                        WITH d AS (DELETE FROM \(table.qualified) t0 WHERE \(condition) RETURNING t0."_id"),
                        agg AS (SELECT count(*) AS n, string_agg(d."_id"::text, ',') AS ids FROM d),
                        lock AS (SELECT pg_advisory_xact_lock(hashtext($\(n + 7)::text)) FROM agg WHERE agg.n > 0),
                        token AS (UPDATE \(meta) SET "value" = (("value")::bigint + 1)::text
                                  WHERE "name" = 'history' AND EXISTS (SELECT 1 FROM lock) RETURNING ("value")::bigint AS value),
                        counted AS (UPDATE \(meta) SET "value" = (("value")::bigint + 1)::text
                                    WHERE "name" = 'commits' AND EXISTS (SELECT 1 FROM lock) RETURNING 1),
                        kept AS (INSERT INTO \(historyTable) ("token", "record")
                                 SELECT CASE WHEN EXISTS (SELECT 1 FROM counted) THEN (SELECT token.value FROM token) END, \(record)
                                 FROM agg WHERE agg.n > 0 RETURNING 1),
                        notified AS (SELECT pg_notify($\(n + 6)::text, '') FROM agg WHERE agg.n > 0)
                        SELECT agg.n::text, (SELECT count(*) FROM notified)::text, (SELECT count(*) FROM kept)::text FROM agg
                        """, binds + [String(Date().timeIntervalSinceReferenceDate), request.editingState.author, Self.bundleIdentifier,
                                      Self.processIdentifier, table.name, channel, historyLockKey], reused: true)
                    guard let count = rows.first?.first.flatMap({ $0 }).flatMap(Int.init) else {
                        throw StrataError(.storeFailure, "The PostgreSQL server at \(configuration.location) answered a batch delete of \(table.name) without its count of deleted rows.")
                    }
                    return count
                }
            } catch where isUnfinished(error) {
                throw StrataError(.corruptRecord, "The namespace's table strata_meta of the PostgreSQL store at \(configuration.location) lacks its 'commits' or 'history' counter, so the deletion of \(table.name) objects could not record itself; nothing was deleted. Reopen the store (an open puts the counters back) or restore the rows.")
            }
            if deleted > 0 { savedHere() }
            return
        }
        let returning = (["t0.\"_id\"::text"] + preserved.map { "t0.\($0.name)::text" }).joined(separator: ", ")
        let deleted = try session.transaction { c -> [Int64] in
            let rows = try c.query("DELETE FROM \(table.qualified) t0 WHERE \(condition) RETURNING \(returning)", binds)
            guard !rows.isEmpty else { return [] }
            var ids: [Int64] = []
            var changes: [DataStoreHistoryRecord.Change] = []
            ids.reserveCapacity(rows.count)
            changes.reserveCapacity(rows.count)
            for row in rows {
                guard let id = row.first.flatMap({ $0 }).flatMap(Int64.init) else {
                    throw StrataError(.storeFailure, "The PostgreSQL server returned a deleted row of \(table.name) without its identifier.")
                }
                var tombstone: [String: SnapshotValue] = [:]
                for (i, column) in preserved.enumerated() { tombstone[column.property] = try PostgresValues.value(row[i + 1], column.kind) }
                ids.append(id)
                changes.append(.init(kind: .delete, identifier: try identifier(table.name, id), tombstone: tombstone))
            }
            try announceCommit(history: DataStoreHistoryRecord(timestamp: Date(), author: request.editingState.author,
                                                               bundleIdentifier: Self.bundleIdentifier, processIdentifier: Self.processIdentifier,
                                                               changes: changes), c)
            return ids
        }
        guard !deleted.isEmpty else { return }
        savedHere()
    }

    /// The saving process as history records name it (as the context names it in the records
    /// of its saves).
    static let bundleIdentifier: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    static let processIdentifier: String = String(ProcessInfo.processInfo.processIdentifier)
}
