import Foundation
import Strata
import StrataEngine
import StrataRecords
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `strata migrate PATH`: rewrites the records of older layouts into their entity's current one.
struct MigrateCommand: Command {
    static let name = "migrate"
    static let summary = "rewrite records of older layouts (before lightweight changes) into the current one"
    static let help = """
        usage: strata migrate PATH [--json]

        Rewrites every object of the store at PATH whose record is still in an older layout
        of its entity (written before a lightweight schema change: a property added, renamed
        or removed) into the entity's current layout, using the schema stored in the file:
        each property is taken from the record's field of the same name or of a former name,
        and a property the record lacks takes the default stored when it was added. The
        values do not change, so neither do the indexes. A removed property's value is gone
        from the rewritten records (a blob file of a removed .externalStorage property is
        left). Everything is one transaction: an error leaves the store as it was. Running it
        again rewrites nothing. Superseded records take space until `strata compact`.

        Apps do not need it: Strata reads records of older layouts as they are. It is for
        dropping the values of removed properties, and for readers that should see every
        record in the current layout.

        Needs the store to itself and write access to its file: if another process has it
        open, or the file is read-only, nothing is done and the exit status is 1. Shows a
        progress bar when standard error is a terminal, and prints how many records of each
        entity were rewritten.

        options:
          --json   one JSON object: {"rewritten": ..., "entities": [{"name": ..., "records": ..., "rewritten": ...}], ...}
        """

    let path: String
    let json: Bool

    init(arguments: inout Arguments) throws {
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let store = try open()
        defer { store.close() }
        let bar = ProgressBar("migrating \((path as NSString).lastPathComponent)")
        let start = DispatchTime.now().uptimeNanoseconds
        let report: RecordUpgradeReport
        do {
            report = try upgradeRecords(in: store) { bar.update($0.fractionCompleted) }
        } catch {
            bar.finish()
            throw error
        }
        bar.finish()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let out = Output.standard
        if json {
            out.json(.object([
                ("path", .string(path)),
                ("schema", .bool(report.hasSchema)),
                ("rewritten", .integer(Int64(report.rewritten))),
                ("entities", .array(report.entities.map { e in
                    .object([("name", .string(e.name)), ("records", .integer(Int64(e.records))), ("rewritten", .integer(Int64(e.rewritten)))])
                })),
                ("seconds", .double((seconds * 1000).rounded() / 1000)),
            ]))
            return .success
        }
        guard report.hasSchema else {
            out.line("\(path): no object schema (a StrataEngine store), so no object records to migrate")
            return .success
        }
        if report.rewritten == 0 {
            out.line("\(path): every record is in its entity's current layout; nothing rewritten")
        } else {
            out.line("\(path): \(report.rewritten) record\(report.rewritten == 1 ? "" : "s") rewritten into the current layout in \(String(format: "%.2f", seconds)) s")
        }
        let width = report.entities.map(\.name.count).max() ?? 0
        for e in report.entities {
            out.line("  \(e.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(e.rewritten) of \(e.records) rewritten")
        }
        return .success
    }

    /// Opens the store writable; a file without write access is an error in words that say so.
    private func open() throws -> Store {
        let readOnly = { (reason: String) in
            ToolError("\(path) is read-only (\(reason)): strata migrate rewrites records in the store, so it needs write access to the file. Make it writable (chmod u+w \(path)) or run this as its owner; nothing was changed.", path: path)
        }
        // A file without write permission for this user, or with no write bit at all (read-only
        // by intent, which even root's writes should respect).
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
           let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue,
           mode & 0o222 == 0 || !FileManager.default.isWritableFile(atPath: path) {
            throw readOnly("no write permission")
        }
        do { return try openStore(path, readOnly: false) } catch let error as StoreError {
            if error.code == .readOnly, let system = error.underlying as? SystemError { throw readOnly(system.reason) }
            throw error
        }
    }
}
