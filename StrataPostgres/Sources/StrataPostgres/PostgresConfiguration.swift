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
/// `postgresql://user@/app?host=/var/run/postgresql` (the folder that holds it). Its query
/// takes libpq's parameters `sslmode` (default `prefer`), `sslrootcert`, `sslcert`, `sslkey`,
/// `connect_timeout`, `application_name`, `options`, `keepalives…`, `tcp_user_timeout`,
/// `passfile` (`~/.pgpass`), `target_session_attrs` and `load_balance_hosts` (with several
/// hosts, `host=db1,db2`),
/// `host`, `port`, `user`, `password` and `dbname`, with libpq's
/// meanings, and what it leaves out comes from libpq's environment variables (`PGPASSWORD`, …);
/// any other parameter is refused (Docs/Postgres.md, "The URL"). `namespace` is
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
    /// statement is not there the next time: statements then always run unprepared. Nor does
    /// the store then LISTEN for other processes' saves (the notifications would go to a
    /// server connection the pooler gave to someone else): its observers read the save counter
    /// instead, as on a standby. Default true.
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
    var location: String { maskedURL + " (schema \(namespace))" }

    /// The URL with its password hidden (the authority's, and one in the query, `?password=…`).
    var maskedURL: String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "a URL that is not one" }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems, items.contains(where: { $0.name == "password" }) {
            components.queryItems = items.map { $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0 }
        }
        return components.string ?? "a URL that is not one"
    }

    /// postgres-nio's configuration of the URL: host and port, or a Unix socket (`?host=/dir`),
    /// with the libpq parameters in its query that Strata supports (`ConnectionParameters`;
    /// Docs/Postgres.md, "The URL"). Any other parameter is an error, as it is for libpq: one
    /// silently ignored (`sslmode=require` above all) would connect otherwise than asked.
    func connectionConfiguration() throws -> PostgresConnection.Configuration { try connectionRecipe().configuration }

    /// postgres-nio's configuration, and for TCP the socket's settings (`TCPSettings`: the
    /// store's connections make their sockets themselves, to set them). What the URL leaves
    /// out comes from libpq's environment variables (`PGHOST`, `PGPASSWORD`, `PGSSLMODE`, …,
    /// `ConnectionParameters.environmentNames`), then Strata's defaults.
    func connectionRecipe(environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> (configuration: PostgresConnection.Configuration, tcp: TCPSettings?, target: TargetSession) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme, scheme == "postgresql" || scheme == "postgres" else {
            throw StrataError(.invalidSchema, "\(location) is not a PostgreSQL URL; write postgresql://user:password@host:port/database.")
        }
        // The environment's first (the URL's own, later, win), then the URL's query.
        var fromEnvironment: [URLQueryItem] = []
        for (variable, name) in ConnectionParameters.environmentNames {
            if let value = environment[variable], !value.isEmpty { fromEnvironment.append(URLQueryItem(name: name, value: value)) }
        }
        let parameters = try ConnectionParameters(fromEnvironment + (components.queryItems ?? []), url: location,
                                                  fromEnvironment: fromEnvironment.count)
        func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
        // Precedence, as libpq's: the URL's query, then its own parts, then the environment.
        let user = parameters.user ?? nonEmpty(components.user?.removingPercentEncoding) ?? parameters.environmentUser ?? "postgres"
        var password = parameters.password ?? components.password.flatMap { $0.removingPercentEncoding } ?? parameters.environmentPassword
        let database = parameters.database ?? (components.path.isEmpty || components.path == "/" ? nil : String(components.path.dropFirst()))
            ?? parameters.environmentDatabase
        var configuration: PostgresConnection.Configuration
        var tcp: TCPSettings?
        // The hosts (libpq's list, `h1,h2`, tried in order), each an IPv6 address without its
        // brackets or a socket's folder (also percent-encoded in the URL's host,
        // `postgresql://%2Fvar%2Frun%2Fpostgresql/app`), as libpq reads them; the ports, one
        // for all or one each.
        let urlHost = components.host.flatMap { $0.isEmpty ? nil : $0 }
        let hosts = (parameters.host ?? urlHost ?? parameters.environmentHost ?? "127.0.0.1")
            .split(separator: ",", omittingEmptySubsequences: false).map { host -> String in
                let host = host.trimmingCharacters(in: .whitespaces)
                return host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host.isEmpty ? "127.0.0.1" : host
            }
        let ports = parameters.ports ?? components.port.map { [$0] } ?? parameters.environmentPorts ?? [5432]
        guard ports.count == 1 || ports.count == hosts.count else {
            throw StrataError(.invalidSchema, "The PostgreSQL URL \(location) names \(hosts.count) hosts and \(ports.count) ports: give one port for all, or one for each host.")
        }
        let endpoints = hosts.indices.map { (host: hosts[$0], port: ports.count == 1 ? ports[0] : ports[$0]) }
        if endpoints.count > 1, endpoints.contains(where: { $0.host.hasPrefix("/") }) {
            throw StrataError(.invalidSchema, "The PostgreSQL URL \(location) lists a Unix socket's folder among several hosts; Strata tries several hosts over TCP only. Name the socket alone, or TCP hosts.")
        }
        let chosenHost = endpoints[0].host, port = endpoints[0].port
        let home = environment["HOME"] ?? NSHomeDirectory()
        // Without a password given, each host's from the password file, as libpq looks it up
        // for each host it tries: `passfile`, else PGPASSFILE, else ~/.pgpass. (A socket's
        // folder is matched as `localhost`; the database defaults to the user.)
        var passwords: [String?] = endpoints.map { _ in password }
        if password == nil {
            let named = parameters.passwordFile
            passwords = try PasswordFile.passwords(in: named ?? home + "/.pgpass", named: named != nil,
                                                   for: endpoints.map { ($0.host.hasPrefix("/") ? "localhost" : $0.host, $0.port) },
                                                   database: database ?? user, user: user, location: location)
            password = passwords[0]
        }
        if chosenHost.hasPrefix("/") {
            // (libpq uses no TLS on a Unix socket, whatever `sslmode` says.)
            configuration = PostgresConnection.Configuration(unixSocketPath: "\(chosenHost)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            configuration = PostgresConnection.Configuration(host: chosenHost, port: port, username: user, password: password, database: database,
                                                             tls: try parameters.tls(location: location, home: home))
            tcp = TCPSettings(endpoints: endpoints, passwords: passwords, shuffled: parameters.loadBalanceHosts,
                              keepalives: parameters.keepalives, idle: parameters.keepalivesIdle,
                              interval: parameters.keepalivesInterval, count: parameters.keepalivesCount,
                              userTimeout: parameters.tcpUserTimeout)
        }
        if let timeout = parameters.connectTimeout { configuration.options.connectTimeout = .seconds(Int64(timeout)) }
        configuration.options.additionalStartupParameters = parameters.startupParameters
        return (configuration, tcp, parameters.targetSession)
    }
}

/// The query parameters of a PostgreSQL URL, as libpq reads them
/// (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-PARAMKEYWORDS): those
/// Strata supports, checked; a parameter libpq knows that Strata does not support, or one
/// libpq does not know, is an error naming it.
struct ConnectionParameters {
    var host: String?
    var ports: [Int]?
    var user: String?
    var password: String?
    var database: String?
    /// libpq's default is `prefer`: TLS when the server offers it.
    var sslMode = "prefer"
    var sslRootCertificate: String?
    var sslCertificate: String?
    var sslKey: String?
    var connectTimeout: Int?
    var startupParameters: [(String, String)] = []
    /// TCP keepalive (libpq's `keepalives`, on by default) and its timing in seconds. Strata's
    /// defaults find a dead server in about two minutes (`TCPSettings`); 0 is the system's.
    var keepalives = true
    var keepalivesIdle = 60
    var keepalivesInterval = 10
    var keepalivesCount = 6
    /// Milliseconds sent data may stay unacknowledged before the connection is dropped (libpq's
    /// `tcp_user_timeout`); 0 is the system's.
    var tcpUserTimeout = 0
    /// libpq's `passfile` (or PGPASSFILE): where the password is looked up when none is given.
    var passwordFile: String?
    /// libpq's `target_session_attrs`: which of the hosts will do (`TargetSession`).
    var targetSession = TargetSession.any
    /// libpq's `load_balance_hosts=random`: each new connection tries the hosts in an order of
    /// its own, so that connections spread over them (`disable`, the default: in order).
    var loadBalanceHosts = false

    static let supported = ["host", "port", "dbname", "user", "password", "sslmode", "sslrootcert", "sslcert", "sslkey",
                            "connect_timeout", "application_name", "fallback_application_name", "options", "client_encoding",
                            "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
                            "passfile", "target_session_attrs", "load_balance_hosts"]
    /// libpq's other parameters: known, not supported.
    static let unsupported = ["hostaddr", "require_auth", "channel_binding", "replication", "gssencmode",
                              "requiressl", "sslcompression", "sslpassword", "sslcertmode", "sslcrl", "sslcrldir", "sslsni",
                              "requirepeer", "ssl_min_protocol_version", "ssl_max_protocol_version", "krbsrvname", "gsslib",
                              "gssdelegation", "service", "sslnegotiation"]

    /// What the environment gave for the URL's own parts (`PGHOST`, `PGPORT`, `PGUSER`,
    /// `PGPASSWORD`, `PGDATABASE`): used only where the URL says nothing.
    var environmentHost: String?
    var environmentPorts: [Int]?
    var environmentUser: String?
    var environmentPassword: String?
    var environmentDatabase: String?

    /// libpq's environment variables Strata reads, and the parameter each stands for.
    static let environmentNames: [(variable: String, parameter: String)] = [
        ("PGHOST", "host"), ("PGPORT", "port"), ("PGDATABASE", "dbname"), ("PGUSER", "user"), ("PGPASSWORD", "password"),
        ("PGSSLMODE", "sslmode"), ("PGSSLROOTCERT", "sslrootcert"), ("PGSSLCERT", "sslcert"), ("PGSSLKEY", "sslkey"),
        ("PGCONNECT_TIMEOUT", "connect_timeout"), ("PGAPPNAME", "application_name"), ("PGOPTIONS", "options"),
        ("PGTCP_USER_TIMEOUT", "tcp_user_timeout"), ("PGPASSFILE", "passfile"), ("PGTARGETSESSIONATTRS", "target_session_attrs"),
        ("PGLOADBALANCEHOSTS", "load_balance_hosts"),
    ]

    /// `items`: the first `fromEnvironment` from libpq's environment variables, then the URL's.
    init(_ items: [URLQueryItem], url location: String, fromEnvironment: Int = 0) throws {
        var fallbackName: String?
        var applicationName: String?
        for (index, item) in items.enumerated() {
            let value = item.value ?? ""
            func problem(_ what: String) -> StrataError {
                guard index < fromEnvironment, let variable = Self.environmentNames.first(where: { $0.parameter == item.name })?.variable else {
                    return Self.problem(what, location)
                }
                return StrataError(.invalidSchema, "The environment variable \(variable), which PostgreSQL connections read, has a value Strata cannot follow: \(what). Correct or unset it.")
            }
            if index < fromEnvironment {
                // The URL's own parts win over these: kept apart.
                switch item.name {
                case "host": environmentHost = value; continue
                case "port":
                    guard let numbers = Self.ports(value) else { throw problem("port=\(value) is not a port number (1 to 65535), or a list of them") }
                    environmentPorts = numbers; continue
                case "user": environmentUser = value; continue
                case "password": environmentPassword = value; continue
                case "dbname": environmentDatabase = value; continue
                default: break
                }
            }
            switch item.name {
            case "host": host = value.isEmpty ? nil : value
            case "port":
                guard let numbers = Self.ports(value) else {
                    throw problem("port=\(value) is not a port number (1 to 65535), or a list of them")
                }
                ports = numbers
            case "target_session_attrs":
                guard let target = TargetSession(rawValue: value) else {
                    throw problem("target_session_attrs=\(value) is not one of any, read-write, read-only, primary, standby, prefer-standby")
                }
                targetSession = target
            case "load_balance_hosts":
                guard value == "disable" || value == "random" else { throw problem("load_balance_hosts=\(value) is not disable or random") }
                loadBalanceHosts = value == "random"
            case "dbname": database = value.isEmpty ? nil : value
            case "user": user = value.isEmpty ? nil : value
            case "password": password = value
            case "sslmode":
                guard ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"].contains(value) else {
                    throw problem("sslmode=\(value) is not one of disable, allow, prefer, require, verify-ca, verify-full")
                }
                sslMode = value
            case "sslrootcert": sslRootCertificate = value
            case "sslcert": sslCertificate = value
            case "sslkey": sslKey = value
            case "connect_timeout":
                guard let seconds = Int(value), seconds >= 0 else {
                    throw problem("connect_timeout=\(value) is not a number of seconds")
                }
                // (libpq: 0 waits for ever, and less than 2 is 2.)
                connectTimeout = seconds == 0 ? 365 * 24 * 3600 : max(2, seconds)
            case "keepalives":
                guard let flag = Int(value) else { throw problem("keepalives=\(value) is not 1 or 0") }
                keepalives = flag != 0
            case "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout":
                guard let number = Int(value), number >= 0, number <= Int(Int32.max) else {
                    throw problem("\(item.name)=\(value) is not a whole number of \(item.name == "tcp_user_timeout" ? "milliseconds" : item.name == "keepalives_count" ? "probes" : "seconds")")
                }
                switch item.name {
                case "keepalives_idle": keepalivesIdle = number
                case "keepalives_interval": keepalivesInterval = number
                case "keepalives_count": keepalivesCount = number
                default: tcpUserTimeout = number
                }
            case "passfile": passwordFile = value.isEmpty ? nil : value
            case "application_name": applicationName = value
            case "fallback_application_name": fallbackName = value
            case "options": startupParameters.append(("options", value))
            case "client_encoding":
                // The wire protocol's text is UTF-8 to Strata (postgres-nio asks for it).
                guard ["utf8", "utf-8", "unicode"].contains(value.lowercased()) else {
                    throw problem("client_encoding=\(value): Strata reads and writes text as UTF-8 only; leave the parameter out")
                }
            default:
                if Self.unsupported.contains(item.name) {
                    throw problem("the libpq parameter \(item.name) is not supported by Strata; leave it out (Strata supports \(Self.supported.joined(separator: ", ")))")
                }
                throw problem("\(item.name) is not a PostgreSQL connection parameter (Strata supports \(Self.supported.joined(separator: ", ")))")
            }
        }
        if let name = applicationName ?? fallbackName { startupParameters.append(("application_name", name)) }
        if (sslCertificate == nil) != (sslKey == nil) {
            throw Self.problem("sslcert and sslkey go together: a client certificate needs its key", location)
        }
    }

    /// A port, or libpq's list of them (`5432,5433`).
    static func ports(_ text: String) -> [Int]? {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !numbers.isEmpty, numbers.allSatisfy({ $0.map { (1...65535).contains($0) } ?? false }) else { return nil }
        return numbers.compactMap { $0 }
    }

    private static func problem(_ what: String, _ location: String) -> StrataError {
        StrataError(.invalidSchema, "The PostgreSQL URL \(location) has a parameter Strata cannot follow: \(what).")
    }

    /// postgres-nio's TLS for `sslmode`, as libpq means it: `disable` none; `allow` and `prefer`
    /// TLS when the server offers it, its certificate not checked; `require` TLS or no
    /// connection, the certificate checked against `sslrootcert` only when one is named (or
    /// `~/.postgresql/root.crt` is there);
    /// `verify-ca` the certificate checked against `sslrootcert` (default
    /// `~/.postgresql/root.crt`; `system`: the system's roots); `verify-full` that and the host's
    /// name. (`allow` tries TLS first, where libpq tries it second.)
    func tls(location: String, home: String) throws -> PostgresConnection.Configuration.TLS {
        if sslMode == "disable" { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        // The authority the certificate is checked against: none for `prefer` and `allow`; for
        // `require`, `sslrootcert` or libpq's default file when it is there; for `verify-…`,
        // one or the other, or an error.
        var roots: String?
        if sslMode == "require" || sslMode.hasPrefix("verify") {
            let standard = home + "/.postgresql/root.crt"
            roots = sslRootCertificate ?? (FileManager.default.fileExists(atPath: standard) ? standard : nil)
            if roots == nil, sslMode.hasPrefix("verify") {
                throw Self.problem("sslmode=\(sslMode) checks the server's certificate, and there is no root certificate to check it with: name one with sslrootcert=/path/to/root.crt (or sslrootcert=system), as libpq reads \(standard) otherwise", location)
            }
        }
        switch roots {
        case nil: tls.certificateVerification = .none
        case "system"?:
            tls.trustRoots = .default
            tls.certificateVerification = sslMode == "verify-full" ? .fullVerification : .noHostnameVerification
        case let path?:
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw Self.problem("sslrootcert=\(path) is not a file this process can read", location)
            }
            tls.trustRoots = .file(path)
            tls.certificateVerification = sslMode == "verify-full" ? .fullVerification : .noHostnameVerification
        }
        if let certificate = sslCertificate, let key = sslKey {
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            } catch {
                throw Self.problem("the client certificate sslcert=\(certificate) or its key sslkey=\(key) could not be read as PEM (\(error))", location)
            }
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw Self.problem("its TLS settings could not be loaded (\(error))", location)
        }
        return sslMode == "prefer" || sslMode == "allow" ? .prefer(context) : .require(context)
    }
}

/// Printed without its password (`print(configuration)`, string interpolation, `debugPrint`):
/// a configuration written to a log should not carry the database's credentials.
/// Strata-only: SwiftData has no PostgreSQL store.
extension PostgresConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "PostgresConfiguration(\(name.debugDescription), url: \(maskedURL), namespace: \(namespace.debugDescription), allowsSave: \(allowsSave))"
    }
    public var debugDescription: String { description }
}

/// The session of a migration's transaction, handed to the stores its stages open (compared by
/// identity, as a configuration must be Hashable).
struct MigrationTransaction: Hashable, @unchecked Sendable {
    let session: PostgresSession
    static func == (a: Self, b: Self) -> Bool { a.session === b.session }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(session)) }
}

/// The socket of a TCP connection, made by the store (postgres-nio's own sets no option but
/// `TCP_NODELAY`): keepalive probes, so that a server that went away without closing the
/// connection (its machine stopped, the network between cut) is found and the waiting
/// statement gets a typed error, rather than a wait for ever. Linux's own timing would probe
/// after two hours; Strata's defaults probe after 60 s idle, then every 10 s, and give up
/// after 6 unanswered probes.
struct TCPSettings: Sendable {
    /// The hosts and ports to try, in order (libpq's host list).
    var endpoints: [(host: String, port: Int)]
    /// Each endpoint's password (one per endpoint): the one given, or the password file's line
    /// for its host (nil: none, and the server's authentication says so).
    var passwords: [String?]
    /// Whether each new connection tries the endpoints in a random order (`load_balance_hosts`).
    var shuffled: Bool
    var keepalives: Bool
    var idle: Int
    var interval: Int
    var count: Int
    var userTimeout: Int

    /// Connects a socket with these settings; postgres-nio's configuration on it, with
    /// `template`'s TLS, user, database and options.
    func connect(to endpoint: Int, on eventLoop: any EventLoop, _ template: PostgresConnection.Configuration) throws -> PostgresConnection.Configuration {
        let (host, port) = endpoints[endpoint]
        var bootstrap = ClientBootstrap(group: eventLoop).connectTimeout(template.options.connectTimeout)
        if keepalives {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_keepalive), value: 1)
            for (option, value) in [(Self.keepIdle, idle), (Self.keepInterval, interval), (Self.keepCount, count)] where value > 0 {
                bootstrap = bootstrap.channelOption(ChannelOptions.tcpOption(NIOBSDSocket.Option(rawValue: option)), value: value)
            }
        }
        #if os(Linux)
        if userTimeout > 0 {
            bootstrap = bootstrap.channelOption(ChannelOptions.tcpOption(NIOBSDSocket.Option(rawValue: CInt(TCP_USER_TIMEOUT))), value: userTimeout)
        }
        #endif
        let channel = try bootstrap.connect(host: host, port: port).wait()
        var configuration = PostgresConnection.Configuration(establishedChannel: channel, tls: template.tls, username: template.username,
                                                             password: passwords[endpoint], database: template.database)
        configuration.options = template.options
        // (postgres-nio names the server for TLS, SNI and `verify-full`, from the host it
        // connects to itself; a channel made here needs it said. An IP address is no name.)
        if configuration.options.tlsServerName == nil, (try? SocketAddress(ipAddress: host, port: 0)) == nil {
            configuration.options.tlsServerName = host
        }
        return configuration
    }

    #if os(Linux)
    private static let keepIdle = CInt(TCP_KEEPIDLE), keepInterval = CInt(TCP_KEEPINTVL), keepCount = CInt(TCP_KEEPCNT)
    #else
    private static let keepIdle = CInt(TCP_KEEPALIVE), keepInterval = CInt(TCP_KEEPINTVL), keepCount = CInt(TCP_KEEPCNT)
    #endif
}

/// libpq's password file (https://www.postgresql.org/docs/current/libpq-pgpass.html): lines of
/// `hostname:port:database:username:password`, each of the first four a value or `*`, with
/// `\:` and `\\` for a colon and a backslash; `#` starts a comment line. The first line that
/// matches gives the password.
enum PasswordFile {
    /// For each of `hosts`, the password of the first line of the file at `path` that matches
    /// it (the file read once); nil without a match, or without the file unless it was `named`
    /// (then a missing file is an error). A file that others can read (libpq ignores it, with a
    /// warning) is an error naming it when it holds a match, rather than a password silently
    /// not used.
    static func passwords(in path: String, named: Bool, for hosts: [(host: String, port: Int)], database: String, user: String,
                          location: String) throws -> [String?] {
        guard let data = FileManager.default.contents(atPath: path) else {
            if named {
                throw StrataError(.invalidSchema, "The password file \(path) that the connection to \(location) names (passfile or PGPASSFILE) is not a file this process can read.")
            }
            return hosts.map { _ in nil }
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }.compactMap(split)
        return try hosts.map { host, port in
            let wanted = [host, String(port), database, user]
            guard let (_, password) = lines.first(where: { zip($0.fields, wanted).allSatisfy { $0 == "*" || $0 == $1 } }) else { return nil }
            let mode = (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
            if mode & 0o077 != 0 {
                throw StrataError(.invalidSchema, "The password file \(path) holds the password for \(location), but others can read it (mode \(String(mode, radix: 8))); libpq ignores such a file. Make it private: chmod 600 \(path).")
            }
            return password
        }
    }

    /// The four fields before the password, and the password (the rest of the line), escapes
    /// undone; nil for a line of fewer than five fields.
    static func split(_ line: Substring) -> (fields: [String], password: String)? {
        var fields: [String] = []
        var current = ""
        var escaped = false
        var rest = line.startIndex
        for index in line.indices {
            let c = line[index]
            if escaped { current.append(c); escaped = false; continue }
            if c == "\\" { escaped = true; continue }
            if c == ":" {
                fields.append(current)
                current = ""
                if fields.count == 4 { rest = line.index(after: index); break }
                continue
            }
            current.append(c)
        }
        guard fields.count == 4 else { return nil }
        var password = ""
        escaped = false
        for c in line[rest...] {
            if escaped { password.append(c); escaped = false } else if c == "\\" { escaped = true } else { password.append(c) }
        }
        return (fields, password)
    }
}

/// libpq's `target_session_attrs`: which server of the URL's hosts a connection will take. Each
/// host is tried in order; a server that is not of the kind asked is passed over
/// (`prefer-standby`: a standby, else any).
enum TargetSession: String, Sendable {
    case any
    case readWrite = "read-write"
    case readOnly = "read-only"
    case primary
    case standby
    case preferStandby = "prefer-standby"

    /// Whether a server in recovery (a standby) or not, whose sessions are read-only or not, will do.
    func accepts(inRecovery: Bool, readOnly: Bool) -> Bool {
        switch self {
        case .any: true
        case .readWrite: !readOnly
        case .readOnly: readOnly
        case .primary: !inRecovery
        case .standby, .preferStandby: inRecovery
        }
    }
}
