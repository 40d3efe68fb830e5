import Foundation
import Strata
import StrataEngine
import StrataRecords

/// One `strata` command: its help text, its arguments, and what it does.
protocol Command {
    /// The word after `strata`.
    static var name: String { get }
    /// One line for `strata --help`.
    static var summary: String { get }
    /// The full text of `strata NAME --help`, starting with the usage line.
    static var help: String { get }
    /// Parses the arguments after the command's name; throws `UsageError` on a bad one.
    init(arguments: inout Arguments) throws
    /// Runs the command; returns the exit status.
    func run() throws -> ExitStatus
}

/// The tool's exit statuses, as Unix tools use them.
enum ExitStatus: Int32 {
    /// Done; for `verify`, the store is clean.
    case success = 0
    /// The work failed, or (for `verify`) the store is damaged.
    case failure = 1
    /// The command line is wrong.
    case usage = 2
}

/// A mistake on the command line: reported with a pointer to `--help`, exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A failure the tool reports in its own words, exit status 1.
struct ToolError: Error {
    let message: String
    /// The store (or file) concerned, for the JSON form of the error.
    let path: String?
    init(_ message: String, path: String? = nil) {
        self.message = message
        self.path = path
    }
}

/// The arguments of one command, taken out as the command asks for them; whatever is left
/// at the end is a usage error. Options are `--name VALUE` or `--name=VALUE`; `--` ends them.
struct Arguments {
    private var options: [String]
    private var positionals: [String] = []

    /// Commands take their options first, then their positional arguments (so that an
    /// option's value is never mistaken for one).
    init(_ arguments: [String]) {
        if let end = arguments.firstIndex(of: "--") {
            options = Array(arguments[..<end])
            positionals = Array(arguments[(end + 1)...])
        } else {
            options = arguments
        }
    }

    /// True if the flag is present.
    mutating func flag(_ name: String) -> Bool {
        guard let i = options.firstIndex(of: name) else { return false }
        options.remove(at: i)
        return true
    }

    /// Every value of a repeatable option, in order.
    mutating func values(_ name: String) throws -> [String] {
        var found: [String] = []
        var i = 0
        while i < options.count {
            if options[i] == name {
                guard i + 1 < options.count else { throw UsageError("\(name) needs a value") }
                found.append(options[i + 1])
                options.removeSubrange(i...(i + 1))
            } else if options[i].hasPrefix(name + "=") {
                found.append(String(options[i].dropFirst(name.count + 1)))
                options.remove(at: i)
            } else {
                i += 1
            }
        }
        return found
    }

    /// The value of an option given at most once.
    mutating func value(_ name: String) throws -> String? {
        let all = try values(name)
        guard all.count <= 1 else { throw UsageError("\(name) is given more than once") }
        return all.first
    }

    /// A whole-number option within `range`.
    mutating func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = try value(name) else { return nil }
        guard let n = Int(text.replacingOccurrences(of: "_", with: "")), range.contains(n) else {
            throw UsageError("\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
        }
        return n
    }

    /// The next argument that is not an option.
    mutating func positional(_ what: String) throws -> String {
        if let i = options.firstIndex(where: { !$0.hasPrefix("-") || $0 == "-" }) { return options.remove(at: i) }
        if !positionals.isEmpty { return positionals.removeFirst() }
        throw UsageError("missing \(what)")
    }

    /// Fails on anything no one asked for.
    func finish() throws {
        if let unknown = options.first {
            throw UsageError(unknown.hasPrefix("-") ? "unknown option '\(unknown)'" : "unexpected argument '\(unknown)'")
        }
        if let extra = positionals.first { throw UsageError("unexpected argument '\(extra)'") }
    }
}

// MARK: Output

/// Writes to standard output through a buffer (many lines, few system calls).
final class Output {
    nonisolated(unsafe) static let standard = Output(FileHandle.standardOutput)
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) {
        self.handle = handle
        buffer.reserveCapacity(1 << 16)
    }

    func line(_ text: String = "") {
        buffer.append(contentsOf: text.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 16 { flush() }
    }

    func json(_ value: JSONValue) { line(value.serialized) }

    func flush() {
        guard !buffer.isEmpty else { return }
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes a line to standard error at once.
func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

// MARK: Stores

/// Opens an existing store: read-only (a shared lock) for commands that only read, writable
/// for those that change it. Never creates one.
func openStore(_ path: String, readOnly: Bool) throws -> Store {
    try Store(path: path, options: StoreOptions(readOnly: readOnly, createIfMissing: false))
}

/// An error in words for the terminal: what happened to which store, and what to do.
func describe(_ error: any Error) -> String {
    switch error {
    case let e as StoreError:
        switch e.code {
        case .locked: return "\(e.path) is locked: \(e.message)"
        case .notFound: return "\(e.path): no such store (\(e.message))"
        case .notAStore: return "\(e.path) is not a Strata store: \(e.message)"
        case .corrupt: return "\(e.path) is damaged\(e.offset.map { " at byte \($0)" } ?? ""): \(e.message)"
        case .readOnly:
            // The engine's message speaks to a program (StoreOptions); a shell user needs the file's terms.
            let reason = (e.underlying as? SystemError).map { " (\($0.reason))" } ?? ""
            return "\(e.path) cannot be written\(reason), and this command changes the store. Give this user write access to the file and its folder (for example `chmod u+w \(e.path)`, or run as the store's owner), or remount the disk read-write. Commands that only read (info, verify, dump, history) work on it as it is."
        default: return "\(e.path): \(e.message)\(e.underlying.map { " (\($0))" } ?? "")"
        }
    case let e as StrataError:
        if let store = e.underlying as? StoreError { return describe(store) }
        return e.message
    case let e as ToolError: return e.message
    default: return "\(error)"
    }
}

/// A failure as JSON, for `--json`: `{"error": {"code", "message", "path"}}`. The code is the
/// engine's when the failure is the store's (`locked`, `notFound`, `corrupt`, ...), else the
/// object layer's, `usage` for a wrong command line, or `failed`.
func errorObject(_ error: any Error) -> JSONValue {
    let code: String
    var path: String? = nil
    switch error {
    case let e as StoreError:
        code = e.code.description
        path = e.path
    case let e as StrataError:
        if let store = e.underlying as? StoreError {
            code = store.code.description
            path = store.path
        } else {
            code = e.code.description
        }
    case let e as ToolError:
        code = "failed"
        path = e.path
    case is UsageError:
        code = "usage"
    default:
        code = "failed"
    }
    let message = (error as? UsageError)?.message ?? describe(error)
    return .object([("error", .object([
        ("code", .string(code)),
        ("message", .string(message)),
        ("path", path.map { .string($0) } ?? .null),
    ]))])
}

/// `1234567` → `"1.2 MiB"`.
func humanBytes(_ n: Int) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(n)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@", value, units[unit])
}
