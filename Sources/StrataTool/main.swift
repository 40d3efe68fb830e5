// The `strata` command-line tool: the demo, and looking inside, checking, dumping,
// compacting and migrating stores. Each command is a file of its own (`InfoCommand.swift`, ...).
import Foundation

let commands: [any Command.Type] = [DemoCommand.self, InfoCommand.self, VerifyCommand.self, DumpCommand.self,
                                    CompactCommand.self, MigrateCommand.self, UpgradeCommand.self, BenchCommand.self]

let overview = """
    usage: strata <command> [options]

    commands:
    \(commands.map { "  " + $0.name.padding(toLength: 9, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

    `strata <command> --help` describes a command. Exit status: 0 success, 1 failure (or a
    damaged store), 2 a wrong command line. Errors go to standard error; --json prints
    machine-readable output.
    """

@MainActor
func runTool(_ arguments: [String]) -> ExitStatus {
    guard let name = arguments.first, !["help", "--help", "-h"].contains(name) else {
        print(overview)
        return .success
    }
    guard let command = commands.first(where: { $0.name == name }) else {
        printError("strata: unknown command '\(name)'\n\n\(overview)")
        return .usage
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
        printError("strata \(name): \(error.message)\nSee 'strata \(name) --help'.")
        return .usage
    } catch {
        Output.standard.flush()
        printError("strata \(name): \(describe(error))")
        return .failure
    }
}

exit(runTool(Array(CommandLine.arguments.dropFirst())).rawValue)
