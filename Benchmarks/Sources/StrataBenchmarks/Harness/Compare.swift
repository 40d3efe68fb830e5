import Foundation

/// What one run of a read workload saw; every system must see the same.
struct Outcome: Equatable, Sendable {
    /// Records read.
    var count = 0
    /// An order-independent checksum of the fields read (so nothing is optimized away).
    var checksum = 0

    mutating func add(_ course: Course) {
        count += 1
        checksum &+= course.checksum
    }
}

/// One system's way of doing a workload, run several times in-process.
struct Trial {
    let system: String
    /// Counters to report per run (read before and after each run; the deltas are reported).
    var counters: () -> [(String, Int)] = { [] }
    let run: () throws -> Outcome

    init(system: String, counters: @escaping () -> [(String, Int)] = { [] }, run: @escaping () throws -> Outcome) {
        self.system = system
        self.counters = counters
        self.run = run
    }
}

/// Runs each trial `warmups` times, then `repetitions` rounds that take the trials in turn
/// (so drift over time falls on every system alike), and reports each one's median.
func compare(_ bench: Bench, workload: String, n: Int, repetitions: Int, warmups: Int = 1, _ allTrials: [Trial],
             extras: [(String, JSONValue)] = []) throws -> [Measurement] {
    let trials = allTrials.filter { System(rawValue: $0.system).map(bench.includes) ?? true }
    var expected: Outcome?
    for trial in trials {
        for _ in 0..<warmups {
            let outcome = try trial.run()
            if expected == nil { expected = outcome }
        }
    }
    var times = [[Double]](repeating: [], count: trials.count)
    var peaks = [Int](repeating: 0, count: trials.count)
    var growth = [Int](repeating: 0, count: trials.count)
    var anonPeaks = [Int](repeating: 0, count: trials.count)
    var anonGrowth = [Int](repeating: 0, count: trials.count)
    var outcomes = [Outcome?](repeating: nil, count: trials.count)
    var counts = [[(String, Int)]](repeating: [], count: trials.count)
    for _ in 0..<repetitions {
        for (i, trial) in trials.enumerated() {
            let before = trial.counters()
            let section = Section.begin()
            let outcome = try trial.run()
            let result = section.end()
            let after = trial.counters()
            counts[i] = zip(before, after).map { ($0.0, $1.1 - $0.1) }
            times[i].append(result.seconds)
            peaks[i] = max(peaks[i], result.peakKB)
            growth[i] = max(growth[i], result.peakKB - result.rssBeforeKB)
            anonPeaks[i] = max(anonPeaks[i], result.peakAnonKB)
            anonGrowth[i] = max(anonGrowth[i], result.peakAnonKB - result.anonBeforeKB)
            outcomes[i] = outcome
        }
    }
    return trials.enumerated().map { i, trial in
        let outcome = outcomes[i] ?? Outcome()
        var m = Measurement(workload: workload, system: trial.system, n: n, seconds: median(times[i]), peakRSSKB: peaks[i])
        m.extras = [("rss_growth_kb", .int(growth[i])), ("peak_anon_kb", .int(anonPeaks[i])), ("anon_growth_kb", .int(anonGrowth[i])),
                    ("records_read", .int(outcome.count)),
                    ("repetitions", .int(repetitions)), ("min_seconds", .double(times[i].min() ?? 0)),
                    ("max_seconds", .double(times[i].max() ?? 0)),
                    ("same_result", .string(outcome == expected ? "yes" : "NO"))]
            + counts[i].map { ($0.0, JSONValue.int($0.1)) } + extras
        return m
    }
}

/// Runs `measure` (a child process per call) `repetitions` times for each system, the systems
/// in turn in each round so that other work on the machine falls on all of them alike, and
/// reports for each system the run with the median time, with the min, the max and the
/// number of runs beside it.
func childRounds(_ bench: Bench, systems: [System], title: String, _ measure: (System) throws -> Measurement) throws {
    var runs: [System: [Measurement]] = [:]
    for _ in 0..<max(1, bench.options.repetitions) {
        for system in systems { runs[system, default: []].append(try measure(system)) }
    }
    for system in systems {
        guard let all = runs[system]?.sorted(by: { $0.seconds < $1.seconds }), !all.isEmpty else { continue }
        var m = all[all.count / 2]
        m["repetitions"] = .int(all.count)
        m["min_seconds"] = .double(all[0].seconds)
        m["max_seconds"] = .double(all[all.count - 1].seconds)
        bench.report(m, title: title)
    }
}
