// The `strata` command-line tool: runs the demo (and, later, inspects and maintains stores).
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: strata <command> [options]

    commands:
      demo [--path PATH] [--count N]   insert sample courses (with upserts), query, page,
                                        count, enumerate and reopen a store, printing each
                                        step and its time. Default store: \(DemoCommand.defaultPath)
      help                              this text
    """

func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("strata: \(message)\n".utf8))
    exit(code)
}

switch arguments.first {
case "demo":
    do { try DemoCommand(arguments: Array(arguments.dropFirst())).run() }
    catch { fail("\(error)", code: 1) }
case "help", "--help", "-h", nil:
    print(usage)
default:
    fail("unknown command '\(arguments[0])'\n\(usage)")
}
