import Foundation
import Logging
import PostgresNIO

/// The server of the run, as each client wants it.
struct Server: Sendable {
    let url: URL
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String

    init(_ text: String) throws {
        guard let url = URL(string: text), let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.scheme == "postgresql" || components.scheme == "postgres" else {
            throw BenchError("\(text) is not a postgresql:// URL")
        }
        self.url = url
        host = components.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1"
        port = components.port ?? 5432
        user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        password = components.password.flatMap { $0.removingPercentEncoding }
        database = components.path.count > 1 ? String(components.path.dropFirst()) : user
    }

    var nioConfiguration: PostgresConnection.Configuration {
        PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: .disable)
    }

    static let logger: Logger = {
        var logger = Logger(label: "pgbench")
        logger.logLevel = .error
        return logger
    }()

    /// A connection for the harness's own statements (dropping schemas, VACUUM, checks).
    func connect() async throws -> PostgresConnection {
        try await PostgresConnection.connect(configuration: nioConfiguration, id: 1, logger: Server.logger)
    }
}

extension PostgresConnection {
    /// Runs one statement that has no parameters (DDL, VACUUM...).
    func run(_ sql: String) async throws {
        let rows = try await query(PostgresQuery(unsafeSQL: sql), logger: Server.logger)
        for try await _ in rows {}
    }

    /// The one integer a statement answers.
    func integer(_ sql: String) async throws -> Int {
        let rows = try await query(PostgresQuery(unsafeSQL: sql), logger: Server.logger)
        var value: Int?
        for try await row in rows { value = try row.decode(Int.self) }
        guard let value else { throw BenchError("no answer to \(sql)") }
        return value
    }
}
