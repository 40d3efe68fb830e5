// The command line itself: help on every command, and exit status 2 for a wrong one.
import Foundation
import StrataEngine
import Testing

@Suite struct UsageTests {
    static let commands = ["demo", "info", "verify", "dump", "compact", "history", "migrate", "upgrade", "bench"]

    @Test(arguments: commands) func everyCommandHasHelp(command: String) throws {
        for flag in ["--help", "-h"] {
            let run = try Tool.run(command, flag)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.hasPrefix("usage: strata \(command)"), "\(run)")
            #expect(run.stderr.isEmpty)
        }
    }

    @Test func overviewListsTheCommands() throws {
        for arguments in [["--help"], ["help"], ["-h"]] {
            let run = try Tool.run(arguments)
            #expect(run.status == 0, "\(run)")
            for command in Self.commands { #expect(run.stdout.contains("  \(command) "), "\(command) missing from \(run.stdout)") }
        }
    }

    /// No command at all is a wrong command line: the overview on standard error, exit 2.
    @Test func aMissingCommandIsAUsageError() throws {
        let run = try Tool.run([])
        #expect(run.status == 2, "\(run)")
        #expect(run.stdout.isEmpty, "\(run)")
        #expect(run.stderr.hasPrefix("strata: missing command"), "\(run)")
        for command in Self.commands { #expect(run.stderr.contains("  \(command) "), "\(command) missing from \(run.stderr)") }
    }

    /// The version of Strata, and the file format versions it writes and reads.
    @Test func version() throws {
        let run = try Tool.run("--version")
        #expect(run.status == 0, "\(run)")
        #expect(run.lines == ["strata \(StrataVersion.current)",
                              "store file format: writes version \(StrataVersion.fileFormat), reads version 2; `strata upgrade` converts version 1"], "\(run)")
        #expect(StrataVersion.current.split(separator: ".").count == 3 && StrataVersion.current.split(separator: ".").allSatisfy { Int($0) != nil })
        #expect(StrataVersion.readableFileFormats.contains(StrataVersion.fileFormat))
        #expect(run.stderr.isEmpty)
    }

    /// With --json a failure is a JSON object on standard output too, with the same exit status.
    @Test func failuresWithJSONAreJSON() throws {
        let folder = try TestFolder()
        let missing = folder.path("missing.store")
        for command in ["info", "verify", "dump", "compact", "history", "migrate"] {
            let run = try Tool.run(command, missing, "--json")
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("no such store"), "\(run)")
            let error = try #require(try run.object()["error"] as? [String: Any], "\(run)")
            #expect(error["code"] as? String == "notFound", "\(run)")
            #expect(error["path"] as? String == missing, "\(run)")
            #expect((error["message"] as? String)?.contains("no such store") == true, "\(run)")
        }
        let usage = try Tool.run("info", "a.store", "--json", "--fast")
        #expect(usage.status == 2, "\(usage)")
        let error = try #require(try usage.object()["error"] as? [String: Any], "\(usage)")
        #expect(error["code"] as? String == "usage")
        #expect(error["message"] as? String == "unknown option '--fast'")
        #expect(error["path"] is NSNull)
        let unknown = try Tool.run("nonsense", "--json")
        #expect(unknown.status == 2)
        #expect((try unknown.object()["error"] as? [String: Any])?["code"] as? String == "usage", "\(unknown)")
    }

    /// `dump` takes --json like the other commands (its output is JSON lines already).
    @Test func dumpTakesJSON() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 3)
        let run = try Tool.run("dump", path, "--json", "--limit", "2")
        #expect(run.status == 0, "\(run)")
        #expect(try run.objects().count == 2, "\(run)")
    }

    @Test(arguments: [
        (["nonsense"], "unknown command"),
        (["info"], "missing the store's PATH"),
        (["info", "a.store", "b.store"], "unexpected argument 'b.store'"),
        (["verify", "a.store", "--fast"], "unknown option '--fast'"),
        (["dump", "a.store", "--limit", "many"], "--limit needs a whole number"),
        (["dump", "a.store", "--limit"], "--limit needs a value"),
        (["dump", "a.store", "--where", "title"], "--where needs FIELD=VALUE"),
        (["bench", "--n", "0"], "--n needs a whole number"),
        (["demo", "--count", "-5"], "--count needs a whole number"),
    ]) func wrongCommandLinesExitWithTwo(arguments: [String], message: String) throws {
        let run = try Tool.run(arguments)
        #expect(run.status == 2, "\(run)")
        #expect(run.stderr.contains(message), "\(run)")
        #expect(run.stdout.isEmpty)
    }

    @Test func missingAndForeignFilesExitWithOne() throws {
        let folder = try TestFolder()
        let missing = folder.path("missing.store")
        folder.expectDamage(at: folder.path("notes.txt"))   // not a store (opening it leaves notes.txt.lock)
        for command in ["info", "verify", "dump", "compact", "history", "migrate"] {
            let run = try Tool.run(command, missing)
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("no such store"), "\(run)")
            #expect(!FileManager.default.fileExists(atPath: missing), "\(command) created a store")
        }
        let foreign = folder.path("notes.txt")
        try Data(String(repeating: "not a store\n", count: 100).utf8).write(to: URL(fileURLWithPath: foreign))
        for command in ["info", "verify", "dump", "compact", "history", "migrate"] {
            let run = try Tool.run(command, foreign)
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("is not a Strata store"), "\(run)")
        }
        for command in ["info", "verify", "dump", "compact", "history", "migrate"] {
            let run = try Tool.run(command, folder.url.path)
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("This path is a folder, not a store file"), "\(run)")
            #expect(!run.stderr.contains("transaction"), "\(run)")
        }
    }
}
