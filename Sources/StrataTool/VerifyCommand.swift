import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata verify PATH`: the whole-store check, exit status 0 only when the store is clean.
struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "check every commit record, page, record, index entry and blob; exit 1 if damaged"
    static let help = """
        usage: strata verify PATH [--json]

        Reads the whole store at PATH, read-only, and checks it: the chain of commit records
        and their checksums, every page of the tree (checksums, key order, bounds), every
        record, that the indexes and the records agree both ways, the counts in the catalog,
        and every blob file. In a store written by Strata's object layer it then decodes every
        object with the schema stored in the file. Shows a progress bar when standard error is
        a terminal.

        Bytes past the last valid commit are what opening the store for writing cuts off. A
        commit cut short while it was written (a torn tail, as a crash leaves it) is normal: a
        warning line says how many bytes go. A whole commit there (written to its end, yet
        failing a check) is a lost commit, not a torn write: it is reported as damage.

        Exit status: 0 when the store is clean (with or without a torn tail); 1 when it is
        damaged (each damaged place is named, with its byte offset when it has one) or cannot
        be read; 2 for a wrong command line.

        options:
          --json   one JSON object: {"clean": ..., "problems": [{"offset": ..., "message": ...}],
                   "warnings": [...], "discarded_tail": {"offset", "bytes", "whole_commits"} or
                   null, counts}
        """

    let path: String
    let json: Bool

    init(arguments: inout Arguments) throws {
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    struct Problem {
        let offset: UInt64?
        let message: String
        var text: String { offset.map { "at byte \($0): \(message)" } ?? message }
    }

    func run() throws -> ExitStatus {
        let store: Store
        do { store = try openStore(path, readOnly: true) } catch let error as StoreError where error.code == .corrupt {
            // Damage that stops the store from opening at all (its header, or every commit record).
            show(problems: [Problem(offset: error.offset, message: error.message)], report: nil, objects: 0, tail: nil)
            return .failure
        }
        defer { store.close() }
        let schema = try store.read { try StoredModelSchema($0) }
        let bar = ProgressBar("verifying \((path as NSString).lastPathComponent)")
        let engineShare = schema == nil ? 1.0 : 0.9
        // The engine keeps no row's index keys: the stored schema computes them, so that every
        // index entry is checked against its row.
        let keys = try schema.map { schema in try store.read { schema.indexKeys($0) } }
        let report = try store.verify(progress: { bar.update($0 * engineShare) }, indexKeys: keys)
        let names = Dictionary(try store.info().collections.map { ($0.id.rawValue, $0.name) }, uniquingKeysWith: { a, _ in a })
        var problems = report.problems.map { Problem(offset: $0.offset, message: Self.naming(names, in: $0.message)) }
        var objects = 0
        if let schema, report.isClean {
            objects = try decodeObjects(store, schema) { problems.append($0) } progress: { bar.update(engineShare + $0 * (1 - engineShare)) }
        }
        let tail = try store.discardedTail()
        problems += (tail?.wholeCommits ?? []).map { Self.lostCommit($0) }
        bar.finish()
        show(problems: problems, report: report, objects: objects, tail: tail)
        return problems.isEmpty ? .success : .failure
    }

    /// A whole commit past the last valid one, as a problem.
    static func lostCommit(_ commit: DiscardedTail.WholeCommit) -> Problem {
        Problem(offset: commit.offset, message: "bytes \(commit.offset)..<\(commit.end), past the last valid commit, hold a whole commit"
                + (commit.sequence.map { " (commit \($0))" } ?? "")
                + " that recovery discards: \(commit.reason). It was written to its end, so this is a lost commit (damage, or a disk that lost writes around a power cut), not a write cut short; opening the store for writing would cut it off")
    }

    /// The warning for a torn tail: a commit cut short, as a crash leaves it.
    static func tornTailWarning(_ tail: DiscardedTail) -> String {
        "the last \(tail.length) byte\(tail.length == 1 ? "" : "s") (from byte \(tail.offset)) are a commit cut short, as a crash leaves it; recovery discards them when the store is next opened for writing"
    }

    /// The engine's messages number collections ("row 7 of collection 1"); add their names.
    static func naming(_ names: [UInt32: String], in message: String) -> String {
        var result = ""
        var rest = message[...]
        while let range = rest.range(of: "collection ") {
            result += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            result += digits
            rest = rest.dropFirst(digits.count)
            if let id = UInt32(digits), let name = names[id] { result += " (\(name))" }
        }
        return result + rest
    }

    /// Decodes every object of every entity with the stored schema; returns how many decoded.
    private func decodeObjects(_ store: Store, _ schema: StoredModelSchema, problem: (Problem) -> Void,
                               progress: (Double) -> Void) throws -> Int {
        try store.read { tx in
            let collections = schema.entities.compactMap { e in tx.collection(named: e.name).map { (e, $0) } }
            let total = try max(1, collections.reduce(0) { try $0 + tx.count(in: $1.1) })
            var done = 0
            var decoded = 0
            for (entity, collection) in collections {
                try tx.forEachRecord(in: collection) { row, record in
                    do {
                        _ = try entity.decode(record)
                        decoded += 1
                    } catch {
                        problem(Problem(offset: nil, message: "row \(row) of \(entity.name) does not decode with the stored schema: \(error)"))
                    }
                    done += 1
                    if done % 1024 == 0 { progress(Double(done) / Double(total)) }
                    return true
                }
            }
            return decoded
        }
    }

    private func show(problems: [Problem], report: VerifyReport?, objects: Int, tail: DiscardedTail?) {
        let warnings = tail.flatMap { $0.wholeCommits.isEmpty ? [Self.tornTailWarning($0)] : nil } ?? []
        let out = Output.standard
        let checked = [report?.commitsChecked, report?.pagesChecked, report?.recordsChecked, report?.indexEntriesChecked, report?.blobsChecked]
            .map { Int64($0 ?? 0) }
        if json {
            out.json(.object([
                ("path", .string(path)),
                ("clean", .bool(problems.isEmpty)),
                ("commits", .integer(checked[0])),
                ("pages", .integer(checked[1])),
                ("records", .integer(checked[2])),
                ("index_entries", .integer(checked[3])),
                ("blobs", .integer(checked[4])),
                ("objects_decoded", .integer(Int64(objects))),
                ("problems", .array(problems.map { p in
                    .object([("offset", p.offset.map { .unsigned($0) } ?? .null), ("message", .string(p.message))])
                })),
                ("warnings", .array(warnings.map { .string($0) })),
                ("discarded_tail", tail.map { t in
                    .object([("offset", .unsigned(t.offset)), ("bytes", .unsigned(t.length)),
                             ("whole_commits", .array(t.wholeCommits.map { c in
                                 .object([("offset", .unsigned(c.offset)), ("end", .unsigned(c.end)),
                                          ("sequence", c.sequence.map { .unsigned($0) } ?? .null), ("reason", .string(c.reason))])
                             }))])
                } ?? .null),
            ]))
            return
        }
        let counts = report == nil ? "the store cannot be opened"
            : "\(checked[0]) commits, \(checked[1]) pages, \(checked[2]) records, \(checked[3]) index entries, \(checked[4]) blobs checked"
            + (objects > 0 ? "; \(objects) objects decoded with the stored schema" : "")
        if problems.isEmpty {
            out.line("\(path): clean (\(counts))")
            for warning in warnings { out.line("warning: \(warning)") }
            return
        }
        out.line("\(path): damaged, \(problems.count) problem\(problems.count == 1 ? "" : "s") (\(counts))")
        let shown = 1000
        for p in problems.prefix(shown) { out.line("  - \(p.text)") }
        if problems.count > shown { out.line("  ... and \(problems.count - shown) more (--json lists them all)") }
    }
}
