// The `strata` command-line tool: the demo, and looking inside, checking, dumping,
// compacting and migrating stores. Each command is a file of its own (`InfoCommand.swift`, ...).
import Foundation
import StrataEngine
import StrataRecords

let commands: [any Command.Type] = [DemoCommand.self, InfoCommand.self, VerifyCommand.self, DumpCommand.self,
                                    CompactCommand.self, HistoryCommand.self, MigrateCommand.self, UpgradeCommand.self, BenchCommand.self]

let overview = """
    usage: strata <command> [options]
           strata --version

    commands:
    \(commands.map { "  " + $0.name.padding(toLength: 9, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    `strata <command> --help` describes a command. Exit status: 0 success, 1 failure (or a
    damaged store), 2 a wrong command line. Errors go to standard error; with --json, output
    is JSON, and so is a failure (an object with "error": {"code", "message", "path"} on
    standard output, beside the words on standard error).
    """

/// `strata --version`: this Strata, and the store file format versions it writes and reads.
var versionText: String {
    func versions(_ range: ClosedRange<Int>) -> String {
        range.count == 1 ? "version \(range.lowerBound)" : "versions \(range.lowerBound) to \(range.upperBound)"
    }
    return """
        strata \(StrataVersion.current)
        store file format: writes version \(StrataVersion.fileFormat), reads \(versions(StrataVersion.readableFileFormats)); `strata upgrade` converts \(versions(StrataVersion.convertibleFileFormats))
        """
}

@MainActor
func runTool(_ arguments: [String]) -> ExitStatus {
    guard let name = arguments.first else {
        printError("strata: missing command\n\n\(overview)")
        return .usage
    }
    if ["help", "--help", "-h"].contains(name) {
        print(overview)
        return .success
    }
    if name == "--version" {
        print(versionText)
        return .success
    }
    // With --json, a failure is printed as JSON too (before `--`, it is an option).
    let json = arguments.prefix { $0 != "--" }.contains("--json")
    guard let command = commands.first(where: { $0.name == name }) else {
        return fail(UsageError("unknown command '\(name)'"), text: "strata: unknown command '\(name)'\n\n\(overview)", json: json, status: .usage)
    }
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        print(command.help)
        return .success
    }
    do {
        var parsed = Arguments(rest)
        let instance = try command.init(arguments: &parsed)
        try parsed.finish()
        let status = try instance.run()
        Output.standard.flush()
        return status
    } catch let error as UsageError {
        return fail(error, text: "strata \(name): \(error.message)\nSee 'strata \(name) --help'.", json: json, status: .usage)
    } catch {
        return fail(error, text: "strata \(name): \(describe(error))", json: json, status: .failure)
    }
}

/// Reports a failure: its words on standard error and, with --json, its JSON object on
/// standard output (after whatever output came before it).
func fail(_ error: any Error, text: String, json: Bool, status: ExitStatus) -> ExitStatus {
    if json { Output.standard.json(errorObject(error)) }
    Output.standard.flush()
    printError(text)
    return status
}

exit(runTool(Array(CommandLine.arguments.dropFirst())).rawValue)
