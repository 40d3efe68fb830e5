import Foundation
import Strata

/// How a model is kept in PostgreSQL (Docs/Postgres.md, "Tables"): one table per model (each
/// model of an inheritance its own table, with the properties it inherits), named after it in
/// the configuration's namespace.
///
/// - `_id bigint` primary key, from the namespace's sequence `strata_ids`; `_version bigint`,
///   raised by every update (optimistic locking).
/// - One typed column per attribute (`ColumnKind`); a `Date` is `double precision` seconds
///   since 2001 (exact), with a `timestamptz` beside it (`<name>_at`) for people and tools.
/// - A to-one relationship: a foreign-key column `<name>_id`. A to-many one: a join table
///   `<Model>_<name>` (owner, position, target) that keeps its order.
/// - External-storage attributes: the side table `<Model>__external` (id, property, data).
/// - `UNIQUE` per unique attribute and `#Unique`, an index per `#Index`.
struct PostgresTable {
    let entity: Schema.Entity
    let namespace: String
    /// The columns of the attributes kept in the row, in declaration order.
    let columns: [PostgresColumn]
    /// External-storage attributes, kept in the side table.
    let externals: [Schema.Attribute]
    let toOnes: [ToOne]
    let toManys: [ToMany]
    /// The unique constraints by column names (each a list of quoted column names).
    let uniques: [[String]]
    let indexes: [[String]]

    struct ToOne {
        let relationship: Schema.Relationship
        let column: String
        let target: String
    }

    struct ToMany {
        let relationship: Schema.Relationship
        let table: String
        let target: String
    }

    var name: String { entity.name }
    // The SQL names every query uses, made once (quoting them was a few percent of a point
    // fetch's time).
    /// The table, quoted and qualified: `"namespace"."Model"`.
    let qualified: String
    /// The side table of external-storage attributes, quoted and qualified.
    let externalTable: String
    /// The columns a snapshot is read from (id, version, each attribute, each to-one) as the
    /// select list of alias `t0`, each cast to the type its cell is read as
    /// (`PostgresColumn.selected`, `PostgresValues.value(_:_:)` of a cell).
    let rowColumns: String
    /// The names of a snapshot's values in the order `PostgresStore.snapshots` gives them:
    /// each column's property, each to-one, each to-many, each external value.
    let snapshotLayout: DefaultSnapshot.Layout

    static func qualified(_ namespace: String, _ name: String) -> String { SQL.identifier(namespace) + "." + SQL.identifier(name) }

    init(_ entity: Schema.Entity, namespace: String) {
        self.entity = entity
        self.namespace = namespace
        qualified = PostgresTable.qualified(namespace, entity.name)
        externalTable = PostgresTable.qualified(namespace, entity.name + "__external")
        var columns: [PostgresColumn] = []
        var externals: [Schema.Attribute] = []
        for attribute in entity.attributes {
            if attribute.options.contains(.externalStorage) { externals.append(attribute); continue }
            columns.append(PostgresColumn(attribute))
        }
        self.externals = externals
        toOnes = entity.relationships.filter(\.isToOneRelationship).map {
            ToOne(relationship: $0, column: SQL.identifier($0.name + "_id"), target: $0.destination)
        }
        toManys = entity.relationships.filter { !$0.isToOneRelationship }.map {
            ToMany(relationship: $0, table: PostgresTable.qualified(namespace, entity.name + "_" + $0.name), target: $0.destination)
        }
        let byName = Dictionary(columns.map { ($0.property, $0) }, uniquingKeysWith: { a, _ in a })
        func columnNames(_ names: [String]) -> [String]? {
            let found = names.compactMap { name -> String? in
                if let column = byName[name] { return column.name }
                if entity.relationshipsByName[name]?.isToOneRelationship == true { return SQL.identifier(name + "_id") }
                return nil
            }
            return found.count == names.count ? found : nil
        }
        uniques = entity.uniquenessConstraints.compactMap(columnNames)
        indexes = entity.indices.compactMap(columnNames)
        // JSON values keep their text (json), so a -0.0 or a key's order comes back as written;
        // one a constraint or an index names is jsonb, which those need.
        let constrained = Set((uniques + indexes).joined())
        for i in columns.indices where columns[i].kind == .jsonb && !constrained.contains(columns[i].name) {
            columns[i].keepsJSONText = true
        }
        self.columns = columns
        rowColumns = (["t0.\"_id\"::bigint", "t0.\"_version\"::bigint"] + columns.map { $0.selected("t0") }
            + toOnes.map { "t0.\($0.column)::bigint" }).joined(separator: ", ")
        snapshotLayout = DefaultSnapshot.Layout(columns.map(\.property) + toOnes.map(\.relationship.name)
                                                + toManys.map(\.relationship.name) + externals.map(\.name))
    }

    /// Each model's table, by model (entity) name; throws a schema error when two of a
    /// table's columns would have one name (`checkColumnNames`).
    static func tables(of schema: Schema, namespace: String) throws -> [String: PostgresTable] {
        let tables = schema.entities.map { PostgresTable($0, namespace: namespace) }
        for table in tables { try table.checkColumnNames() }
        try checkRelationNames(tables)
        return Dictionary(tables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// A name as PostgreSQL keeps it: cut to 63 bytes, at a character's boundary (longer ones
    /// are cut without an error, so two names that begin alike become one).
    static func stored(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var kept = ""
        var bytes = 0
        for scalar in name.unicodeScalars {
            bytes += String(scalar).utf8.count
            if bytes > 63 { break }
            kept.unicodeScalars.append(scalar)
        }
        return kept
    }

    /// Throws a schema error naming both when two of the tables and indexes the models make
    /// in the namespace, or two constraints of one table, would have one PostgreSQL name, as
    /// written (a model named `Trip_stops` beside `Trip.stops`'s join table) or once cut to 63
    /// bytes. Nothing else would tell: `CREATE TABLE IF NOT EXISTS` would give both one table,
    /// and a foreign key whose name was taken would be left out, its delete rule with it.
    static func checkRelationNames(_ tables: [PostgresTable]) throws {
        let advice = "Rename the model or the property (originalName: keeps a file store's data), or keep it in a file store."
        func checker(_ what: String) -> (String, String) throws -> Void {
            var claims = NameClaims(what: what, advice: advice)
            return { raw, owner in try claims.claim(raw, owner) }
        }
        let relation = checker("table or index of the namespace")
        for own in ["strata_meta", "strata_history", "strata_ids"] { try relation(own, "the store's own \(own)") }
        for table in tables {
            let e = table.name
            try relation(e, "the table of \(e)")
            let constraint = checker("constraint of the table of \(e)")
            for i in table.uniques.indices {
                try relation("\(e)_unique_\(i)", "unique constraint \(i) of \(e)")
                try constraint("\(e)_unique_\(i)", "unique constraint \(i) of \(e)")
            }
            for i in table.indexes.indices { try relation("\(e)_index_\(i)", "index \(i) of \(e)") }
            for toOne in table.toOnes {
                let r = toOne.relationship.name
                try relation("\(e)_\(r)_fk", "the index of \(e).\(r)")
                try constraint("\(e)_\(r)_fkey", "the foreign key of \(e).\(r)")
            }
            for toMany in table.toManys {
                let r = toMany.relationship.name
                try relation("\(e)_\(r)", "the join table of \(e).\(r)")
                try relation("\(e)_\(r)_target", "the index of \(e).\(r)'s join table")
                let joined = checker("constraint of the join table of \(e).\(r)")
                try joined("\(e)_\(r)_owner_fkey", "the owner's foreign key of \(e).\(r)")
                try joined("\(e)_\(r)_target_fkey", "the target's foreign key of \(e).\(r)")
            }
            if !table.externals.isEmpty { try relation("\(e)__external", "the external-storage table of \(e)") }
        }
    }

    /// The store's own columns, in every table: the row's key and its version.
    static let ownColumns = ["\"_id\"", "\"_version\""]

    /// Throws a schema error naming the properties when two of the table's columns would have
    /// one name: an attribute named as the store's own `_id` or `_version`, or as the column
    /// beside another property (a date's `<name>_at`, a to-one's `<name>_id`).
    func checkColumnNames() throws {
        var claims = NameClaims(what: "column", context: "\(name): ",
                                advice: "Rename the property (originalName: keeps a file store's data), or keep it in a file store.")
        for own in ["_id", "_version"] { try claims.claim(own, "the store's own column \(SQL.identifier(own))") }
        for column in columns {
            try claims.claim(column.property, "the attribute \(column.property)")
            if column.kind == .date { try claims.claim(column.property + "_at", "the timestamptz column beside the date \(column.property)") }
        }
        for toOne in toOnes { try claims.claim(toOne.relationship.name + "_id", "the foreign key of the relationship \(toOne.relationship.name)") }
    }

    func column(named property: String) -> PostgresColumn? { columns.first { $0.property == property } }

    /// `CREATE` statements for the table, its indexes, join and side tables (foreign keys to
    /// other tables come after every table exists: `foreignKeys`).
    ///
    /// `nullsNotDistinct` (PostgreSQL 15 and later): a unique constraint takes NULL as one value,
    /// as Strata's unique constraints take nil everywhere (a file store's index keys do); on an
    /// older server two rows may each hold NULL (Docs/Postgres.md, "Unique constraints").
    func createStatements(nullsNotDistinct: Bool) -> [String] {
        var definitions = ["\(PostgresTable.ownColumns[0]) bigint PRIMARY KEY", "\(PostgresTable.ownColumns[1]) bigint NOT NULL DEFAULT 1"]
        for column in columns {
            definitions.append("\(column.name) \(column.sqlType)\(column.isOptional ? "" : " NOT NULL")")
            if column.kind == .date { definitions.append("\(column.timestampName) timestamptz") }
        }
        for toOne in toOnes { definitions.append("\(toOne.column) bigint") }
        for i in uniques.indices { definitions.append(uniqueConstraint(i, nullsNotDistinct: nullsNotDistinct)) }
        var statements = ["CREATE TABLE IF NOT EXISTS \(qualified) (\(definitions.joined(separator: ", ")))"]
        for (i, index) in indexes.enumerated() {
            statements.append("CREATE INDEX IF NOT EXISTS \(SQL.identifier("\(name)_index_\(i)")) ON \(qualified) (\(index.joined(separator: ", ")))")
        }
        for toOne in toOnes {
            statements.append("CREATE INDEX IF NOT EXISTS \(SQL.identifier("\(name)_\(toOne.relationship.name)_fk")) ON \(qualified) (\(toOne.column))")
        }
        for toMany in toManys {
            statements.append("CREATE TABLE IF NOT EXISTS \(toMany.table) (\"owner_id\" bigint NOT NULL, \"position\" integer NOT NULL, \"target_id\" bigint NOT NULL, PRIMARY KEY (\"owner_id\", \"position\"))")
            statements.append("CREATE INDEX IF NOT EXISTS \(SQL.identifier("\(name)_\(toMany.relationship.name)_target")) ON \(toMany.table) (\"target_id\")")
        }
        if !externals.isEmpty {
            statements.append("CREATE TABLE IF NOT EXISTS \(externalTable) (\"id\" bigint NOT NULL, \"property\" text NOT NULL, \"data\" bytea, PRIMARY KEY (\"id\", \"property\"))")
        }
        return statements
    }

    /// `CONSTRAINT "<table>_unique_<i>" UNIQUE [NULLS NOT DISTINCT] (columns)`.
    func uniqueConstraint(_ i: Int, nullsNotDistinct: Bool) -> String {
        "CONSTRAINT \(SQL.identifier("\(name)_unique_\(i)")) UNIQUE\(nullsNotDistinct ? " NULLS NOT DISTINCT" : "") (\(uniques[i].joined(separator: ", ")))"
    }

    /// Whether the column named `quoted` (an attribute's or a to-one's) may hold NULL.
    func isNullable(_ quoted: String) -> Bool { columns.first { $0.name == quoted }?.isOptional ?? true }

    /// The foreign keys of the table's relationships, deferred to commit (a save writes its rows
    /// in any order; delete rules leave no dangling reference by then).
    func foreignKeys(_ tables: [String: PostgresTable]) -> [String] {
        var statements: [String] = []
        func add(_ table: String, _ constraint: String, _ column: String, _ target: String, _ onDelete: String) {
            guard let targetTable = tables[target] else { return }
            statements.append("""
                DO $$ BEGIN ALTER TABLE \(table) ADD CONSTRAINT \(SQL.identifier(constraint)) FOREIGN KEY (\(column)) REFERENCES \(targetTable.qualified) ("_id") ON DELETE \(onDelete) DEFERRABLE INITIALLY DEFERRED; EXCEPTION WHEN duplicate_object THEN NULL; END $$
                """)
        }
        for toOne in toOnes { add(qualified, "\(name)_\(toOne.relationship.name)_fkey", toOne.column, toOne.target, "SET NULL") }
        for toMany in toManys {
            add(toMany.table, "\(name)_\(toMany.relationship.name)_owner_fkey", "\"owner_id\"", name, "CASCADE")
            add(toMany.table, "\(name)_\(toMany.relationship.name)_target_fkey", "\"target_id\"", toMany.target, "CASCADE")
        }
        if !externals.isEmpty { add(externalTable, "\(name)__external_fkey", "\"id\"", name, "CASCADE") }
        return statements
    }
}

/// One attribute's column.
struct PostgresColumn {
    let property: String
    /// The quoted column name.
    let name: String
    let kind: ColumnKind
    let isOptional: Bool
    /// A `.jsonb` value kept in a `json` column (its exact text); predicates read it as jsonb.
    var keepsJSONText = false

    /// The column as a predicate reads it: `alias.column`, cast to jsonb if it keeps its text.
    func reference(_ alias: String) -> String {
        keepsJSONText ? "(\(alias).\(name))::jsonb" : "\(alias).\(name)"
    }

    init(_ attribute: Schema.Attribute) {
        property = attribute.name
        name = SQL.identifier(attribute.name)
        isOptional = attribute.isOptional
        if attribute.options.contains(where: { $0.description.hasPrefix("transformable") }) {
            kind = .bytea
        } else {
            kind = PostgresColumn.kind(of: attribute.valueType)
        }
    }

    /// The column in a select list, cast to the type `PostgresValues.value(_:_:)` reads its
    /// binary cell as: its own type for numbers, booleans, uuids and bytes (a cast that does
    /// nothing), text for the rest. The server then prints no number, and the client parses none.
    func selected(_ alias: String) -> String {
        switch kind {
        case .bigint: return "\(alias).\(name)::bigint"
        case .double, .date: return "\(alias).\(name)::float8"
        case .boolean: return "\(alias).\(name)::boolean"
        case .uuid: return "\(alias).\(name)::uuid"
        case .bytea: return "\(alias).\(name)::bytea"
        case .text, .url, .numeric, .jsonb: return "\(alias).\(name)::text"
        }
    }

    /// The `timestamptz` column beside a date's exact one.
    var timestampName: String { SQL.identifier(property + "_at") }

    var sqlType: String {
        switch kind {
        case .text, .url: return "text"
        case .bigint: return "bigint"
        case .double, .date: return "double precision"
        case .boolean: return "boolean"
        case .uuid: return "uuid"
        case .bytea: return "bytea"
        case .numeric: return "numeric"
        case .jsonb: return keepsJSONText ? "json" : "jsonb"
        }
    }

    /// The kind of column a Swift type is kept in (optionals unwrapped).
    static func kind(of type: Any.Type) -> ColumnKind {
        let type = (type as? any OptionalType.Type)?.wrappedType ?? type
        switch type {
        case is String.Type: return .text
        case is Bool.Type: return .boolean
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type: return .bigint
        case is UInt.Type, is UInt64.Type, is Decimal.Type: return .numeric
        case is Double.Type, is Float.Type: return .double
        case is Date.Type: return .date
        case is UUID.Type: return .uuid
        case is Data.Type: return .bytea
        case is URL.Type: return .url
        default: return .jsonb
        }
    }
}

/// An optional type, seen through its metatype.
protocol OptionalType {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// The names one kind of PostgreSQL object takes (a namespace's tables and indexes, one table's
/// columns or constraints), each with what claims it, compared as PostgreSQL keeps them (cut
/// to 63 bytes): a second claim of a name is a schema error naming both.
struct NameClaims {
    let what: String
    let context: String
    let advice: String
    private var owners: [String: String] = [:]

    init(what: String, context: String = "", advice: String) {
        self.what = what
        self.context = context
        self.advice = advice
    }

    mutating func claim(_ raw: String, _ owner: String) throws {
        let name = PostgresTable.stored(raw)
        if let first = owners[name] {
            throw StrataError(.invalidSchema, "\(context)\(owner) and \(first) would both be the PostgreSQL \(what) \(SQL.identifier(name))"
                + (raw.utf8.count > 63 ? " (PostgreSQL cuts a name to 63 bytes)" : "") + ". " + advice)
        }
        owners[name] = owner
    }
}
