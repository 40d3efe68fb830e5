// A child process for StrataPostgres's tests.
//
//   StrataPostgresTestHelper writer URL NAMESPACE --writer W --saves N
//       Saves N times (ManyWriters.save), each its own context save; prints "done" (or
//       "error: ..." and exits 1 at the first error the store did not retry away).
//   StrataPostgresTestHelper counter URL NAMESPACE --times N
//       Adds 1 to the counter N times (ManyWriters.increment), each its own read and save,
//       retried after a conflict; prints "done C" (C: the conflicts met), or "error: ...".
//   StrataPostgresTestHelper watch URL NAMESPACE
//       Follows PGPlain with a ResultsObserver; prints "ready", then "count N" at first and each time
//       its results change (observation, no polling); exits when stdin closes.
import Foundation
import Observation
import Strata
import StrataPostgres
import StrataPostgresTestSupport

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func option(_ name: String, _ args: [String]) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

let args = CommandLine.arguments
guard args.count >= 4, let url = URL(string: args[2]) else {
    say("usage: StrataPostgresTestHelper writer|watch URL NAMESPACE ...")
    exit(2)
}
let namespace = args[3]

switch args[1] {
case "writer":
    let writer = option("--writer", args).flatMap(Int.init) ?? 0
    let saves = option("--saves", args).flatMap(Int.init) ?? 1
    do {
        let container = try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace))
        for save in 0..<saves {
            try ManyWriters.save(ModelContext(container), writer: writer, save: save)
        }
        say("done")
    } catch {
        say("error: \(error)")
        exit(1)
    }
case "counter":
    let times = option("--times", args).flatMap(Int.init) ?? 1
    do {
        let container = try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace))
        var conflicts = 0
        for _ in 0..<times { conflicts += try ManyWriters.increment(container) }
        say("done \(conflicts)")
    } catch {
        say("error: \(error)")
        exit(1)
    }
case "watch":
    do {
        let container = try ModelContainer(for: Schema(ManyWriters.models), configurations: ManyWriters.configuration(url: url, namespace: namespace))
        let observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<PGPlain>(), modelContainer: container)
        Thread {
            _ = FileHandle.standardInput.readDataToEndOfFile()
            exit(0)
        }.start()
        say("ready")
        // Each change of the results (observation), as it happens.
        while true {
            let changed = AsyncStream<Void> { continuation in
                let count = withObservationTracking { observer.results.count } onChange: { continuation.yield(); continuation.finish() }
                say("count \(count)")
            }
            for await _ in changed {}
        }
    } catch {
        say("error: \(error)")
        exit(1)
    }
default:
    say("unknown command \(args[1])")
    exit(2)
}
