import Foundation
import Strata

/// Command-line options of a benchmark run.
struct Options {
    /// Records stored by E1 and read by E2 to E4.
    var n = 1_000_000
    /// Random lookups in E2 (default n / 10, 100k at the default n).
    var lookups: Int?
    /// Durable single-record commits in E5.
    var commits = 2_000
    /// Repetitions of the short in-process workloads (their median is reported).
    var repetitions = 5
    var seed: UInt64 = 42
    /// Where summary.md, ratios.svg and results.jsonl go.
    var outDirectory = Options.defaultOut
    /// Where stores are made; a fresh temporary folder unless given.
    var workDirectory = ""
    var keepFiles = false
    /// Read the stores already in --work instead of making them again (for profiling E2-E4).
    var reuse = false
    /// Workload ids (or prefixes such as "E2") to run; empty: all.
    var only: [String] = []
    /// StrataEngine's cache in MiB for the in-process read workloads (nil: the engine's default).
    var engineCacheMiB: Int?
    /// Objects stored by W1 and read by W3-W8 (default min(n, 100k)).
    var objects: Int?
    /// W10: objects with a 1 MiB external-storage value (default 200).
    var blobs = 200
    /// W10: MiB dd writes (default 512).
    var ddMiB = 512
    /// Systems to run; empty: all (a filter for profiling one of them).
    var systems: [String] = []

    static let defaultOut = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("results").path

    static let usage = """
    usage: StrataBenchmarks [--n N] [--quick] [--lookups N] [--objects N] [--commits N] [--reps N] [--seed N]
                            [--blobs N] [--dd-mib N]
                            [--only E1,E2,...] [--out DIR] [--work DIR] [--keep] [--reuse]
                            [--systems strata-engine,grdb,...] [--engine-cache MIB] [--history on|off]

      --n N        records for E1 (and the store E2-E4 read); default 1000000
      --quick      a smoke run: --n 20000 --commits 100 --reps 2 --blobs 20 --dd-mib 64
      --lookups N  random lookups in E2; default n/10
      --objects N  objects for the object workloads W1-W9, W11 and C1 (W3 does as many lookups); default min(n, 100000)
      --commits N  durable single-record commits in E5, single-object saves in W2; default 2000
      --blobs N    W10: objects with a 1 MiB external value; default 200
      --dd-mib N   W10: MiB written by dd bs=1M conv=fdatasync; default 512
      --reps N     repetitions of the in-process workloads (median reported); default 5
      --only LIST  run only these workloads (ids or prefixes, comma-separated); E2-E4 imply E1
      --out DIR    where summary.md, ratios.svg and results.jsonl go; default Benchmarks/results
      --work DIR   where the stores are made; default a new temporary folder, removed after
      --keep       keep the stores
      --systems L  run only these systems (for profiling one); the ratios need all of them
      --engine-cache MIB  StrataEngine's cache for E2/E3 (default: the engine's default, 32 MiB)
      --history on|off  whether Strata's object stores record history (default on, as Strata's default)
      --reuse      with --work: read the stores a kept run left there instead of running E1
    """

    static func parse(_ arguments: [String]) throws -> Options {
        var o = Options()
        var quick = false
        var explicitN: Int?, explicitCommits: Int?, explicitReps: Int?, explicitBlobs: Int?, explicitDD: Int?
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw BenchError("\(arguments[i - 1]) needs a value\n\(usage)") }
            return arguments[i]
        }
        func number() throws -> Int {
            let text = try value().replacingOccurrences(of: "_", with: "")
            var multiplier = 1
            var digits = Substring(text)
            if let last = digits.last?.lowercased(), let m = ["k": 1_000, "m": 1_000_000][last] { multiplier = m; digits = digits.dropLast() }
            guard let n = Int(digits), n > 0 else { throw BenchError("\(arguments[i - 1]) needs a positive number, not \(text)") }
            return n * multiplier
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--n": explicitN = try number()
            case "--quick": quick = true
            case "--lookups": o.lookups = try number()
            case "--objects": o.objects = try number()
            case "--commits": explicitCommits = try number()
            case "--blobs": explicitBlobs = try number()
            case "--dd-mib": explicitDD = try number()
            case "--reps": explicitReps = try number()
            case "--seed": o.seed = UInt64(try number())
            case "--only": o.only = try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            case "--out": o.outDirectory = try value()
            case "--work": o.workDirectory = try value()
            case "--keep": o.keepFiles = true
            case "--reuse": o.reuse = true
            case "--engine-cache": o.engineCacheMiB = try number()
            case "--history":
                let mode = try value()
                guard mode == "on" || mode == "off" else { throw BenchError("--history takes on or off, not \(mode)") }
                // An environment variable, so that the child processes (W8, C1, ...) see it too.
                setenv(StrataHistory.variable, mode, 1)
            case "--systems": o.systems = try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            case "--help", "-h": print(usage); exit(0)
            default: throw BenchError("unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
        }
        if quick {
            o.n = 20_000
            o.commits = 100
            o.repetitions = 2
            o.blobs = 20
            o.ddMiB = 64
        }
        if let b = explicitBlobs { o.blobs = b }
        if let d = explicitDD { o.ddMiB = d }
        if let n = explicitN { o.n = n }
        if let c = explicitCommits { o.commits = c }
        if let r = explicitReps { o.repetitions = r }
        if o.lookups == nil { o.lookups = max(1, o.n / 10) }
        return o
    }

    var lookupCount: Int { lookups ?? max(1, n / 10) }
    /// Interleaved rounds of the fresh-process workloads (E4, W8): a child takes about 60 ms,
    /// and one fresh process's open and fetch varies by a third from run to run, so three
    /// times the in-process repetitions (15 by default), and at least five; three in a smoke
    /// run (two repetitions: `--quick`, CI).
    var freshProcessRepetitions: Int { repetitions <= 2 ? 3 : max(5, 3 * repetitions) }
    /// Objects in the W workloads' stores.
    var objectCount: Int { objects ?? min(n, 100_000) }
}

/// `--history off`: Strata's object stores are opened with `historyRetention = .off`.
enum StrataHistory {
    static let variable = "STRATA_BENCH_HISTORY"

    /// A configuration of the store at `url`, with history as `--history` says.
    static func configuration(url: URL) -> ModelConfiguration {
        var configuration = ModelConfiguration(url: url)
        // getenv, not ProcessInfo's environment: its first use builds a dictionary of every
        // variable, which W8 timed inside Strata's open (a tenth of it) and GRDB's open does not do.
        if let value = getenv(variable), String(cString: value) == "off" { configuration.historyRetention = .off }
        return configuration
    }
}
