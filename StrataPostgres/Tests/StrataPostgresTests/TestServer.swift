import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The PostgreSQL server of this test process: a real one, started by the tests themselves
/// (through `scripts/postgres-server.sh`) unless CI started one.
///
/// - `STRATA_POSTGRES_URL` set (`.ci/run` sets it): that server is used. `STRATA_POSTGRES_DIR`
///   (set beside it) names the folder it was started in, which `standbyURL()` needs.
/// - Otherwise the first call starts a throwaway server in a new temporary folder, once per
///   process, and stops it (and removes the folder) when the process exits. If the process dies
///   without exiting (a crash), the script's watcher stops the server anyway. Set
///   `STRATA_POSTGRES_KEEP=1` to keep the folder (its `server.log`) after the run.
///
/// Tests run in parallel on one database: each takes a namespace of its own
/// (`TestServer.namespace()`), a PostgreSQL schema no other test sees.
enum TestServer {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The URL of the server (`postgresql://strata:strata@127.0.0.1:PORT/strata`).
    static func url() throws -> URL {
        if let url = try urlFromEnvironment() { return url }
        return try ownPrimary().url
    }

    /// The URL of a hot standby of `url()`'s server (read-only, streaming its WAL), made once
    /// per process. Rows reach it shortly after their commit on the primary, not at once.
    static func standbyURL() throws -> URL {
        try standby().url
    }

    /// A primary and its hot standby of their own (not the shared servers), for a test that
    /// promotes the standby and stops the primary: a failover. Stopped and removed at exit, as
    /// the shared ones are.
    static func newPair() throws -> (primary: URL, primaryDir: String, standby: URL, standbyDir: String) {
        let primaryDir = try makeFolder("pair-primary")
        let primary = try runScript(["start", primaryDir, "--stop-when-gone", String(getpid())], folder: primaryDir)
        let standbyDir = try makeFolder("pair-standby")
        let standby = try runScript(["standby", standbyDir, primaryDir, "--stop-when-gone", String(getpid())], folder: standbyDir)
        return (primary, primaryDir, standby, standbyDir)
    }

    /// Promotes the standby of `dir` to a primary (`postgres-server.sh promote`).
    @discardableResult
    static func promote(_ dir: String) throws -> URL {
        try runScript(["promote", dir], folder: dir)
    }

    /// Stops the server of `dir` (a fast shutdown: its sessions are ended).
    static func stop(_ dir: String) throws {
        let (status, _, errors) = spawn(["/bin/bash", scriptPath, "stop", dir], scratch: dir)
        guard status == 0 else { throw Failure(description: "stopping the server in \(dir) failed: \(errors)") }
    }

    /// The folder of `url()`'s server (its data, its log `server.log`, and its Unix socket).
    static func directory() throws -> String {
        if try urlFromEnvironment() != nil {
            guard let dir = environment("STRATA_POSTGRES_DIR") else {
                throw Failure(description: "STRATA_POSTGRES_URL is set but STRATA_POSTGRES_DIR is not: set it to the folder the server was started in (`scripts/postgres-server.sh start DIR`)")
            }
            return dir
        }
        return try ownPrimary().dir
    }

    /// The server's URL through its Unix socket, as libpq spells it:
    /// `postgresql://strata:strata@localhost:PORT/strata?host=DIR` (the socket is
    /// `DIR/.s.PGSQL.PORT`; the `host` parameter wins over the authority's host).
    static func socketURL() throws -> URL {
        let tcp = try url()
        var components = URLComponents(url: tcp, resolvingAgainstBaseURL: false)
        components?.host = "localhost"
        components?.queryItems = [URLQueryItem(name: "host", value: try directory())]
        guard let socket = components?.url else {
            throw Failure(description: "cannot make a socket URL from \(tcp)")
        }
        return socket
    }

    /// A PostgreSQL schema name of its own for one test: lowercase letters, digits and `_`,
    /// starting with `t_`, at most 63 bytes, unique per call (a counter) and per process (a
    /// random suffix), so that tests and processes sharing one database never collide.
    static func namespace(_ name: String = #function) -> String {
        var base = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                base.unicodeScalars.append(scalar)
            } else if !base.isEmpty, base.last != "_" {
                base.append("_")
            }
            if base.count >= 32 { break }
        }
        while base.hasSuffix("_") { base.removeLast() }
        let number = counter.add(1, ordering: .relaxed).newValue
        let suffix = String(UInt32.random(in: 0 ... UInt32.max), radix: 36)
        return base.isEmpty ? "t_\(number)_\(suffix)" : "t_\(base)_\(number)_\(suffix)"
    }

    // MARK: - Once per process

    private struct Server: Sendable {
        let url: URL
        let dir: String
    }

    private struct State: Sendable {
        var primary: Result<Server, Failure>?
        var standby: Result<Server, Failure>?
    }

    /// Held while a server starts, so concurrent tests wait for the one start; a failure is
    /// kept, so that every test reports it at once instead of starting again.
    private static let state = Mutex(State())
    /// The folders to stop at exit, standby first (a separate, briefly held lock: the exit
    /// handler never waits for a start).
    private static let toStop = Mutex<[String]>([])
    private static let counter = Atomic<Int>(0)

    private static func ownPrimary() throws -> Server {
        try state.withLock { state in
            if state.primary == nil {
                state.primary = Result { () throws(Failure) in
                    let dir = try makeFolder("primary")
                    let url = try runScript(["start", dir, "--stop-when-gone", String(getpid())], folder: dir)
                    return Server(url: url, dir: dir)
                }
            }
            guard let primary = state.primary else { preconditionFailure("set above") }
            return try primary.get()
        }
    }

    private static func standby() throws -> Server {
        let primaryDir = try directory()
        return try state.withLock { state in
            if state.standby == nil {
                state.standby = Result { () throws(Failure) in
                    let dir = try makeFolder("standby")
                    let url = try runScript(["standby", dir, primaryDir, "--stop-when-gone", String(getpid())], folder: dir)
                    return Server(url: url, dir: dir)
                }
            }
            guard let standby = state.standby else { preconditionFailure("set above") }
            return try standby.get()
        }
    }

    private static func urlFromEnvironment() throws -> URL? {
        guard let text = environment("STRATA_POSTGRES_URL") else { return nil }
        guard let url = URL(string: text), url.scheme?.hasPrefix("postgres") == true else {
            throw Failure(description: "STRATA_POSTGRES_URL is not a postgresql:// URL: \(text)")
        }
        return url
    }

    private static func environment(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }

    /// `scripts/postgres-server.sh` of this repository (STRATA_POSTGRES_SCRIPT overrides).
    private static var scriptPath: String {
        if let path = environment("STRATA_POSTGRES_SCRIPT") { return path }
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()          // StrataPostgresTests
            .appendingPathComponent("../../../scripts/postgres-server.sh")
            .standardizedFileURL.path
    }

    /// A new folder directly under /tmp (not $TMPDIR: the server's user, `postgres` when the
    /// tests run as root, must reach it, and the socket's path must stay short), registered
    /// for the exit handler at once.
    private static func makeFolder(_ role: String) throws(Failure) -> String {
        let dir = "/tmp/strata-pg-\(role)-\(getpid())-\(String(UInt32.random(in: 0 ... UInt32.max), radix: 36))"
        do {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false)
        } catch {
            throw Failure(description: "cannot create \(dir) for a PostgreSQL server: \(error)")
        }
        registerForExit(dir)
        return dir
    }

    private static func registerForExit(_ dir: String) {
        let first = toStop.withLock { folders in
            folders.insert(dir, at: 0)  // the standby (made later) stops before its primary
            return folders.count == 1
        }
        if first {
            atexit {
                TestServer.stopAll()
            }
        }
    }

    private static func stopAll() {
        let folders = toStop.withLock { folders in
            defer { folders = [] }
            return folders
        }
        let keep = environment("STRATA_POSTGRES_KEEP") != nil
        for dir in folders {
            let (status, _, errors) = spawn(["/bin/bash", scriptPath, "stop", dir], scratch: dir)
            if status != 0 {
                FileHandle.standardError.write(Data("TestServer: stopping the server in \(dir) failed: \(errors)\n".utf8))
            } else if keep {
                FileHandle.standardError.write(Data("TestServer: kept \(dir) (STRATA_POSTGRES_KEEP)\n".utf8))
            } else {
                try? FileManager.default.removeItem(atPath: dir)
            }
        }
    }

    /// Runs the script; its one line of output is the URL.
    private static func runScript(_ arguments: [String], folder: String) throws(Failure) -> URL {
        let script = scriptPath
        guard FileManager.default.fileExists(atPath: script) else {
            throw Failure(description: "no \(script) (set STRATA_POSTGRES_SCRIPT, or STRATA_POSTGRES_URL for a running server)")
        }
        let (status, output, errors) = spawn(["/bin/bash", script] + arguments, scratch: folder)
        let line = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard status == 0, let url = URL(string: line), url.scheme == "postgresql" else {
            throw Failure(description: """
                `postgres-server.sh \(arguments.joined(separator: " "))` failed (status \(status)); \
                server log: \(folder)/server.log
                \(errors)\(line.isEmpty ? "" : "\noutput: \(line)")
                """)
        }
        return url
    }

    /// Runs a program and waits for it. Its standard output and error go to files (in
    /// `scratch`, the server's folder, removed after), not pipes, so that a server it leaves
    /// running can never hold a pipe open; stdin is /dev/null. posix_spawn rather than
    /// Foundation's Process: it also serves the exit handler.
    private static func spawn(_ arguments: [String], scratch: String) -> (status: Int32, output: String, errors: String) {
        let stem = "\(scratch)/.script-\(getpid())-\(UInt32.random(in: 0 ... UInt32.max))"
        let outPath = stem + ".out", errPath = stem + ".err"
        defer {
            unlink(outPath)
            unlink(errPath)
        }
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard spawned == 0 else {
            return (-1, "", "cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return (-1, "", "waitpid failed: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED / WEXITSTATUS, spelled out (they are macros).
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (exitStatus, output, errors)
    }
}

/// Calls `body` until it returns true, or gives up after `patience` seconds (generous: the wait
/// is for something that happens in milliseconds, on a machine that may be very busy). It asks
/// again every 20 ms: a poll for the event, not a wait for a fixed time.
func eventually(patience: TimeInterval = 120, _ body: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(patience)
    while Date() < deadline {
        if try body() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return false
}
