import Foundation
import Strata

/// Opening a namespace with a schema (Docs/Postgres.md, "Tables and migrations"), in one
/// transaction that holds the namespace's advisory lock (several processes may open it at once):
///
/// - the namespace, `strata_meta` (the store's identifier, the stored schema, the save counter,
///   the newest history token)
///   and the id sequence `strata_ids` are made if missing;
/// - a namespace without a stored schema gets every table;
/// - a stored schema that differs is migrated when the difference is lightweight (a model
///   added, an attribute added (optional, or with a default value in the model's init(), which
///   the rows that exist take), a relationship added, an attribute or relationship removed,
///   an index or unique constraint added or removed: `ALTER TABLE`); any other difference is
///   `StrataError.schemaMismatch`, as on a file.
struct PostgresSchemaSetup {
    let tables: [String: PostgresTable]
    let namespace: String
    let schema: Schema
    let writable: Bool
    let location: String
    /// The migration plan's last version, recorded in `strata_meta` ('version') when the store
    /// is opened with a plan (where a migration starts next time).
    var version: Schema.Version? = nil

    var meta: String { PostgresTable.qualified(namespace, "strata_meta") }

    /// Returns the store's identifier.
    func run(_ session: PostgresSession) throws -> String {
        let wanted = StoredTables(tables)
        if !writable {
            return try session.withConnection { c in
                guard let (identifier, stored) = try read(c) else {
                    throw StrataError(.schemaMismatch, "The PostgreSQL namespace \(namespace) at \(location) has no Strata tables, and the store was opened with allowsSave: false. Open it writable once to make them.")
                }
                if stored != wanted { throw mismatch(stored, wanted) }
                return identifier
            }
        }
        return try session.transaction(retries: 3) { c in
            try c.execute("CREATE SCHEMA IF NOT EXISTS \(SQL.identifier(namespace))")
            try c.execute("SELECT pg_advisory_xact_lock(hashtext($1::text))", [namespace])
            try c.execute("CREATE TABLE IF NOT EXISTS \(meta) (\"name\" text PRIMARY KEY, \"value\" text NOT NULL)")
            try c.execute("CREATE SEQUENCE IF NOT EXISTS \(PostgresTable.qualified(namespace, "strata_ids"))")
            try c.execute("CREATE TABLE IF NOT EXISTS \(PostgresTable.qualified(namespace, "strata_history")) (\"token\" bigint PRIMARY KEY, \"record\" jsonb NOT NULL)")
            try compressHistoryWithLZ4(c)
            // The newest history token given (tokens are never given twice), and the save
            // counter: each put back if missing, since a save without them fails.
            try c.execute("INSERT INTO \(meta) (\"name\", \"value\") SELECT 'history', coalesce(max(\"token\"), 0)::text FROM \(PostgresTable.qualified(namespace, "strata_history")) UNION ALL SELECT 'commits', '0' ON CONFLICT (\"name\") DO NOTHING")
            guard let (identifier, stored) = try read(c) else {
                try create(tables.values.sorted { $0.name < $1.name }, c)
                let identifier = UUID().uuidString
                try c.execute("INSERT INTO \(meta) (\"name\", \"value\") VALUES ('identifier', $1::text), ('schema', $2::text), ('commits', '0') ON CONFLICT (\"name\") DO NOTHING",
                              [identifier, try wanted.json()])
                try recordVersion(c)
                return try read(c)?.identifier ?? identifier
            }
            if stored != wanted {
                try migrate(from: stored, to: wanted, c)
                try c.execute("UPDATE \(meta) SET \"value\" = $1::text WHERE \"name\" = 'schema'", [try wanted.json()])
            }
            try recordVersion(c)
            return identifier
        }
    }

    private func recordVersion(_ c: SQLConnection) throws {
        guard let version else { return }
        let text = String(decoding: try JSONEncoder().encode(version), as: UTF8.self)
        try c.execute("INSERT INTO \(meta) (\"name\", \"value\") VALUES ('version', $1::text) ON CONFLICT (\"name\") DO UPDATE SET \"value\" = EXCLUDED.\"value\" WHERE \(meta).\"value\" <> EXCLUDED.\"value\"", [text])
    }

    private func read(_ c: SQLConnection) throws -> (identifier: String, schema: StoredTables)? {
        let exists = try c.query("SELECT to_regclass($1::text)::text", ["\(SQL.identifier(namespace)).\"strata_meta\""])
        guard exists.first?.first??.isEmpty == false else { return nil }
        let rows = try c.query("SELECT \"name\", \"value\" FROM \(meta) WHERE \"name\" IN ('identifier', 'schema')")
        let values = Dictionary(rows.compactMap { row -> (String, String)? in
            guard row.count == 2, let name = row[0], let value = row[1] else { return nil }
            return (name, value)
        }, uniquingKeysWith: { a, _ in a })
        guard let identifier = values["identifier"], let json = values["schema"] else { return nil }
        do { return (identifier, try JSONDecoder().decode(StoredTables.self, from: Data(json.utf8))) } catch {
            throw StrataError(.corruptRecord, "The stored schema of the PostgreSQL namespace \(namespace) at \(location) cannot be read: \(error).")
        }
    }

    /// History records (a batch delete's or a bulk insert's names thousands of rows) are
    /// compressed with lz4 where the server has it (PostgreSQL 14 and later, built with lz4, as
    /// Debian's and the official images are), rather than pglz, the default: a record of 5,107
    /// ids took 1.5 ms to store with pglz, 0.4 ms with lz4. Asked of `pg_settings` first, so
    /// that an engine without the setting (CockroachDB) is not sent what it cannot run; the
    /// column is altered only when it is not lz4 already (a namespace made before, or by a
    /// server without lz4 then).
    private func compressHistoryWithLZ4(_ c: SQLConnection) throws {
        let lz4 = try c.query("SELECT ('lz4' = ANY(enumvals))::text FROM pg_settings WHERE name = 'default_toast_compression'")
        guard lz4.first?.first ?? nil == "true" else { return }
        let history = PostgresTable.qualified(namespace, "strata_history")
        let current = try c.query("SELECT attcompression::text FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'record'", [history])
        guard current.first?.first ?? nil != "l" else { return }
        try c.execute("ALTER TABLE \(history) ALTER COLUMN \"record\" SET COMPRESSION lz4")
    }

    /// `UNIQUE NULLS NOT DISTINCT` came with PostgreSQL 15 (engines that report an older
    /// version, as CockroachDB does, lack it).
    private func supportsNullsNotDistinct(_ c: SQLConnection) throws -> Bool {
        let text = try c.query("SELECT current_setting('server_version_num')").first?.first ?? nil
        return (text.flatMap { Int($0) } ?? 0) >= 150000
    }

    private func create(_ made: [PostgresTable], _ c: SQLConnection) throws {
        let nullsNotDistinct = try supportsNullsNotDistinct(c)
        for table in made { for statement in table.createStatements(nullsNotDistinct: nullsNotDistinct) { try c.execute(statement) } }
        for table in made { for statement in table.foreignKeys(tables) { try c.execute(statement) } }
    }

    private func mismatch(_ stored: StoredTables, _ wanted: StoredTables) -> StrataError {
        StrataError(.schemaMismatch, "The tables of the PostgreSQL namespace \(namespace) at \(location) were made for other models: \(stored.differences(to: wanted).joined(separator: "; ")). Open it with the models that made it, or migrate it (a lightweight change is applied when the store is opened for saving).")
    }

    /// The lightweight changes from `stored` to `wanted`, or a mismatch.
    private func migrate(from stored: StoredTables, to wanted: StoredTables, _ c: SQLConnection) throws {
        var added: [PostgresTable] = []
        for (name, table) in wanted.tables.sorted(by: { $0.key < $1.key }) {
            guard let live = tables[name] else { continue }
            guard let old = stored.tables[name] else { added.append(live); continue }
            if old == table { continue }
            // Columns: an added one is NULL in the rows that exist, or (not optional) the value
            // the model's init() gives it, as on a file; removed ones go.
            var defaults: [String: SnapshotValue]?
            for column in table.columns where !old.columns.contains(where: { $0.name == column.name }) {
                let name = SQL.identifier(column.name)
                try c.execute("ALTER TABLE \(live.qualified) ADD COLUMN IF NOT EXISTS \(name) \(column.type)")
                if column.kind == ColumnKind.date.name {
                    try c.execute("ALTER TABLE \(live.qualified) ADD COLUMN IF NOT EXISTS \(SQL.identifier(column.name + "_at")) timestamptz")
                }
                guard !column.optional, let liveColumn = live.column(named: column.name) else { continue }
                if defaults == nil { defaults = try live.entity.defaultValues() }
                guard let value = defaults?[column.name], let text = try PostgresValues.text(value, liveColumn.kind) else {
                    throw StrataError(.schemaMismatch, "\(live.name).\(column.name) is new in the models, not optional, and has no default value, so the rows of the PostgreSQL namespace \(namespace) at \(location) cannot have one. Give it a default value (= value) in the model, make it optional, or migrate with a custom MigrationStage.")
                }
                try c.execute("UPDATE \(live.qualified) SET \(name) = $1::\(column.type)", [text])
                if liveColumn.kind == .date {
                    try c.execute("UPDATE \(live.qualified) SET \(liveColumn.timestampName) = to_timestamp(\(name) + 978307200)")
                }
                try c.execute("ALTER TABLE \(live.qualified) ALTER COLUMN \(name) SET NOT NULL")
            }
            for column in old.columns where !table.columns.contains(where: { $0.name == column.name }) {
                try c.execute("ALTER TABLE \(live.qualified) DROP COLUMN IF EXISTS \(SQL.identifier(column.name))")
                if column.kind == ColumnKind.date.name {
                    try c.execute("ALTER TABLE \(live.qualified) DROP COLUMN IF EXISTS \(SQL.identifier(column.name + "_at"))")
                }
            }
            for column in table.columns {
                if let before = old.columns.first(where: { $0.name == column.name }), before.kind != column.kind || before.optional != column.optional {
                    throw mismatch(stored, wanted)
                }
            }
            for toOne in table.toOnes where !old.toOnes.contains(toOne) {
                try c.execute("ALTER TABLE \(live.qualified) ADD COLUMN IF NOT EXISTS \(SQL.identifier(toOne + "_id")) bigint")
            }
            for toOne in old.toOnes where !table.toOnes.contains(toOne) {
                try c.execute("ALTER TABLE \(live.qualified) DROP COLUMN IF EXISTS \(SQL.identifier(toOne + "_id"))")
            }
            // Constraints and indexes are made again (their names are numbered).
            for i in 0..<max(old.uniques.count, table.uniques.count) {
                try c.execute("ALTER TABLE \(live.qualified) DROP CONSTRAINT IF EXISTS \(SQL.identifier("\(name)_unique_\(i)"))")
            }
            for i in 0..<max(old.indexes.count, table.indexes.count) {
                try c.execute("DROP INDEX IF EXISTS \(SQL.identifier(namespace)).\(SQL.identifier("\(name)_index_\(i)"))")
            }
            let nullsNotDistinct = try supportsNullsNotDistinct(c)
            for i in live.uniques.indices {
                try c.execute("ALTER TABLE \(live.qualified) ADD \(live.uniqueConstraint(i, nullsNotDistinct: nullsNotDistinct))")
            }
            for statement in live.createStatements(nullsNotDistinct: nullsNotDistinct) where !statement.hasPrefix("CREATE TABLE IF NOT EXISTS \(live.qualified)") {
                try c.execute(statement)
            }
            for statement in live.foreignKeys(tables) { try c.execute(statement) }
        }
        try create(added, c)
    }
}

/// The tables a schema makes, as stored in `strata_meta` and compared at open.
struct StoredTables: Codable, Equatable {
    struct Table: Codable, Equatable {
        struct Column: Codable, Equatable {
            var name: String
            var kind: String
            var type: String
            var optional: Bool
        }
        var columns: [Column]
        var toOnes: [String]
        var toManys: [String]
        var externals: [String]
        var uniques: [[String]]
        var indexes: [[String]]
    }
    var tables: [String: Table]

    init(_ tables: [String: PostgresTable]) {
        self.tables = tables.mapValues { table in
            Table(columns: table.columns.map { Table.Column(name: $0.property, kind: $0.kind.name, type: $0.sqlType, optional: $0.isOptional) },
                  toOnes: table.toOnes.map(\.relationship.name), toManys: table.toManys.map(\.relationship.name),
                  externals: table.externals.map(\.name), uniques: table.uniques, indexes: table.indexes)
        }
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// What differs, for a person.
    func differences(to other: StoredTables) -> [String] {
        var out: [String] = []
        for name in Set(tables.keys).union(other.tables.keys).sorted() {
            switch (tables[name], other.tables[name]) {
            case (nil, _): out.append("\(name) has no table")
            case (_, nil): out.append("the table \(name) is of no model")
            case let (a?, b?) where a != b:
                let columns = Set(a.columns.map(\.name)).symmetricDifference(b.columns.map(\.name)).sorted()
                out.append("\(name) differs\(columns.isEmpty ? "" : " in \(columns.joined(separator: ", "))")")
            default: continue
            }
        }
        return out
    }
}

extension ColumnKind {
    /// The kind's name in the stored schema.
    var name: String { "\(self)" }
}
