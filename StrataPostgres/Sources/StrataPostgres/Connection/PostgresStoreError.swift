import Foundation
import PostgresNIO
import Strata

/// The server's errors as Strata's typed errors: a message that says what happened where and
/// what to do, the server's error (with its SQLSTATE) as the cause. (A prepared statement's
/// errors come as postgres-nio's older `PostgresError`, read alike.)
enum PostgresStoreError {
    /// The SQLSTATE of a server error (`23505`...), looked for under Strata's wrapping too.
    static func sqlState(_ error: any Error) -> String? {
        if let psql = error as? PSQLError { return psql.serverInfo?[.sqlState] }
        if case .server(let message)? = error as? PostgresError { return message.fields[.sqlState] }
        if let strata = error as? StrataError, let underlying = strata.underlying { return sqlState(underlying) }
        return nil
    }

    /// The table a server error names (a constraint's), if it names one.
    static func tableName(_ error: any Error) -> String? {
        if let psql = error as? PSQLError { return psql.serverInfo?[.tableName] }
        if case .server(let message)? = error as? PostgresError { return message.fields[.tableName] }
        if let strata = error as? StrataError, let underlying = strata.underlying { return tableName(underlying) }
        return nil
    }

    /// The server's message, if it sent one.
    static func serverMessage(_ error: any Error) -> String? {
        if let psql = error as? PSQLError {
            guard let info = psql.serverInfo, let message = info[.message] else { return nil }
            return [message, info[.detail], info[.hint]].compactMap { $0 }.joined(separator: " ")
        }
        if case .server(let server)? = error as? PostgresError, let message = server.fields[.message] {
            return [message, server.fields[.detail], server.fields[.hint]].compactMap { $0 }.joined(separator: " ")
        }
        if let strata = error as? StrataError, let underlying = strata.underlying { return serverMessage(underlying) }
        return nil
    }

    /// A serialization failure or a deadlock: the transaction may be run again.
    static func isRetryable(_ error: any Error) -> Bool {
        guard let state = sqlState(error) else { return false }
        return state == "40001" || state == "40P01"
    }

    /// The connection itself failed (closed, lost, never opened): it is not used again.
    static func isConnectionLevel(_ error: any Error) -> Bool {
        if let psql = error as? PSQLError {
            switch psql.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .messageDecodingFailure,
                 .unexpectedBackendMessage:
                return true
            default:
                return false
            }
        }
        if let legacy = error as? PostgresError {
            switch legacy {
            case .connectionClosed, .protocol: return true
            case .server: return false
            }
        }
        if let strata = error as? StrataError, let underlying = strata.underlying { return isConnectionLevel(underlying) }
        return error is ChannelError || error is IOError
    }

    static func connection(_ error: any Error, location: String) -> StrataError {
        let advice: String
        if let psql = error as? PSQLError, psql.code == .sslUnsupported {
            advice = "The server does not take TLS, which the URL's sslmode requires: turn ssl on at the server, or connect with sslmode=prefer or disable."
        } else if let psql = error as? PSQLError, let underlying = psql.underlying,
                  underlying is NIOSSLError || underlying is NIOSSLExtraError || String(reflecting: type(of: underlying)).contains("NIOSSL") {
            advice = "The TLS handshake failed: with sslmode=verify-ca or verify-full, sslrootcert must name the authority that signed the server's certificate, and with verify-full the URL's host must be a name the certificate holds."
        } else {
            advice = "Check that the server runs, and the URL's host, port, user, password and database."
        }
        return StrataError(.storeFailure, "Strata could not connect to the PostgreSQL server at \(location): \(describe(error)). \(advice)", underlying: error)
    }

    static func statement(_ error: any Error, sql: String, location: String) -> any Error {
        let state = sqlState(error)
        let message = serverMessage(error) ?? describe(error)
        switch state {
        case "23505":
            return StrataError(.uniqueConstraintViolation, "The PostgreSQL server at \(location) refused a row whose unique values another row has: \(message)", underlying: error)
        case "40001", "40P01":
            return StrataError(.storeFailure, "The PostgreSQL server at \(location) stopped the save for another writer (\(state ?? "")): \(message). Strata retries this a few times; save again.", underlying: error)
        case "25006":
            return StrataError(.readOnly, "The PostgreSQL server at \(location) takes no writes (a standby, or a read-only transaction): \(message). Save to the primary.", underlying: error)
        case "42P01", "42703":
            return StrataError(.schemaMismatch, "The tables at \(location) are not those of these models: \(message). Open the store with the models that made it, or migrate it.", underlying: error)
        default:
            if isConnectionLevel(error) {
                return StrataError(.storeFailure, "Strata lost its connection to the PostgreSQL server at \(location): \(message). A statement under way did not finish, unless only its answer was lost: a save lost at its commit (or a save of one statement) may have been committed. Fetch what it changed before saving again, once the server is back.", underlying: error)
            }
            return StrataError(.storeFailure, "The PostgreSQL server at \(location) refused a statement: \(message)\(state.map { " (SQLSTATE \($0))" } ?? "").", underlying: error)
        }
    }

    /// The error in a few words: the server's message, or postgres-nio's code and cause.
    static func describe(_ error: any Error) -> String {
        if let psql = error as? PSQLError {
            return serverMessage(psql) ?? "\(psql.code)\(psql.underlying.map { " (\($0))" } ?? "")"
        }
        return "\(error)"
    }
}
