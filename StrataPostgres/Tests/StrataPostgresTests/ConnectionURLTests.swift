// The URL's query parameters, as libpq reads them: TLS (`sslmode`, `sslrootcert`), the
// connection's name and timeout, the user and database. Before, every parameter but `host` and
// `port` was ignored: `sslmode=require` connected without TLS, and said nothing.
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import Strata
@testable import StrataPostgres

@Suite struct ConnectionURLTests {
    private func configuration(_ url: String) -> PostgresConfiguration {
        PostgresConfiguration(schema: Schema([PGBird.self]), url: URL(string: url)!, namespace: "t_url")
    }

    /// A URL whose query Strata cannot follow is refused before anything connects, with a typed
    /// error that names the parameter.
    @Test func aParameterStrataCannotFollowIsATypedErrorNamingIt() throws {
        let base = "postgresql://strata:strata@127.0.0.1:5432/strata?"
        let refused: [(query: String, named: String)] = [
            ("sslmode=maybe", "sslmode=maybe"),
            ("sslmode=require&colour=blue", "colour"),
            ("keepalives_idle=soon", "keepalives_idle=soon"),
            ("tcp_user_timeout=-1", "tcp_user_timeout=-1"),
            ("sslcrl=/tmp/crl.pem", "sslcrl"),
            ("load_balance_hosts=sometimes", "load_balance_hosts=sometimes"),
            ("service=app", "service"),
            ("port=http", "port=http"),
            ("connect_timeout=soon", "connect_timeout=soon"),
            ("client_encoding=LATIN1", "client_encoding=LATIN1"),
            ("sslcert=/tmp/client.crt", "sslcert and sslkey"),
            ("sslmode=verify-full&sslrootcert=/nonexistent/root.crt", "sslrootcert=/nonexistent/root.crt"),
        ]
        for (query, named) in refused {
            let error = #expect(throws: StrataError.self, "\(query)") { try configuration(base + query).validate() }
            #expect(error?.code == .invalidSchema, "\(query)")
            #expect(error?.message.contains(named) == true, "\(query): \(error?.message ?? "")")
            // The password is not in the message.
            #expect(error?.message.contains("strata:strata") == false)
        }
        // A password in the query is not in the message either.
        let hidden = #expect(throws: StrataError.self) {
            try configuration("postgresql://strata@127.0.0.1:5432/strata?password=hunter2&sslmode=bogus").validate()
        }
        #expect(hidden?.message.contains("hunter2") == false && hidden?.message.contains("password=***") == true, "\(hidden?.message ?? "")")
        let notPostgres = #expect(throws: StrataError.self) { try configuration("mysql://root:hunter2@db/app").validate() }
        #expect(notPostgres?.message.contains("hunter2") == false && notPostgres?.message.contains("not a PostgreSQL URL") == true)
        // Nor is it when the configuration is printed.
        let printed = configuration("postgresql://strata:hunter2@127.0.0.1:5432/strata?password=hunter2")
        for text in [String(describing: printed), "\(printed)", String(reflecting: printed)] {
            #expect(!text.contains("hunter2") && text.contains("127.0.0.1:5432/strata"), "\(text)")
        }
        // A container on such a URL is refused the same way.
        let error = #expect(throws: StrataError.self) {
            try ModelContainer(for: PGBird.self, configurations: configuration(base + "sslmode=requir"))
        }
        #expect(error?.message.contains("sslmode=requir") == true)
    }

    /// What the URL asks for reaches postgres-nio's configuration, with libpq's defaults.
    @Test func theParametersReachTheConnection() throws {
        let tcp = "postgresql://strata:strata@db.example:6543/app"
        var c = try configuration(tcp).connectionConfiguration()
        // libpq's default, `prefer`: TLS when the server takes it, not required.
        #expect(c.tls.isAllowed && !c.tls.isEnforced)
        #expect(c.host == "db.example" && c.port == 6543 && c.username == "strata" && c.database == "app")
        c = try configuration(tcp + "?sslmode=disable").connectionConfiguration()
        #expect(!c.tls.isAllowed)
        c = try configuration(tcp + "?sslmode=require").connectionConfiguration()
        #expect(c.tls.isEnforced)
        c = try configuration(tcp + "?sslmode=verify-full&sslrootcert=system").connectionConfiguration()
        #expect(c.tls.isEnforced && c.tls.sslContext != nil)
        c = try configuration(tcp + "?connect_timeout=7&application_name=reports&options=-c%20statement_timeout%3D5000").connectionConfiguration()
        #expect(c.options.connectTimeout == .seconds(7))
        #expect(c.options.additionalStartupParameters.contains { $0 == ("application_name", "reports") })
        #expect(c.options.additionalStartupParameters.contains { $0 == ("options", "-c statement_timeout=5000") })
        c = try configuration(tcp + "?user=ada&password=secret&dbname=other&host=db2.example&port=5433").connectionConfiguration()
        #expect(c.username == "ada" && c.password == "secret" && c.database == "other")
        #expect(c.host == "db2.example" && c.port == 5433)
        // An IPv6 address, without its brackets; a socket's folder percent-encoded as the host.
        c = try configuration("postgresql://strata@[::1]:5433/app").connectionConfiguration()
        #expect(c.host == "::1" && c.port == 5433)
        c = try configuration("postgresql://strata@%2Fvar%2Frun%2Fpostgresql/app").connectionConfiguration()
        #expect(c.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432" && c.database == "app")
        // Several hosts (libpq's list), with one port for all or one each; a list of ports
        // that fits neither is refused.
        var recipe = try configuration("postgresql://strata@h1,h2:5433/app").connectionRecipe()
        #expect(recipe.tcp?.endpoints.map { "\($0.host):\($0.port)" } == ["h1:5433", "h2:5433"] && recipe.target == .any)
        recipe = try configuration("postgresql://strata@/app?host=h1,[::1]&port=5433,5434&target_session_attrs=read-write").connectionRecipe()
        #expect(recipe.tcp?.endpoints.map { "\($0.host):\($0.port)" } == ["h1:5433", "::1:5434"] && recipe.target == .readWrite)
        let ports = #expect(throws: StrataError.self) { try configuration("postgresql://strata@/app?host=h1,h2,h3&port=1,2").validate() }
        #expect(ports?.message.contains("3 hosts and 2 ports") == true)
        let target = #expect(throws: StrataError.self) { try configuration("postgresql://strata@h/app?target_session_attrs=writable").validate() }
        #expect(target?.message.contains("target_session_attrs=writable") == true)
        // A Unix socket takes no TLS, whatever sslmode says (as libpq).
        c = try configuration("postgresql://strata@/app?host=/var/run/postgresql&sslmode=require").connectionConfiguration()
        #expect(!c.tls.isAllowed && c.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432")
    }

    /// libpq's environment variables fill in what the URL leaves out, and only that: the URL's
    /// query, then its own parts, then the environment, then Strata's defaults.
    @Test func theEnvironmentFillsInWhatTheURLLeavesOut() throws {
        let environment = ["PGHOST": "env.example", "PGPORT": "6000", "PGUSER": "envuser", "PGPASSWORD": "envsecret",
                           "PGDATABASE": "envdb", "PGSSLMODE": "disable", "PGAPPNAME": "from-env", "PGCONNECT_TIMEOUT": "9"]
        var c = try configuration("postgresql:///").connectionRecipe(environment: environment).configuration
        #expect(c.host == "env.example" && c.port == 6000 && c.username == "envuser" && c.password == "envsecret" && c.database == "envdb")
        #expect(!c.tls.isAllowed && c.options.connectTimeout == .seconds(9))
        #expect(c.options.additionalStartupParameters.contains { $0 == ("application_name", "from-env") })
        c = try configuration("postgresql://ada:pw@db.example:5433/app?sslmode=require&application_name=url")
            .connectionRecipe(environment: environment).configuration
        #expect(c.host == "db.example" && c.port == 5433 && c.username == "ada" && c.password == "pw" && c.database == "app")
        #expect(c.tls.isEnforced && c.options.connectTimeout == .seconds(9))
        #expect(c.options.additionalStartupParameters.filter { $0.0 == "application_name" }.map(\.1) == ["url"])
        // A Unix socket's folder from the environment.
        c = try configuration("postgresql:///app").connectionRecipe(environment: ["PGHOST": "/var/run/postgresql"]).configuration
        #expect(c.unixSocketPath == "/var/run/postgresql/.s.PGSQL.5432" && c.database == "app")
        // A value Strata cannot follow is named with its variable.
        let error = #expect(throws: StrataError.self) {
            try configuration("postgresql://h/d").connectionRecipe(environment: ["PGSSLMODE": "sometimes"])
        }
        #expect(error?.code == .invalidSchema && error?.message.contains("PGSSLMODE") == true, "\(error?.message ?? "")")
        #expect(try configuration("postgresql://h/d").connectionRecipe(environment: [:]).configuration.username == "postgres")
    }

    /// Whether each of the server's connections named `application` is encrypted, from the
    /// server's own view (`pg_stat_ssl`).
    private func encryption(of application: String, _ fixture: PGFixture) throws -> [Bool] {
        try fixture.sql("""
            SELECT s.ssl::text FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = $1
            """, [application]).map { $0.first.flatMap { $0 } == "true" }
    }

    private func url(_ base: URL, host: String? = nil, _ query: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        if let host { components.host = host }
        components.percentEncodedQuery = query
        return components.url!
    }

    /// `sslmode=require` and `verify-full` connect over TLS, `disable` without it: the store's
    /// connections, seen by the server, are encrypted or not as asked, and a save and a fetch
    /// work through them. (The test server takes TLS: `scripts/postgres-server.sh` gives it a
    /// certificate for `localhost` signed by `DIR/ca.crt`.)
    @Test func theStoreConnectsOverTLSWhenAskedAndOnlyThen() throws {
        let fixture = try PGFixture([PGBird.self])
        let ca = try TestServer.directory() + "/ca.crt"
        #expect(FileManager.default.fileExists(atPath: ca), "the test server has no TLS: is openssl installed?")
        let cases: [(query: String, host: String?, encrypted: Bool)] = [
            ("sslmode=require", nil, true),
            ("sslmode=disable", nil, false),
            ("sslmode=verify-full&sslrootcert=\(ca)", "localhost", true),
            ("sslmode=verify-ca&sslrootcert=\(ca)", nil, true),
        ]
        for (i, (query, host, encrypted)) in cases.enumerated() {
            let application = "strata_tls_\(fixture.namespace)_\(i)"
            let configuration = PostgresConfiguration(schema: Schema([PGBird.self]), url: url(fixture.url, host: host, query + "&application_name=\(application)"),
                                                      namespace: fixture.namespace)
            let container = try ModelContainer(for: PGBird.self, configurations: configuration)
            let context = ModelContext(container)
            context.insert(PGBird("b\(i)", "wren"))
            try context.save()
            let seen = try encryption(of: application, fixture)
            #expect(!seen.isEmpty, "\(query): no connection named \(application)")
            #expect(seen.allSatisfy { $0 == encrypted }, "\(query): \(seen)")
            let fresh = ModelContext(container)
            #expect(try fresh.fetchCount(FetchDescriptor<PGBird>()) == i + 1, "\(query)")
        }
    }

    /// `options` and `application_name` reach the server as startup settings of each connection.
    @Test func startupSettingsReachTheServer() throws {
        let fixture = try PGFixture([PGBird.self])
        let configuration = PostgresConfiguration(schema: Schema([PGBird.self]),
                                                  url: url(fixture.url, "options=-c%20statement_timeout%3D1234&application_name=strata_options_test"),
                                                  namespace: fixture.namespace)
        let session = PostgresSession(configuration: try configuration.connectionConfiguration(), location: "test")
        let rows = try session.withConnection { try $0.query("SELECT current_setting('statement_timeout'), current_setting('application_name')", []) }
        #expect(rows == [["1234ms", "strata_options_test"]])
    }

    /// `verify-full` checks the name the client connects to against the certificate: the test
    /// server's names `localhost` only, so `127.0.0.1` is refused, with a typed error that says
    /// why, and nothing connects without TLS instead. An authority that did not sign the
    /// server's certificate is refused too.
    @Test func aCertificateThatDoesNotMatchIsRefused() throws {
        let fixture = try PGFixture([PGBird.self])
        let dir = try TestServer.directory()
        let wrongName = PostgresConfiguration(schema: Schema([PGBird.self]),
                                              url: url(fixture.url, host: "127.0.0.1", "sslmode=verify-full&sslrootcert=\(dir)/ca.crt"),
                                              namespace: fixture.namespace)
        var error = #expect(throws: StrataError.self) { try ModelContainer(for: PGBird.self, configurations: wrongName) }
        #expect(error?.code == .storeFailure)
        #expect(error?.message.contains("could not connect") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("TLS handshake failed") == true, "\(error?.message ?? "")")
        // Each refused handshake closes the socket the store made for it (postgres-nio closes
        // it when the start fails; the store closes it after any other failure): 100 more
        // attempts leave the process's open files about as they were (other tests open and
        // close theirs meanwhile, hence the slack).
        let openFiles = { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        let before = openFiles()
        for _ in 0..<100 { _ = try? ModelContainer(for: PGBird.self, configurations: wrongName) }
        #expect(openFiles() - before < 50, "\(before) open files before, \(openFiles()) after")

        // Another authority: a certificate of its own making, which signed nothing the server has.
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("strata-other-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: other) }
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = ["openssl", "req", "-new", "-x509", "-days", "1", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                             "-subj", "/CN=Another CA", "-keyout", other.path + "/ca.key", "-out", other.path + "/ca.crt"]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0, "openssl could not make a certificate")
        let wrongAuthority = PostgresConfiguration(schema: Schema([PGBird.self]),
                                                   url: url(fixture.url, host: "localhost", "sslmode=verify-ca&sslrootcert=\(other.path)/ca.crt"),
                                                   namespace: fixture.namespace)
        error = #expect(throws: StrataError.self) { try ModelContainer(for: PGBird.self, configurations: wrongAuthority) }
        #expect(error?.code == .storeFailure)
        #expect(error?.message.contains("TLS handshake failed") == true, "\(error?.message ?? "")")
        // Neither made the namespace's tables.
        #expect(try fixture.sql("SELECT count(*)::text FROM pg_namespace WHERE nspname = $1", [fixture.namespace]) == [["0"]])
    }

    /// The kernel's view of the store's sockets (`ss`), found by the client ports the server
    /// sees for connections named `application`: each one's timer (`keepalive,36sec,0`), or ""
    /// for a socket without one.
    private func socketTimers(of application: String, _ fixture: PGFixture) throws -> [String] {
        let ports = try fixture.sql("SELECT client_port::text FROM pg_stat_activity WHERE application_name = $1", [application])
            .compactMap { $0.first.flatMap { $0 } }
        return try ports.map { port in
            let ss = Process()
            ss.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            ss.arguments = ["ss", "-tnoH", "state", "established", "( sport = :\(port) )"]
            let out = Pipe()
            ss.standardOutput = out
            try ss.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            ss.waitUntilExit()
            guard let range = text.range(of: #"timer:\(([^)]*)\)"#, options: .regularExpression) else { return "" }
            return String(text[range].dropFirst("timer:(".count).dropLast())
        }
    }

    /// The store's TCP sockets probe an idle server (keepalive), with the URL's timing or
    /// Strata's (60 s idle), or not at all with `keepalives=0`: a server whose machine went
    /// away without closing the connection is found, and the statement waiting on it ends
    /// with a typed error, rather than waiting for ever (postgres-nio sets no keepalive).
    @Test func theStoresSocketsProbeAnIdleServerAsTheURLSays() throws {
        let fixture = try PGFixture([PGBird.self])
        let cases: [(query: String, probes: Bool, atMost: Int)] = [
            ("keepalives_idle=37&keepalives_interval=7&keepalives_count=3&tcp_user_timeout=30000", true, 37),
            ("", true, 60),
            ("keepalives=0", false, 0),
        ]
        for (i, (query, probes, atMost)) in cases.enumerated() {
            let application = "strata_ka_\(fixture.namespace)_\(i)"
            let configuration = PostgresConfiguration(schema: Schema([PGBird.self]),
                                                      url: url(fixture.url, (query.isEmpty ? "" : query + "&") + "application_name=\(application)"),
                                                      namespace: fixture.namespace)
            let container = try ModelContainer(for: PGBird.self, configurations: configuration)
            _ = try ModelContext(container).fetchCount(FetchDescriptor<PGBird>())
            let timers = try socketTimers(of: application, fixture)
            #expect(!timers.isEmpty, "\(query): no socket named \(application)")
            for timer in timers {
                if probes {
                    // "keepalive,36sec,0": the time left before the next probe.
                    let parts = timer.split(separator: ",")
                    let seconds = parts.count > 1 ? Double(parts[1].prefix { $0.isNumber || $0 == "." }) : nil
                    #expect(parts.first == "keepalive" && (seconds ?? .infinity) <= Double(atMost), "\(query): \(timer)")
                } else {
                    #expect(!timer.hasPrefix("keepalive"), "\(query): \(timer)")
                }
            }
        }
    }

    /// A password file, as libpq reads it (`passfile`, PGPASSFILE, ~/.pgpass): the first line
    /// whose host, port, database and user match (or are `*`) gives the password when the URL
    /// has none; a file others can read is refused by name, not silently passed over.
    @Test func thePasswordComesFromThePasswordFileWhenTheURLHasNone() throws {
        let fixture = try PGFixture([PGBird.self])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pgpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = fixture.url.port ?? 5432
        let file = folder.appendingPathComponent("pgpass").path
        // Escapes and a password holding a colon, read back.
        let parsed = PasswordFile.split("h\\:x:5432:d\\\\b:u:pa\\:ss:word")
        #expect(parsed?.fields == ["h:x", "5432", "d\\b", "u"] && parsed?.password == "pa:ss:word")
        try """
            # Strata's test server
            otherhost:*:*:*:wrong
            127.0.0.1:\(port):elsewhere:strata:wrong
            *:\(port):strata:strata:strata
            """.write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        func configuration(_ query: String) -> PostgresConfiguration {
            PostgresConfiguration(schema: Schema([PGBird.self]),
                                  url: URL(string: "postgresql://strata@127.0.0.1:\(port)/strata?\(query)")!, namespace: fixture.namespace)
        }
        // The URL has no password: the file's (the server asks for one on TCP).
        let container = try ModelContainer(for: PGBird.self, configurations: configuration("passfile=\(file)"))
        let context = ModelContext(container)
        context.insert(PGBird("p1", "wren"))
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGBird>()) == 1)
        // From PGPASSFILE, the same.
        #expect(try configuration("").connectionRecipe(environment: ["PGPASSFILE": file]).configuration.password == "strata")
        // A password in the URL wins over the file.
        #expect(try configuration("passfile=\(file)&password=given").connectionConfiguration().password == "given")
        // A file others can read is refused, naming the fix.
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
        var error = #expect(throws: StrataError.self) { try configuration("passfile=\(file)").validate() }
        #expect(error?.code == .invalidSchema && error?.message.contains("chmod 600") == true, "\(error?.message ?? "")")
        // A named file that is not there.
        error = #expect(throws: StrataError.self) { try configuration("passfile=\(folder.path)/none").validate() }
        #expect(error?.message.contains("\(folder.path)/none") == true)
        // No line matches: no password, and the server refuses the connection.
        try "otherhost:*:*:*:wrong\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        #expect(try configuration("passfile=\(file)").connectionConfiguration().password == nil)
        error = #expect(throws: StrataError.self) { try ModelContainer(for: PGBird.self, configurations: configuration("passfile=\(file)")) }
        #expect(error?.code == .storeFailure)
    }

    /// With several hosts and no password given, each host's password is its own line of the
    /// password file, as libpq looks it up for each host it tries (before 2026-12-04, the
    /// first host's was sent to every host).
    @Test func eachHostOfAListGetsItsOwnPasswordFileLine() throws {
        let fixture = try PGFixture([PGBird.self])
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pgpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let port = fixture.url.port ?? 5432, dead = unusedPort()
        let file = folder.appendingPathComponent("pgpass").path
        try "127.0.0.1:\(dead):*:strata:wrong\n127.0.0.1:\(port):*:strata:strata\n".write(toFile: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
        let url = URL(string: "postgresql://strata@/strata?host=127.0.0.1,127.0.0.1&port=\(dead),\(port)&passfile=\(file)")!
        let configuration = PostgresConfiguration(schema: Schema([PGBird.self]), url: url, namespace: fixture.namespace)
        #expect(try configuration.connectionRecipe().tcp?.passwords == ["wrong", "strata"])
        // The first host does not answer; the second takes its own password.
        let container = try ModelContainer(for: PGBird.self, configurations: configuration)
        let context = ModelContext(container)
        context.insert(PGBird("h1", "wren"))
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGBird>()) == 1)
        // A password given is every host's.
        let given = URL(string: "postgresql://strata:strata@/strata?host=127.0.0.1,127.0.0.1&port=\(dead),\(port)&passfile=\(file)")!
        #expect(try PostgresConfiguration(url: given).connectionRecipe().tcp?.passwords == ["strata", "strata"])
    }

    /// `load_balance_hosts=random` (libpq 16): each new connection tries the hosts in an order
    /// of its own, so connections spread over a primary and its standby; `disable` (the
    /// default) keeps the list's order, and `target_session_attrs` still picks the kind.
    @Test func randomLoadBalancingSpreadsConnectionsOverTheHosts() throws {
        let primary = try TestServer.url(), standby = try TestServer.standbyURL()
        let p = primary.port ?? 5432, s = standby.port ?? 5432
        func url(_ query: String) -> URL {
            URL(string: "postgresql://strata:strata@/strata?host=127.0.0.1,127.0.0.1&port=\(p),\(s)&sslmode=disable\(query)")!
        }
        func onStandby(_ query: String) throws -> Bool {
            let recipe = try PostgresConfiguration(url: url(query)).connectionRecipe()
            let session = PostgresSession(configuration: recipe.configuration, tcp: recipe.tcp, target: recipe.target, location: "test")
            return try session.withConnection { try $0.query("SELECT pg_is_in_recovery()::text") } == [["true"]]
        }
        // 40 connections: all on one server by chance once in 2^39 runs.
        var standbys = 0
        for _ in 0..<40 where try onStandby("&load_balance_hosts=random") { standbys += 1 }
        #expect(standbys > 0 && standbys < 40, "\(standbys) of 40 connections on the standby")
        for _ in 0..<5 {
            #expect(try onStandby("") == false)
            #expect(try onStandby("&load_balance_hosts=disable") == false)
            #expect(try onStandby("&load_balance_hosts=random&target_session_attrs=read-write") == false)
            #expect(try onStandby("&load_balance_hosts=random&target_session_attrs=standby") == true)
        }
        #expect(try PostgresConfiguration(url: url("")).connectionRecipe(environment: ["PGLOADBALANCEHOSTS": "random"]).tcp?.shuffled == true)
        let error = #expect(throws: StrataError.self) { try PostgresConfiguration(url: url("&load_balance_hosts=yes")).validate() }
        #expect(error?.code == .invalidSchema && error?.message.contains("load_balance_hosts=yes") == true, "\(error?.message ?? "")")
    }

    /// libpq's host list: each host is tried in order, one that does not answer is passed
    /// over, and `target_session_attrs` picks the kind of server (here a primary and its hot
    /// standby): `read-write` finds the primary behind the standby, `standby` the standby
    /// behind the primary, and a list without the kind asked is a typed error naming each host.
    @Test func theFirstHostOfTheKindAskedIsTaken() throws {
        let fixture = try PGFixture([PGBird.self])
        let primary = fixture.url, standby = try TestServer.standbyURL()
        let p = primary.port ?? 5432, s = standby.port ?? 5432
        let dead = unusedPort()
        func session(_ ports: [Int], _ target: String) throws -> PostgresSession {
            let url = URL(string: "postgresql://strata:strata@/strata?host=\(ports.map { _ in "127.0.0.1" }.joined(separator: ","))&port=\(ports.map(String.init).joined(separator: ","))&sslmode=disable&target_session_attrs=\(target)")!
            let recipe = try PostgresConfiguration(schema: Schema([PGBird.self]), url: url, namespace: fixture.namespace).connectionRecipe()
            return PostgresSession(configuration: recipe.configuration, tcp: recipe.tcp, target: recipe.target, location: "test")
        }
        func inRecovery(_ session: PostgresSession) throws -> Bool {
            try session.withConnection { try $0.query("SELECT pg_is_in_recovery()::text") } == [["true"]]
        }
        #expect(try inRecovery(session([dead, p], "any")) == false)
        #expect(try inRecovery(session([s, p], "read-write")) == false)
        #expect(try inRecovery(session([s, p], "primary")) == false)
        #expect(try inRecovery(session([p, s], "standby")) == true)
        #expect(try inRecovery(session([p, s], "read-only")) == true)
        #expect(try inRecovery(session([p, s], "prefer-standby")) == true)
        #expect(try inRecovery(session([dead, p], "prefer-standby")) == false)
        #expect(try inRecovery(session([s, p], "any")) == true)
        let error = #expect(throws: StrataError.self) { try session([dead, s], "read-write").withConnection { _ in } }
        #expect(error?.code == .storeFailure)
        #expect(error?.message.contains("127.0.0.1:\(dead)") == true && error?.message.contains("127.0.0.1:\(s): a standby") == true,
                "\(error?.message ?? "")")
        // A container on the list saves to the primary it found behind the standby.
        let url = URL(string: "postgresql://strata:strata@/strata?host=127.0.0.1,127.0.0.1&port=\(s),\(p)&target_session_attrs=read-write")!
        let container = try ModelContainer(for: PGBird.self, configurations: PostgresConfiguration(schema: Schema([PGBird.self]), url: url, namespace: fixture.namespace))
        let context = ModelContext(container)
        context.insert(PGBird("h1", "heron"))
        try context.save()
        #expect(try fixture.sql("SELECT count(*)::text FROM \(SQL.identifier(fixture.namespace)).\"PGBird\"") == [["1"]])
    }
}

/// A port nothing listens on: the first free one the system gives, closed again.
func unusedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}
