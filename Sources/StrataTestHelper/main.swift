// A child process for tests that need a second process (locking, kill -9 torture).
// Usage: StrataTestHelper hold PATH   — opens the store for writing, prints "ready", waits for stdin to close.
import Foundation
import StrataEngine

let args = CommandLine.arguments
guard args.count >= 3 else {
    FileHandle.standardError.write(Data("usage: StrataTestHelper hold PATH\n".utf8))
    exit(2)
}
switch args[1] {
case "hold":
    do {
        let store = try Store(path: args[2])
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        _ = FileHandle.standardInput.readDataToEndOfFile()
        store.close()
    } catch {
        FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
        exit(1)
    }
default:
    FileHandle.standardError.write(Data("unknown command \(args[1])\n".utf8))
    exit(2)
}
