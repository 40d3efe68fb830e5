import Foundation
import PostgresNIO
import Strata
import Synchronization

/// The store's connections to one server: a small pool of postgres-nio connections, used
/// synchronously (a `DataStore`'s calls are synchronous; the connections' event loop threads do
/// the work while the caller waits, so a caller on Swift's cooperative pool never waits for
/// that pool).
///
/// Every statement binds its parameters as text and casts them in SQL (`$1::bigint`), and every
/// result column is read as text (`col::text`): one exact representation for every type
/// (PostgreSQL prints a double with the fewest digits that read back as the same double).
final class PostgresSession: @unchecked Sendable {
    let configuration: PostgresConnection.Configuration
    /// Names the server in messages (without the password).
    let location: String
    private let idle = Mutex<[PostgresConnection]>([])
    private let nextID = Atomic<Int>(1)
    private let logger: Logger
    /// Connections kept idle at most.
    static let poolSize = 8
    /// A session inside another's transaction (a migration's): every statement runs on that
    /// connection, a transaction is a savepoint of it, and nothing listens.
    private let pinned: PostgresConnection?

    init(configuration: PostgresConnection.Configuration, location: String) {
        self.configuration = configuration
        self.location = location
        var logger = Logger(label: "strata.postgres")
        logger.logLevel = .critical
        self.logger = logger
        pinned = nil
    }

    /// A session whose statements all run in the transaction `connection` is in.
    init(pinnedTo connection: SQLConnection, configuration: PostgresConnection.Configuration) {
        self.configuration = configuration
        location = connection.location
        logger = connection.logger
        pinned = connection.raw
    }

    deinit {
        for connection in idle.withLock({ $0 }) { connection.closeSoon() }
    }

    private var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.next() }

    /// A connection from the pool, or a new one.
    private func connection() throws -> PostgresConnection {
        if let pinned { return pinned }
        if let pooled = idle.withLock({ $0.popLast() }), !pooled.isClosed { return pooled }
        let id = nextID.add(1, ordering: .relaxed).newValue
        do {
            return try PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger).wait()
        } catch {
            throw PostgresStoreError.connection(error, location: location)
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        guard pinned == nil, !connection.isClosed else { return }
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.poolSize else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.closeSoon() }
    }

    /// Runs `body` on a connection outside a transaction (each statement its own).
    func withConnection<R>(_ body: (SQLConnection) throws -> R) throws -> R {
        let raw = try connection()
        do {
            let result = try body(SQLConnection(raw: raw, logger: logger, location: location))
            giveBack(raw)
            return result
        } catch {
            // A connection that failed may be in any state: it is closed, never pooled.
            if pinned == nil, PostgresStoreError.isConnectionLevel(error) { raw.closeSoon() } else { giveBack(raw) }
            throw error
        }
    }

    /// Runs `body` in one transaction, committed when it returns. Serialization failures and
    /// deadlocks (40001, 40P01) run it again, up to `retries` times; every error path rolls back
    /// before the connection goes back to the pool (a connection left in a failed transaction
    /// would fail its next statement with 25P02).
    func transaction<R>(isolation: String = "READ COMMITTED", retries: Int = 8, alsoRetrying: Set<String> = [],
                        _ body: (SQLConnection) throws -> R) throws -> R {
        if let pinned {
            // A savepoint of the transaction the session is pinned to; an error undoes it and
            // ends the whole transaction's work (no retry: the outer transaction decides).
            let sql = SQLConnection(raw: pinned, logger: logger, location: location)
            try sql.execute("SAVEPOINT strata_inner")
            do {
                let result = try body(sql)
                try sql.execute("RELEASE SAVEPOINT strata_inner")
                return result
            } catch {
                _ = try? sql.execute("ROLLBACK TO SAVEPOINT strata_inner")
                throw error
            }
        }
        var attempt = 0
        while true {
            attempt += 1
            let raw = try connection()
            let sql = SQLConnection(raw: raw, logger: logger, location: location)
            do {
                try sql.execute("BEGIN ISOLATION LEVEL \(isolation)")
                let result = try body(sql)
                try sql.execute("COMMIT")
                giveBack(raw)
                return result
            } catch {
                if PostgresStoreError.isConnectionLevel(error) {
                    raw.closeSoon()
                } else if (try? sql.execute("ROLLBACK")) != nil {
                    giveBack(raw)
                } else {
                    raw.closeSoon()
                }
                if attempt <= retries, PostgresStoreError.isRetryable(error) || PostgresStoreError.sqlState(error).map(alsoRetrying.contains) == true {
                    // Back off a little, more each time, so that the writers that collided
                    // do not collide again in step.
                    Thread.sleep(forTimeInterval: Double.random(in: 0...(0.002 * Double(attempt * attempt))))
                    continue
                }
                throw error
            }
        }
    }

    /// A connection of its own that listens on `channel` and calls `handler` with each
    /// notification's payload (nil: the connection could not listen).
    func listen(_ channel: String, _ handler: @escaping @Sendable (String) -> Void) -> PostgresConnection? {
        guard pinned == nil, let raw = try? connection() else { return nil }
        raw.addListener(channel: channel) { _, notification in handler(notification.payload) }
        do {
            _ = try raw.query(PostgresQuery(unsafeSQL: "LISTEN \(SQL.identifier(channel))"), logger: logger).wait()
            return raw
        } catch {
            raw.closeSoon()
            return nil
        }
    }
}

/// One connection, used synchronously: statements with text parameters, rows of text.
struct SQLConnection {
    let raw: PostgresConnection
    let logger: Logger
    let location: String

    /// Runs `sql` and returns its rows, each column as text (nil for NULL).
    @discardableResult
    func query(_ sql: String, _ binds: [String?] = []) throws -> [[String?]] {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if let bind { bindings.append(bind) } else { bindings.appendNull() }
        }
        let result: PostgresQueryResult
        do {
            result = try raw.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).wait()
        } catch {
            throw PostgresStoreError.statement(error, sql: sql, location: location)
        }
        var rows: [[String?]] = []
        rows.reserveCapacity(result.rows.count)
        for row in result.rows {
            var values: [String?] = []
            for cell in row {
                do { values.append(try cell.decode(String?.self)) } catch {
                    throw PostgresStoreError.statement(error, sql: sql, location: location)
                }
            }
            rows.append(values)
        }
        return rows
    }

    /// Runs `sql`; the number of rows it changed (or returned).
    @discardableResult
    func execute(_ sql: String, _ binds: [String?] = []) throws -> Int {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if let bind { bindings.append(bind) } else { bindings.appendNull() }
        }
        do {
            let result = try raw.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).wait()
            return result.metadata.rows ?? result.rows.count
        } catch {
            throw PostgresStoreError.statement(error, sql: sql, location: location)
        }
    }
}

/// SQL text helpers.
enum SQL {
    /// A quoted identifier ("name", with quotes doubled).
    static func identifier(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
    /// A string constant ('text', with quotes doubled).
    static func literal(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}

extension PostgresConnection {
    /// Closes the connection and waits until it is (a connection let go of before its channel
    /// closed is an error of postgres-nio's). Never called on an event loop's thread.
    func closeSoon() {
        let future: EventLoopFuture<Void> = close()
        try? future.wait()
    }
}
