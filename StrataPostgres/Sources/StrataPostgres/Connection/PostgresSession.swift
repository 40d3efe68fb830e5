import Foundation
import PostgresNIO
import Strata
import Synchronization

/// The store's connections to one server: a small pool of postgres-nio connections, used
/// synchronously (a `DataStore`'s calls are synchronous; the connections' event loop threads do
/// the work while the caller waits, so a caller on Swift's cooperative pool never waits for
/// that pool).
///
/// Statements bind their parameters as text and cast them in SQL (`$1::bigint`), and every
/// result column is read as text (`col::text`): one exact representation for every type
/// (PostgreSQL prints a double with the fewest digits that read back as the same double). A
/// save's columns are the exception: each is one typed array in binary format (`SQLArray`).
///
/// Statements run again and again with other binds (a fetch's `SELECT`, a batch delete's one
/// statement, a save's ids and its closing statement) are named prepared statements of their
/// connection (`PreparedStatements`): the server parses and plans them once, not at every run.
final class PostgresSession: @unchecked Sendable {
    let configuration: PostgresConnection.Configuration
    /// A TCP connection's socket settings: its socket is made here (`TCPSettings.connect`).
    private let tcp: TCPSettings?
    /// Which of the URL's hosts will do (`target_session_attrs`).
    private let target: TargetSession
    /// Names the server in messages (without the password).
    let location: String
    private let idle = Mutex<[PooledConnection]>([])
    private let nextID = Atomic<Int>(1)
    private let logger: Logger
    /// Connections kept idle at most.
    static let poolSize = 8
    /// A session inside another's transaction (a migration's): every statement runs on that
    /// connection, a transaction is a savepoint of it, and nothing listens.
    private let pinned: PostgresConnection?
    /// True when the session runs inside a transaction it did not begin (`init(pinnedTo:)`):
    /// its transactions are savepoints, and an error is not retried.
    var isPinned: Bool { pinned != nil }
    /// Whether pooled connections prepare the reads run again and again
    /// (`PostgresConfiguration.preparesStatements`).
    private let preparesStatements: Bool

    init(configuration: PostgresConnection.Configuration, tcp: TCPSettings? = nil, target: TargetSession = .any, location: String,
         preparesStatements: Bool = true) {
        self.configuration = configuration
        self.tcp = tcp
        self.target = target
        self.location = location
        self.preparesStatements = preparesStatements
        var logger = Logger(label: "strata.postgres")
        logger.logLevel = .critical
        self.logger = logger
        pinned = nil
    }

    /// A session whose statements all run in the transaction `connection` is in.
    init(pinnedTo connection: SQLConnection, configuration: PostgresConnection.Configuration) {
        self.configuration = configuration
        tcp = nil
        target = .any
        preparesStatements = false
        location = connection.location
        logger = connection.logger
        pinned = connection.raw
    }

    deinit {
        for connection in idle.withLock({ $0 }) { connection.raw.closeSoon() }
    }

    private var eventLoop: any EventLoop { MultiThreadedEventLoopGroup.singleton.next() }

    /// A connection of the pool and its prepared statements (none for a pinned session's).
    private final class PooledConnection: Sendable {
        let raw: PostgresConnection
        let statements: PreparedStatements?
        init(_ raw: PostgresConnection, statements: PreparedStatements?) {
            self.raw = raw
            self.statements = statements
        }
    }

    /// A connection from the pool, or a new one.
    ///
    /// Refused on one of SwiftNIO's event loop threads (code running in an `EventLoopFuture`'s
    /// callback, or a Vapor route that returns a future): every statement waits for its
    /// answer, and SwiftNIO traps a wait there. The caller gets a typed error to act on
    /// rather than a crash.
    private func connection() throws -> PooledConnection {
        if let pinned { return PooledConnection(pinned, statements: nil) }
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw StrataError(.storeFailure, "The PostgreSQL store at \(location) was used on a SwiftNIO event loop thread, where waiting for the server would stall every connection of that loop (SwiftNIO stops the program there). Call Strata from a Task, an async route handler or another thread, e.g. with `eventLoop.makeFutureWithTask { … }` or `NIOThreadPool.runIfActive`.")
        }
        if let pooled = idle.withLock({ $0.popLast() }), !pooled.raw.isClosed { return pooled }
        let raw = try open()
        // No JIT compilation: the store's statements are short, and a save's `unnest` of
        // 20k rows is costed high enough to be compiled, which took 23 to 46 ms of its
        // 300 to 500. (An engine without the setting refuses it, and nothing changes.)
        _ = try? raw.answer(raw.query("SET jit = off", logger: logger))
        return PooledConnection(raw, statements: preparesStatements ? PreparedStatements() : nil)
    }

    /// A new connection: to the one server, or to the first of the URL's hosts that answers and
    /// is of the kind `target` asks for (libpq's host list and `target_session_attrs`).
    private func open() throws -> PostgresConnection {
        var endpoints = tcp.map { Array($0.endpoints.indices) } ?? [0]
        // (libpq shuffles the hosts once per connection, then makes its passes over them.)
        if tcp?.shuffled == true { endpoints.shuffle() }
        if endpoints.count == 1, target == .any {
            do { return try open(endpoints[0]) } catch { throw PostgresStoreError.connection(error, location: location) }
        }
        var passedOver: [String] = []
        for pass in target == .preferStandby ? [TargetSession.standby, .any] : [target] {
            for endpoint in endpoints {
                let name = tcp.map { "\($0.endpoints[endpoint].host):\($0.endpoints[endpoint].port)" } ?? "the socket"
                let raw: PostgresConnection
                do { raw = try open(endpoint) } catch {
                    if pass == target { passedOver.append("\(name): no connection (\(PostgresStoreError.describe(error)))") }
                    continue
                }
                if pass == .any { return raw }
                do {
                    let row = try SQLConnection(raw: raw, logger: logger, location: location)
                        .query("SELECT pg_is_in_recovery()::text, current_setting('transaction_read_only')").first
                    let inRecovery = row?.first == "true", readOnly = row?.last == "on"
                    if pass.accepts(inRecovery: inRecovery, readOnly: readOnly) { return raw }
                    passedOver.append("\(name): \(inRecovery ? "a standby" : "a primary")\(readOnly ? ", read-only" : "")")
                } catch {
                    passedOver.append("\(name): \(error)")
                }
                raw.closeSoon()
            }
        }
        throw StrataError(.storeFailure, "None of the servers at \(location) is one target_session_attrs=\(target.rawValue) takes: \(passedOver.joined(separator: "; ")). Check which of them is the primary now, or the URL's host list.")
    }

    /// A connection to the URL's host `endpoint` (or its one server).
    private func open(_ endpoint: Int) throws -> PostgresConnection {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let eventLoop = self.eventLoop
        let configuration = try tcp?.connect(to: endpoint, on: eventLoop, configuration) ?? configuration
        do {
            return try PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger).wait()
        } catch {
            // (The socket made for it is closed too, whichever step failed.)
            configuration.establishedChannel?.close(promise: nil)
            throw error
        }
    }

    private func giveBack(_ connection: PooledConnection) {
        guard pinned == nil, !connection.raw.isClosed else { return }
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < Self.poolSize else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.raw.closeSoon() }
    }

    /// Runs `body` on a connection outside a transaction (each statement its own). Its
    /// `query(_:_:reused:)` may run a prepared statement.
    func withConnection<R>(_ body: (SQLConnection) throws -> R) throws -> R {
        let pooled = try connection()
        do {
            let result = try body(SQLConnection(raw: pooled.raw, logger: logger, location: location, statements: pooled.statements))
            giveBack(pooled)
            return result
        } catch {
            // A connection that failed may be in any state: it is closed, never pooled.
            if pinned == nil, PostgresStoreError.isConnectionLevel(error) { pooled.raw.closeSoon() } else { giveBack(pooled) }
            throw error
        }
    }

    /// Runs `body` in one transaction, committed when it returns. Serialization failures and
    /// deadlocks (40001, 40P01) run it again, up to `retries` times; every error path rolls back
    /// before the connection goes back to the pool (a connection left in a failed transaction
    /// would fail its next statement with 25P02).
    ///
    /// A statement run again and again in it (`query(_:_:reused:)`) runs prepared, unless
    /// `retries` is 0. One whose prepared form failed (gone from the server, or its plan
    /// outdated by a schema change) cannot run again unprepared in the aborted transaction, so
    /// the transaction runs again (`PreparedStatementLost`), that statement unprepared.
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
            let pooled = try connection()
            let raw = pooled.raw
            // (Prepared only where the body may run again: a transaction that is not retried,
            // a batched fetch handing rows to its caller, cannot recover from a lost one.)
            let sql = SQLConnection(raw: raw, logger: logger, location: location, statements: retries > 0 ? pooled.statements : nil,
                                    inTransaction: true)
            do {
                try sql.execute("BEGIN ISOLATION LEVEL \(isolation)")
                let result = try body(sql)
                try sql.execute("COMMIT")
                giveBack(pooled)
                return result
            } catch {
                if PostgresStoreError.isConnectionLevel(error) {
                    raw.closeSoon()
                } else if (try? sql.execute("ROLLBACK")) != nil {
                    giveBack(pooled)
                } else {
                    raw.closeSoon()
                }
                if attempt <= retries, PostgresStoreError.isRetryable(error) || error is PreparedStatementLost
                    || PostgresStoreError.sqlState(error).map(alsoRetrying.contains) == true {
                    Self.backOff(attempt)
                    continue
                }
                throw error
            }
        }
    }

    /// Runs `body`, which sends one statement that writes, outside a transaction: the statement
    /// is its own transaction, committed when it ends, with one round trip where BEGIN and
    /// COMMIT add two. Its `query(_:_:reused:)` may run it prepared: the errors that make a
    /// prepared statement run again unprepared (26000, 0A000) come before it changed anything,
    /// and there is no transaction to abort. Serialization failures and deadlocks (40001,
    /// 40P01) run it again, as `transaction` does; a pinned session runs it in a savepoint.
    func statement<R>(retries: Int = 8, _ body: (SQLConnection) throws -> R) throws -> R {
        if pinned != nil { return try transaction(retries: retries, body) }
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try withConnection(body)
            } catch {
                if attempt <= retries, PostgresStoreError.isRetryable(error) {
                    Self.backOff(attempt)
                    continue
                }
                throw error
            }
        }
    }

    /// Before a retry: a random pause, longer each time, so that the writers that collided do
    /// not collide again in step.
    private static func backOff(_ attempt: Int) {
        Thread.sleep(forTimeInterval: Double.random(in: 0...(0.002 * Double(attempt * attempt))))
    }

    /// A connection of its own that listens on `channel` and calls `handler` with each
    /// notification's payload (nil: the connection could not listen).
    func listen(_ channel: String, _ handler: @escaping @Sendable (String) -> Void) -> PostgresConnection? {
        guard pinned == nil, let raw = try? connection().raw else { return nil }
        raw.addListener(channel: channel) { _, notification in handler(notification.payload) }
        do {
            _ = try raw.answer(raw.query(PostgresQuery(unsafeSQL: "LISTEN \(SQL.identifier(channel))"), logger: logger))
            return raw
        } catch {
            raw.closeSoon()
            return nil
        }
    }
}

/// One connection, used synchronously: statements with text parameters (or typed arrays),
/// rows as text (`query`) or as the binary cells the server sends (`rows`; postgres-nio asks
/// for binary results in every Bind, its prepared statements' included).
struct SQLConnection {
    let raw: PostgresConnection
    let logger: Logger
    let location: String
    /// The connection's prepared statements (nil: nothing is prepared).
    var statements: PreparedStatements? = nil
    /// True in `PostgresSession.transaction`: a prepared statement that failed there cannot run
    /// again unprepared (the transaction is aborted); it throws `PreparedStatementLost`.
    var inTransaction = false

    /// Runs `sql` and returns its rows, each column as text (nil for NULL). `reused`: a read
    /// (a `SELECT` without side effects), or a write sent alone by `PostgresSession.statement`,
    /// whose text is run again and again with other binds, prepared on its second run when
    /// the connection prepares statements.
    @discardableResult
    func query(_ sql: String, _ binds: [String?] = [], reused: Bool = false) throws -> [[String?]] {
        try texts(try rows(sql, binds, reused: reused), sql)
    }

    /// Runs `sql` and returns its rows as the server sent them: every column in binary format
    /// (postgres-nio asks for it), for a reader that knows each column's type
    /// (`PostgresValues.value(_:_:)` of a cell). `reused` as for `query`.
    func rows(_ sql: String, _ binds: [String?] = [], reused: Bool = false) throws -> [PostgresRow] {
        if reused, let statements, let rows = try preparedRows(sql, binds.count, verbatim: false, statements, data: {
            binds.map(Self.textData)
        }) {
            return rows
        }
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if let bind { bindings.append(bind) } else { bindings.appendNull() }
        }
        return try rows(sql, bindings)
    }

    /// Runs `sql` with typed array parameters (`$1::bigint[]`, …, each array's `sqlType`) and
    /// returns its rows, each column as text.
    @discardableResult
    func query(_ sql: String, arrays: [SQLArray]) throws -> [[String?]] {
        var bindings = PostgresBindings(capacity: arrays.count)
        for array in arrays { bindings.append(array) }
        return try texts(try rows(sql, bindings), sql)
    }

    /// Runs `sql` with typed array parameters (`$1` to `$n`, each written `$k::` and its array's
    /// `sqlType`), then text ones (each written `$k::text`), and returns its rows, each column as
    /// text. `reused` as for `query`: prepared as written, since every parameter's type is the
    /// one its cast names, which is the type of its binary bind.
    @discardableResult
    func query(_ sql: String, arrays: [SQLArray], then texts: [String?], reused: Bool = false) throws -> [[String?]] {
        if reused, let statements, let rows = try preparedRows(sql, arrays.count + texts.count, verbatim: true, statements, data: {
            var data: [PostgresData] = []
            data.reserveCapacity(arrays.count + texts.count)
            for array in arrays {
                var buffer = ByteBuffer()
                array.encode(into: &buffer, context: .default)
                data.append(PostgresData(type: array.psqlType, formatCode: .binary, value: buffer))
            }
            data += texts.map(Self.textData)
            return data
        }) {
            return try self.texts(rows, sql)
        }
        var bindings = PostgresBindings(capacity: arrays.count + texts.count)
        for array in arrays { bindings.append(array) }
        for text in texts {
            if let text { bindings.append(text) } else { bindings.appendNull() }
        }
        return try self.texts(try rows(sql, bindings), sql)
    }

    /// Sends `sql` (no parameters) now and returns at once; `PendingRows.wait()` gives its
    /// rows. The connection runs its statements in order, so one sent next waits its turn.
    /// For reading the next batch of a cursor while this one is made into objects.
    func rowsSoon(_ sql: String) -> PendingRows {
        PendingRows(sql: sql, location: location, connection: raw, result: raw.query(PostgresQuery(unsafeSQL: sql), logger: logger))
    }

    struct PendingRows {
        let sql: String
        let location: String
        let connection: PostgresConnection
        let result: EventLoopFuture<PostgresQueryResult>

        func wait() throws -> [PostgresRow] {
            do { return try connection.answer(result).rows } catch {
                throw PostgresStoreError.statement(error, sql: sql, location: location)
            }
        }
    }

    private func rows(_ sql: String, _ bindings: PostgresBindings) throws -> [PostgresRow] {
        do {
            return try raw.answer(raw.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger)).rows
        } catch {
            throw PostgresStoreError.statement(error, sql: sql, location: location)
        }
    }

    /// Rows' columns as text.
    private func texts(_ result: [PostgresRow], _ sql: String) throws -> [[String?]] {
        var rows: [[String?]] = []
        rows.reserveCapacity(result.count)
        for row in result { rows.append(try texts(row, sql, columns: rows.first?.count ?? 0)) }
        return rows
    }

    /// A text parameter of a prepared run: the same bytes as `PostgresBindings.append(String)`,
    /// text in binary format (UTF-8), or NULL.
    private static func textData(_ text: String?) -> PostgresData {
        text.map(PostgresData.init(string:)) ?? PostgresData(type: .text)
    }

    /// `sql` run as the connection's prepared statement of that text; nil when it is not one
    /// (yet), or when the server no longer has it or can no longer use its plan (the caller
    /// then runs it unprepared: those errors stop a statement before it changed anything, so
    /// nothing is done twice). In a transaction, which those errors abort, it throws
    /// `PreparedStatementLost` instead, and the transaction runs again.
    /// `verbatim`: the text is prepared as it is (its parameters' casts name their binds' types),
    /// not with `SQL.textParameters`. `data` makes the `parameters` binds, only for a statement
    /// that runs prepared (an unprepared run binds its own).
    private func preparedRows(_ sql: String, _ parameters: Int, verbatim: Bool, _ statements: PreparedStatements,
                              data: () -> [PostgresData]) throws -> [PostgresRow]? {
        let statement: PreparedQuery?
        do {
            statement = try statements.statement(for: sql, parameters: parameters, on: raw, inTransaction: inTransaction, verbatim: verbatim)
        } catch {
            if error is PreparedStatementLost { throw error }
            throw PostgresStoreError.statement(error, sql: sql, location: location)
        }
        guard let statement else { return nil }
        let result: [PostgresRow]
        do {
            result = try raw.answer(statement.execute(data()))
        } catch {
            // 26000: the statement is gone (DEALLOCATE ALL, DISCARD ALL, a pooler between);
            // 0A000: "cached plan must not change result type" (a table changed under it).
            let state = PostgresStoreError.sqlState(error)
            guard state == "26000" || state == "0A000" else { throw PostgresStoreError.statement(error, sql: sql, location: location) }
            statements.forget(sql, on: raw)
            if inTransaction { throw PreparedStatementLost(sql: sql) }
            return nil
        }
        return result
    }

    /// A row's columns as text (`columns`: how many there are, if known).
    private func texts(_ row: PostgresRow, _ sql: String, columns: Int) throws -> [String?] {
        var values: [String?] = []
        values.reserveCapacity(columns)
        for cell in row {
            // A text column's bytes are its UTF-8 in either format: what `decode(String?.self)`
            // reads, without its generic decoding per cell. (A prepared statement's rows say
            // text format for the binary the server sends: the same bytes for text.)
            if cell.dataType == .text {
                values.append(cell.bytes.map { String(buffer: $0) })
                continue
            }
            do { values.append(try cell.decode(String?.self)) } catch {
                throw PostgresStoreError.statement(error, sql: sql, location: location)
            }
        }
        return values
    }

    /// Runs `sql`; the number of rows it changed (or returned).
    @discardableResult
    func execute(_ sql: String, _ binds: [String?] = []) throws -> Int {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            if let bind { bindings.append(bind) } else { bindings.appendNull() }
        }
        return try execute(sql, bindings)
    }

    /// Runs `sql` with typed array parameters; the number of rows it changed (or returned).
    @discardableResult
    func execute(_ sql: String, arrays: [SQLArray]) throws -> Int {
        var bindings = PostgresBindings(capacity: arrays.count)
        for array in arrays { bindings.append(array) }
        return try execute(sql, bindings)
    }

    /// Sends `sql` with typed array parameters now and returns at once; `PendingCount.wait()`
    /// gives the number of rows it changed. The connection runs its statements in order, so
    /// the caller can make the next statement's arrays while the server runs this one (a bulk
    /// insert sent in parts). postgres-nio writes the next statement once this one has ended.
    func executeSoon(_ sql: String, arrays: [SQLArray]) -> PendingCount {
        var bindings = PostgresBindings(capacity: arrays.count)
        for array in arrays { bindings.append(array) }
        return PendingCount(sql: sql, location: location, connection: raw, result: raw.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
    }

    struct PendingCount {
        let sql: String
        let location: String
        let connection: PostgresConnection
        let result: EventLoopFuture<PostgresQueryResult>

        func wait() throws -> Int {
            do {
                let result = try connection.answer(result)
                return result.metadata.rows ?? result.rows.count
            } catch {
                throw PostgresStoreError.statement(error, sql: sql, location: location)
            }
        }
    }

    private func execute(_ sql: String, _ bindings: PostgresBindings) throws -> Int {
        do {
            let result = try raw.answer(raw.query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger))
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

    /// `sql` with `::text` after each parameter (`$1::uuid` becomes `$1::text::uuid`), for a
    /// statement prepared without parameter types (postgres-nio's `prepare(query:)`): the
    /// server then takes each parameter as text, as it does in an unnamed statement (whose
    /// Parse names text for each), and the binds are the same bytes, cast in SQL as before.
    ///
    /// Nil unless the text is plainly this store's SQL, where every parameter is found for sure:
    /// no dollar quote, comment, or string with a prefix (`E'...'`) or a backslash; each
    /// parameter followed by a cast, a comma, a parenthesis, a space or the end; parameters
    /// exactly $1...$count. The statement then runs unprepared.
    static func textParameters(_ sql: String, count: Int) -> String? {
        let bytes = Array(sql.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 6 * count)
        var seen = [Bool](repeating: false, count: count)
        func isWord(_ b: UInt8) -> Bool {
            b >= 0x80 || b == UInt8(ascii: "_") || b == UInt8(ascii: "$") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
        }
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            let next: UInt8? = i + 1 < bytes.count ? bytes[i + 1] : nil
            switch b {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A string or a quoted identifier, copied as it is (a doubled quote is in it).
                if b == UInt8(ascii: "'"), i > 0, isWord(bytes[i - 1]) { return nil }
                var end = i + 1
                while true {
                    guard end < bytes.count else { return nil }
                    if bytes[end] == b {
                        if end + 1 < bytes.count, bytes[end + 1] == b { end += 2; continue }
                        break
                    }
                    if b == UInt8(ascii: "'"), bytes[end] == UInt8(ascii: "\\") { return nil }
                    end += 1
                }
                out += bytes[i...end]
                i = end + 1
            case UInt8(ascii: "$"):
                if i > 0, isWord(bytes[i - 1]) {   // inside a name (a$1)
                    out.append(b)
                    i += 1
                    continue
                }
                var end = i + 1
                var n = 0
                while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) {
                    n = n * 10 + Int(bytes[end] - UInt8(ascii: "0"))
                    guard n <= count else { return nil }
                    end += 1
                }
                guard n >= 1 else { return nil }   // a dollar quote, or $0
                if end < bytes.count {
                    let after = bytes[end]
                    let isCast = after == UInt8(ascii: ":") && end + 1 < bytes.count && bytes[end + 1] == UInt8(ascii: ":")
                    guard isCast || after == UInt8(ascii: " ") || after == UInt8(ascii: ",") || after == UInt8(ascii: ")") else { return nil }
                }
                seen[n - 1] = true
                out += bytes[i..<end]
                out += "::text".utf8
                i = end
            case UInt8(ascii: "-") where next == UInt8(ascii: "-"), UInt8(ascii: "/") where next == UInt8(ascii: "*"):
                return nil
            default:
                out.append(b)
                i += 1
            }
        }
        guard !seen.contains(false) else { return nil }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A prepared statement failed in a transaction (the server no longer has it, its plan is
/// outdated, or it would not prepare it): the transaction is aborted, and runs again, the
/// statement unprepared (`PostgresSession.transaction`).
struct PreparedStatementLost: Error, CustomStringConvertible {
    let sql: String
    var description: String { "a prepared statement failed in a transaction, which runs again: \(sql.prefix(120))" }
}

/// A connection's named prepared statements, by the SQL text they run (postgres-nio's
/// `prepare(query:)`, each under a name of its own). A text is prepared on its second run: one
/// run only (a page at an offset of its own) costs no round trip to prepare it. At most
/// `capacity` are kept; the least recently used is closed to make room.
///
/// Used by one caller at a time (the connection's, between taking it from the pool and giving
/// it back); the lock only makes that plain.
final class PreparedStatements: Sendable {
    static let capacity = 64
    /// Texts remembered as run once, at most (then forgotten, all at once).
    static let seenCapacity = 256

    private struct Entry {
        let statement: PreparedQuery
        var lastUse: UInt64
    }

    private struct State {
        var statements: [String: Entry] = [:]
        /// Hashes of texts run once, unprepared (a collision only prepares a text early).
        var seenOnce: Set<Int> = []
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())

    /// The prepared statement of `sql`: the one kept, or one prepared now on the text's second
    /// run. Nil: run it unprepared (its first run, a text `SQL.textParameters` leaves alone, or
    /// one the server would not prepare: running it unprepared gives the server's own answer).
    /// Throws only when the connection failed, or (`inTransaction`) when the server would not
    /// prepare it: `PreparedStatementLost`, since the failure aborted the transaction.
    /// `verbatim`: prepare the text as it is, its parameters typed by the casts it writes.
    func statement(for sql: String, parameters: Int, on connection: PostgresConnection, inTransaction: Bool = false,
                   verbatim: Bool = false) throws -> PreparedQuery? {
        let (kept, secondRun) = state.withLock { state -> (PreparedQuery?, Bool) in
            state.clock += 1
            if var entry = state.statements[sql] {
                entry.lastUse = state.clock
                state.statements[sql] = entry
                return (entry.statement, false)
            }
            if state.seenOnce.remove(sql.hashValue) != nil { return (nil, true) }
            if state.seenOnce.count >= Self.seenCapacity { state.seenOnce.removeAll() }
            state.seenOnce.insert(sql.hashValue)
            return (nil, false)
        }
        if let kept { return kept }
        guard secondRun, let text = verbatim ? sql : SQL.textParameters(sql, count: parameters) else { return nil }
        let statement: PreparedQuery
        do {
            statement = try connection.answer(connection.prepare(query: text))
        } catch {
            if PostgresStoreError.isConnectionLevel(error) || connection.isClosed { throw error }
            if inTransaction { throw PreparedStatementLost(sql: sql) }
            return nil
        }
        let evicted = state.withLock { state -> PreparedQuery? in
            var evicted: PreparedQuery? = nil
            if state.statements.count >= Self.capacity, let oldest = state.statements.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.statements[oldest.key] = nil
                evicted = oldest.value.statement
            }
            state.statements[sql] = Entry(statement: statement, lastUse: state.clock)
            return evicted
        }
        // Closing a statement the server no longer has is no error; a failure here is the
        // connection's, which its next statement reports.
        if let evicted { _ = try? connection.answer(evicted.deallocate()) }
        return statement
    }

    /// Drops the statement of `sql` (prepared again on a later run).
    func forget(_ sql: String, on connection: PostgresConnection) {
        guard let entry = state.withLock({ $0.statements.removeValue(forKey: sql) }) else { return }
        _ = try? connection.answer(entry.statement.deallocate())
    }

    /// The texts prepared now (for tests).
    var preparedTexts: Set<String> { state.withLock { Set($0.statements.keys) } }
}

extension PostgresConnection {
    /// Closes the connection and waits until it is (a connection let go of before its channel
    /// closed is an error of postgres-nio's). On an event loop's thread, where waiting is a
    /// trap of SwiftNIO's, it does not wait: the close's completion holds the connection until
    /// its channel closed. (A store is let go of there when the last reference to it was the
    /// one its LISTEN callback took: its deinit closed the listening connection and trapped.)
    func closeSoon() {
        let future: EventLoopFuture<Void> = close()
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            future.whenComplete { _ in withExtendedLifetime(self) {} }
            return
        }
        try? future.wait()
    }
}

extension PostgresConnection {
    /// `future`'s value, as `future.wait()` gives it, for a statement sent on this connection;
    /// or, when the connection closed and the answer cannot come any more, SwiftNIO's
    /// `ChannelError.ioOnClosedChannel` (a connection-level error: "Strata lost its connection").
    ///
    /// postgres-nio writes each statement to its channel without a promise of the write: one
    /// written after the channel closed (the server ended the connection while the caller was
    /// between two statements, as between two batches of an enumeration) is dropped, and its
    /// answer's future never completes. So the wait looks at the connection whenever it has
    /// waited `closedCheckInterval`; once it is closed, it lets the event loop finish what the
    /// close started (an answer or a failure already on its way is delivered), and if there is
    /// still no answer, there will be none. An answer that comes in time is returned at once.
    func answer<T: Sendable>(_ future: EventLoopFuture<T>) throws -> T {
        let answer = PendingAnswer<T>()
        future.whenComplete { answer.set($0) }
        while true {
            if let result = answer.wait(for: Self.closedCheckInterval) { return try result.get() }
            guard isClosed else { continue }
            // Whatever the loop had queued when the close began runs before this.
            _ = try? eventLoop.submit {}.wait()
            if let result = answer.wait(for: 0) { return try result.get() }
            throw ChannelError.ioOnClosedChannel
        }
    }

    /// How long an answer is waited for between two looks at whether the connection closed.
    static var closedCheckInterval: TimeInterval { 0.1 }
}

/// The result of a future, waited for with a bound (`PostgresConnection.answer`).
private final class PendingAnswer<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<T, any Error>?  // guarded by condition

    func set(_ result: Result<T, any Error>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    /// The result, once there is one, or nil after `seconds`.
    func wait(for seconds: TimeInterval) -> Result<T, any Error>? {
        condition.lock()
        defer { condition.unlock() }
        if result == nil, seconds > 0 {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while result == nil, condition.wait(until: deadline) {}
        }
        return result
    }
}
