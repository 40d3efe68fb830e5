import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata history PATH`: the store's history transactions, oldest first.
struct HistoryCommand: Command {
    static let name = "history"
    static let summary = "list the history transactions a store records (what each save changed)"
    static let help = """
        usage: strata history PATH [--since TOKEN] [--limit N] [--json]

        Lists the history transactions of the store at PATH in commit order: each one's token,
        time (UTC), author, process, and its changes as runs of rows: inserts, updates with the
        names of the changed attributes, deletes with the tombstone of their
        .preserveValueOnDeletion values. Models are not needed: names and values come from the
        store. Opens the store read-only (beside a writer in another process, too).

        options:
          --since TOKEN   only the transactions after TOKEN: its number, or NUMBER@STORE as
                          DefaultHistoryToken prints it (the store must be this one). A token
                          older than the pruned history is an error.
          --limit N       stop after N transactions
          --json          one JSON object per transaction: "token", "store", "timestamp",
                          "author", "bundleIdentifier", "processIdentifier", "changes" (runs:
                          "kind", "entity", "firstRow", "count", "attributes", "tombstones")
        """

    let path: String
    let since: String?
    let limit: Int?
    let json: Bool

    init(arguments: inout Arguments) throws {
        since = try arguments.value("--since")
        limit = try arguments.integer("--limit", in: 0...Int.max)
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let store = try openStore(path, readOnly: true)
        defer { store.close() }
        let out = Output.standard
        try store.read { tx in
            let history = try HistoryDump(tx)
            let after = try since.map { try token($0, store: history.storeIdentifier) }
            if let after, after < history.pruned {
                throw ToolError("the history after token \(after) was pruned (transactions up to \(history.pruned) are gone); list it without --since", path: path)
            }
            var printed = 0
            try history.forEach(after: after) { token, record in
                if let limit, printed >= limit { return false }
                printed += 1
                if json { out.json(history.json(token, record)); return true }
                let time = ISO8601DateFormatter().string(from: record.timestamp)
                let author = record.author.map { " author \($0)" } ?? ""
                out.line("\(token)  \(time)\(author)  \(record.bundleIdentifier) pid \(record.processIdentifier)  \(record.changeCount) change\(record.changeCount == 1 ? "" : "s")")
                for line in history.lines(record) { out.line("    " + line) }
                return true
            }
            if !json && printed == 0 { out.line(after.map { "no transactions after token \($0)" } ?? "no history recorded") }
        }
        out.flush()
        return .success
    }

    /// `--since`'s token value, checked against this store.
    private func token(_ text: String, store: String?) throws -> Int64 {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        guard let value = parts.first.flatMap({ Int64($0) }), value >= 0 else {
            throw UsageError("--since needs a token: a number, or NUMBER@STORE, not '\(text)'")
        }
        if parts.count == 2, let store, parts[1] != store {
            throw ToolError("the token \(text) belongs to another store (this one is \(store))", path: path)
        }
        return value
    }
}
