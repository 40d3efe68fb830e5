import Foundation
import PostgresNIO
import Strata

/// A container's models in a PostgreSQL database (or an engine that speaks its protocol).
///
/// ```swift
/// let configuration = PostgresConfiguration("Trips", schema: Schema([Trip.self]),
///     url: URL(string: "postgresql://user:password@127.0.0.1:5432/app")!,
///     namespace: "trips", allowsSave: true)
/// let container = try ModelContainer(for: Trip.self, configurations: configuration)
/// ```
/// The URL names the server and the database (its path), as libpq's do; a Unix socket is
/// `postgresql://user@/app?host=/var/run/postgresql` (the folder that holds it). `namespace` is
/// the PostgreSQL schema that holds the tables, created if missing. `allowsSave: false` reads
/// only (for a hot standby). Docs/Postgres.md has the tables, the SQL and the rules.
///
/// Strata-only: SwiftData has no PostgreSQL store.
public struct PostgresConfiguration: DataStoreConfiguration, Sendable {
    public typealias Store = PostgresStore

    public var name: String
    public var schema: Schema?
    public var url: URL
    public var namespace: String
    public var allowsSave: Bool
    /// Whether reads run again and again become prepared statements of their connection
    /// (Docs/Postgres.md, "Prepared statements"). Turn it off behind a pooler that hands each
    /// transaction another server connection (PgBouncer's transaction mode), where a prepared
    /// statement is not there the next time: statements then always run unprepared. Default true.
    public var preparesStatements: Bool = true
    /// Called as a migration plan's stages run, as `ModelConfiguration.migrationProgress` is
    /// (a Strata extra): each stage is one part (there is no copy), reported as it starts, and
    /// "done" at the end, before the transaction commits. Not part of the configuration's
    /// equality.
    public var migrationProgress: (@Sendable (MigrationProgress) -> Void)? = nil
    /// Set by a migration for the containers its stages open: their stores run in its
    /// transaction (`PostgresMigration`).
    var migration: MigrationTransaction?
    /// Rows a save's bulk statement sends at a time (`SaveRun.inParts`, Docs/Postgres.md,
    /// "Saves"). Tests make it small to save in several parts.
    var bulkPartSize = 8192

    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, namespace: String = "public", allowsSave: Bool = true) {
        self.name = name ?? "default"
        self.schema = schema
        self.url = url
        self.namespace = namespace
        self.allowsSave = allowsSave
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.schema == b.schema && a.url == b.url && a.namespace == b.namespace
            && a.allowsSave == b.allowsSave && a.preparesStatements == b.preparesStatements && a.migration == b.migration
            && a.bulkPartSize == b.bulkPartSize
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(namespace)
        hasher.combine(allowsSave)
    }

    /// Throws when the URL is not a PostgreSQL one or the namespace is not a PostgreSQL name:
    /// empty, longer than 63 bytes (the server would cut it, and two namespaces that start
    /// alike would share one schema), or with a NUL character.
    public func validate() throws {
        _ = try connectionConfiguration()
        if namespace.isEmpty { throw StrataError(.invalidSchema, "A PostgresConfiguration needs a namespace (a PostgreSQL schema name), such as \"public\".") }
        if namespace.utf8.count > 63 {
            throw StrataError(.invalidSchema, "The namespace \(namespace.prefix(80).debugDescription) is \(namespace.utf8.count) bytes long; a PostgreSQL schema name holds at most 63 (the server would cut it, and namespaces that begin alike would share one schema). Choose a shorter one.")
        }
        if namespace.utf8.contains(0) { throw StrataError(.invalidSchema, "A PostgresConfiguration's namespace cannot contain the character U+0000.") }
    }

    /// The URL without its password, for messages.
    var location: String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let hasPassword = components?.password != nil
        if hasPassword { components?.password = "***" }
        return (components?.string ?? url.absoluteString) + " (schema \(namespace))"
    }

    /// postgres-nio's configuration of the URL: host and port, or a Unix socket (`?host=/dir`).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme, scheme == "postgresql" || scheme == "postgres" else {
            throw StrataError(.invalidSchema, "\(url) is not a PostgreSQL URL; write postgresql://user:password@host:port/database.")
        }
        let user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let password = components.password.flatMap { $0.removingPercentEncoding }
        let database = components.path.isEmpty || components.path == "/" ? nil : String(components.path.dropFirst())
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        if let socketFolder = query["host"], socketFolder.hasPrefix("/") {
            let port = components.port ?? Int(query["port"] ?? "") ?? 5432
            return PostgresConnection.Configuration(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        return PostgresConnection.Configuration(host: host, port: components.port ?? 5432, username: user, password: password, database: database, tls: .disable)
    }
}

/// The session of a migration's transaction, handed to the stores its stages open (compared by
/// identity, as a configuration must be Hashable).
struct MigrationTransaction: Hashable, @unchecked Sendable {
    let session: PostgresSession
    static func == (a: Self, b: Self) -> Bool { a.session === b.session }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(session)) }
}
