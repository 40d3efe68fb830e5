// The command line itself: help on every command, and exit status 2 for a wrong one.
import Foundation
import Testing

@Suite struct UsageTests {
    static let commands = ["demo", "info", "verify", "dump", "compact", "migrate", "upgrade", "bench"]

    @Test(arguments: commands) func everyCommandHasHelp(command: String) throws {
        for flag in ["--help", "-h"] {
            let run = try Tool.run(command, flag)
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.hasPrefix("usage: strata \(command)"), "\(run)")
            #expect(run.stderr.isEmpty)
        }
    }

    @Test func overviewListsTheCommands() throws {
        for arguments in [["--help"], ["help"], []] {
            let run = try Tool.run(arguments)
            #expect(run.status == 0, "\(run)")
            for command in Self.commands { #expect(run.stdout.contains("  \(command) "), "\(command) missing from \(run.stdout)") }
        }
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
        for command in ["info", "verify", "dump", "compact", "migrate"] {
            let run = try Tool.run(command, missing)
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("no such store"), "\(run)")
            #expect(!FileManager.default.fileExists(atPath: missing), "\(command) created a store")
        }
        let foreign = folder.path("notes.txt")
        try Data(String(repeating: "not a store\n", count: 100).utf8).write(to: URL(fileURLWithPath: foreign))
        for command in ["info", "verify", "dump", "compact", "migrate"] {
            let run = try Tool.run(command, foreign)
            #expect(run.status == 1, "\(run)")
            #expect(run.stderr.contains("is not a Strata store"), "\(run)")
        }
    }
}
