import Foundation

// StrataBenchmarks: StrataEngine beside GRDB (SQLite) in one run, on the same data.
// `StrataBenchmarks [options]` runs the workloads; `StrataBenchmarks child <workload> k=v...`
// is how a workload runs one system in a fresh process; `StrataBenchmarks profile MODE ...`
// runs one workload on Strata alone for callgrind (Harness/Profile.swift, profile.sh).

/// Every workload, in the order they run. Add one file per workload and list it here.
let workloads: [any Workload.Type] = [
    E1BulkInsert.self, E2PointReads.self, E3RangeScan.self, E3FullScan.self, E4Reopen.self, E5DurableCommits.self,
    W1ObjectInsert.self, W2ObjectDurableSaves.self, W3ObjectPointFetch.self, W4ObjectCount.self, W5ObjectPage.self,
    W6ObjectUpsert.self, W7ObjectEnumerate.self, W8ObjectReopen.self, W8ModelReopen.self, W9ObjectDeleteWhere.self, W10ExternalStorage.self,
    W11StoreSize.self, C1CascadeDelete.self, M1CountMemory.self,
]

func runChild(_ arguments: [String]) throws {
    guard let name = arguments.first, let workload = workloads.first(where: { $0.id == name }) else {
        throw BenchError("child: unknown workload \(arguments.first ?? "(none)")")
    }
    try workload.child(ChildArguments(Array(arguments.dropFirst())))
}

func runAll(_ options: Options) throws {
    var options = options
    var madeWorkDirectory = false
    if options.workDirectory.isEmpty {
        options.workDirectory = NSTemporaryDirectory() + "strata-bench-\(getpid())"
        madeWorkDirectory = true
    }
    try FileManager.default.createDirectory(atPath: options.workDirectory, withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: options.outDirectory, withIntermediateDirectories: true)
    defer { if madeWorkDirectory && !options.keepFiles { try? FileManager.default.removeItem(atPath: options.workDirectory) } }

    var selected = workloads.filter { w in options.only.isEmpty || options.only.contains { w.id.hasPrefix($0) } }
    // E2-E4 read the stores E1 makes.
    if !options.reuse, !selected.contains(where: { $0 == E1BulkInsert.self }),
       selected.contains(where: { [E2PointReads.id, E3RangeScan.id, E3FullScan.id, E4Reopen.id].contains($0.id) }) {
        selected.insert(E1BulkInsert.self, at: 0)
    }
    FileHandle.standardError.write(Data("""
        StrataBenchmarks: n=\(options.n) lookups=\(options.lookupCount) commits=\(options.commits) reps=\(options.repetitions) \
        work=\(options.workDirectory) syncs counted by perf: \(SyscallCounter.available ? "yes" : "no")\n
        """.utf8))
    let bench = Bench(options: options)
    let started = ContinuousClock.now
    for workload in selected {
        let t = ContinuousClock.now
        try workload.run(bench)
        FileHandle.standardError.write(Data("  \(workload.id) done in \(String(format: "%.1f", t.duration(to: .now).seconds)) s\n".utf8))
    }
    bench.closeAll()
    let summary = SummaryTable(bench: bench, totalSeconds: started.duration(to: .now).seconds)
    let markdown = summary.markdown()
    print("")
    print(markdown)
    let out = URL(fileURLWithPath: options.outDirectory)
    try markdown.write(to: out.appendingPathComponent("summary.md"), atomically: true, encoding: .utf8)
    try RatioChart(bench: bench).svg().write(to: out.appendingPathComponent("ratios.svg"), atomically: true, encoding: .utf8)
    try (bench.measurements.map(\.jsonLine).joined(separator: "\n") + "\n")
        .write(to: out.appendingPathComponent("results.jsonl"), atomically: true, encoding: .utf8)
    FileHandle.standardError.write(Data("wrote \(out.path)/summary.md, ratios.svg, results.jsonl\n".utf8))
}

do {
    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "child" {
        try runChild(Array(arguments.dropFirst()))
    } else if arguments.first == "profile" {
        try Profile.main(Array(arguments.dropFirst()))
    } else {
        try runAll(try Options.parse(arguments))
    }
} catch {
    FileHandle.standardError.write(Data("StrataBenchmarks: \(error)\n".utf8))
    exit(1)
}
