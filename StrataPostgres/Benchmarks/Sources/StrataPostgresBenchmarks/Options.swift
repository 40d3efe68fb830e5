import Foundation

/// Command-line options of a run.
struct Options: Sendable {
    /// Objects stored by W1 (and read by W3-W7, upserted by W6, of which W9 deletes the unpublished).
    var n = 100_000
    /// Point lookups in W3.
    var lookups = 5_000
    /// Counts per W4 run, pages per W5 run.
    var counts = 20
    var pages = 200
    /// Saves in each W2 run, each of one object.
    var saves = 500
    /// Runs of the short read workloads (W3, W4, W5, W7); the median is reported.
    var repetitions = 3
    /// Objects per batch in W7 (Strata's `enumerate` batchSize, Fluent's `chunk(max:)`).
    var batchSize = 5_000
    var seed: UInt64 = 42
    /// Workloads to run (W1, W3, ...); empty: all. W3-W9 need W1's tables: without W1, they are
    /// filled untimed.
    var only: [String] = []
    /// Systems to run (strata, nio, fluent); empty: all.
    var systems: [String] = []
    /// The server; `--url` or STRATA_POSTGRES_URL.
    var url = ""
    /// Where the table goes besides standard output (nil: nowhere).
    var out: String?
    /// Objects per `save()` when Strata's table is filled untimed (before W6, and for W1 when
    /// `--only` leaves W1 out); nil: one save, as W1 does. W1 and W6 themselves are one save.
    var strataLoadSave: Int?

    static let allWorkloads = ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W9"]

    static let usage = """
    usage: StrataPostgresBenchmarks --url postgresql://user:password@127.0.0.1:PORT/db
                                    [--n N] [--lookups N] [--saves N] [--reps N] [--only W1,W3,...]
                                    [--systems strata,nio,fluent] [--quick] [--out FILE]
                                    [--strata-load-save N]

      --url URL       the server (default: $STRATA_POSTGRES_URL); run.sh starts one
      --n N           objects W1 inserts (and W3-W9 work on); 100k by default; 20k, 1M ... are fine
      --lookups N     W3's point lookups by unique id; default 5000
      --saves N       W2's saves of one object each; default 500
      --reps N        runs of each workload, the systems taking turns (median reported); default 3
      --only LIST     run only these workloads (without W1, its tables are filled untimed)
      --systems LIST  run only these systems (for profiling one); ratios need all three
      --quick         a smoke run: --n 2000 --lookups 200 --saves 50 --reps 1
      --out FILE      also write the table to FILE
      --strata-load-save N  fill Strata's table in saves of N objects when untimed (the load
                      before W6, and W1's when --only leaves W1 out); W1 and W6 are one save
    """

    static func parse(_ arguments: [String]) throws -> Options {
        var o = Options()
        var quick = false
        var explicitN: Int?, explicitLookups: Int?, explicitReps: Int?, explicitSaves: Int?
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
        func list() throws -> [String] {
            try value().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--n": explicitN = try number()
            case "--lookups": explicitLookups = try number()
            case "--saves": explicitSaves = try number()
            case "--reps": explicitReps = try number()
            case "--seed": o.seed = UInt64(try number())
            case "--only": o.only = try list().map { $0.uppercased() }
            case "--systems": o.systems = try list().map { $0.lowercased() }
            case "--url": o.url = try value()
            case "--out": o.out = try value()
            case "--strata-load-save": o.strataLoadSave = try number()
            case "--quick": quick = true
            case "-h", "--help": print(usage); exit(0)
            default: throw BenchError("unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
        }
        if quick { o.n = 2_000; o.lookups = 200; o.saves = 50; o.repetitions = 1 }
        if let explicitN { o.n = explicitN }
        if let explicitLookups { o.lookups = explicitLookups }
        if let explicitReps { o.repetitions = explicitReps }
        if let explicitSaves { o.saves = explicitSaves }
        if o.url.isEmpty { o.url = ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"] ?? "" }
        guard !o.url.isEmpty else { throw BenchError("no server: pass --url or set STRATA_POSTGRES_URL (run.sh starts one)\n\(usage)") }
        for w in o.only where !allWorkloads.contains(w) { throw BenchError("unknown workload \(w); there are \(allWorkloads.joined(separator: ", "))") }
        for s in o.systems where !["strata", "nio", "fluent"].contains(s) { throw BenchError("unknown system \(s); there are strata, nio, fluent") }
        guard o.n >= 100 else { throw BenchError("--n must be at least 100") }
        return o
    }

    func runs(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
