import Foundation
import StrataEngine
import StrataRecords

/// `strata upgrade PATH`: converts a store of an older file format to the current one.
struct UpgradeCommand: Command {
    static let name = "upgrade"
    static let summary = "convert a store of an older file format to the current one, all or nothing"
    static let help = """
        usage: strata upgrade PATH [--json]

        Converts the store at PATH, written by an earlier Strata in an older file format
        (which this Strata refuses to open, naming this command), to the current format. Like a
        compaction it writes the new file beside the store (PATH.upgrade), syncs it and renames
        it over the store: a crash at any moment leaves the old store or the new one, whole.
        Blob files stay as they are. A store already in the current format is left alone (exit
        status 0). Needs the store to itself: if another process has it open for writing,
        nothing is done and the exit status is 1. Keep a backup: older Strata cannot read the
        converted store.

        options:
          --json   one JSON object: {"from_version": ..., "to_version": ..., "records": ..., "bytes_before": ..., "bytes_after": ...}
        """

    let path: String
    let json: Bool

    init(arguments: inout Arguments) throws {
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let report = try Store.upgrade(path: path)
        let out = Output.standard
        if json {
            out.json(.object([
                ("path", .string(path)),
                ("from_version", .integer(Int64(report.fromVersion))),
                ("to_version", .integer(Int64(report.toVersion))),
                ("records", .integer(Int64(report.records))),
                ("bytes_before", .integer(Int64(report.bytesBefore))),
                ("bytes_after", .integer(Int64(report.bytesAfter))),
            ]))
        } else if report.fromVersion == report.toVersion {
            out.line("\(path): already file format version \(report.toVersion); nothing to do")
        } else {
            out.line("\(path): converted from file format version \(report.fromVersion) to \(report.toVersion)")
            out.line("  \(report.records) records; \(report.bytesBefore) bytes before, \(report.bytesAfter) after")
        }
        return .success
    }
}
