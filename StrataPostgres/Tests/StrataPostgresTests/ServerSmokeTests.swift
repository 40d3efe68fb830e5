import Foundation
import Logging
import PostgresNIO
import Testing

/// The test server itself, through postgres-nio alone (no Strata): it answers, and a hot
/// standby of it follows it.
@Suite("ServerSmoke")
struct ServerSmokeTests {
    @Test func answersSelectOne() async throws {
        try await withConnection(to: TestServer.url()) { connection in
            let rows = try await connection.query("SELECT 1", logger: logger).collect()
            #expect(try rows.map { try $0.decode(Int.self) } == [1])
        }
    }

    @Test func answersThroughItsUnixSocket() async throws {
        try await withConnection(to: TestServer.socketURL()) { connection in
            let rows = try await connection.query("SELECT 2", logger: logger).collect()
            #expect(try rows.map { try $0.decode(Int.self) } == [2])
        }
    }

    @Test func namespacesAreValidAndUnique() {
        let names = (0 ..< 1000).map { _ in TestServer.namespace("A test(with: spaces), 'quotes' and Ünïcode") }
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(name.utf8.count <= 63)
            #expect(name.hasPrefix("t_"))
            #expect(name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" })
        }
        #expect(TestServer.namespace().hasPrefix("t_namespacesarevalidandunique_"))
    }

    @Test func standbyIsReadOnlyAndSeesThePrimarysCommits() async throws {
        let namespace = TestServer.namespace()
        let token = UUID().uuidString
        try await withConnection(to: TestServer.url()) { primary in
            try await primary.query("CREATE SCHEMA \(unescaped: namespace)", logger: logger)
            try await primary.query("CREATE TABLE \(unescaped: namespace).t (token text PRIMARY KEY)", logger: logger)
            try await primary.query("INSERT INTO \(unescaped: namespace).t (token) VALUES (\(token))", logger: logger)
        }
        try await withConnection(to: TestServer.standbyURL()) { standby in
            let recovery = try await standby.query("SELECT pg_is_in_recovery()", logger: logger).collect()
            #expect(try recovery.map { try $0.decode(Bool.self) } == [true])

            // Replication is asynchronous: poll, with a generous bound (a busy machine).
            let deadline = ContinuousClock.now + .seconds(120)
            var seen: [String] = []
            var lastError: (any Error)?
            while seen.isEmpty, ContinuousClock.now < deadline {
                do {
                    let rows = try await standby.query(
                        "SELECT token FROM \(unescaped: namespace).t WHERE token = \(token)", logger: logger
                    ).collect()
                    seen = try rows.map { try $0.decode(String.self) }
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42P01" || error.serverInfo?[.sqlState] == "3F000" {
                    lastError = error  // the table or schema has not been replayed yet
                }
                if seen.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(seen == [token], "the standby did not see the primary's row in 120 s (last error: \(String(reflecting: lastError)))")

            // A standby refuses writes: read_only_sql_transaction.
            await #expect {
                try await standby.query("INSERT INTO \(unescaped: namespace).t (token) VALUES ('x')", logger: logger)
            } throws: { error in
                (error as? PSQLError)?.serverInfo?[.sqlState] == "25006"
            }
        }
    }
}

private let logger = Logger(label: "StrataPostgresTests.ServerSmoke")

/// Connects with postgres-nio to a `postgresql://user:password@host:port/database` URL (or its
/// Unix socket: `?host=/folder`, the socket being `/folder/.s.PGSQL.PORT`), runs `body`, closes.
private func withConnection<T>(
    to url: URL, _ body: (PostgresConnection) async throws -> T
) async throws -> T {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
        throw TestServer.Failure(description: "not a URL: \(url)")
    }
    let username = components.user ?? "strata"
    let password = components.password
    let database = components.path.split(separator: "/").first.map(String.init)
    let port = components.port ?? 5432
    let configuration: PostgresConnection.Configuration
    if let socketFolder = components.queryItems?.first(where: { $0.name == "host" })?.value, socketFolder.hasPrefix("/") {
        configuration = .init(
            unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: username, password: password, database: database)
    } else {
        configuration = .init(
            host: components.host ?? "127.0.0.1", port: port, username: username, password: password, database: database,
            tls: .disable)
    }
    let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    do {
        let result = try await body(connection)
        try await connection.close()
        return result
    } catch {
        try? await connection.close()
        throw error
    }
}
