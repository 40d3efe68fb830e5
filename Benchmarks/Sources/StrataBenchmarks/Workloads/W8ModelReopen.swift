import Foundation

/// W8 with `@Model` classes (StrataData's macros), beside the macro-free W8: a fresh process
/// opens the W8 store and fetches one `Course` by id. Also W8 with a 20-model schema (its own
/// store of the same `Course` and 19 other models), since schema discovery's cost grew with
/// the types a process has. The child is StrataData's `StrataModelReopen` executable (the
/// macros need swift-syntax, which this package does not build): `run.sh` builds it in release
/// and names it in `STRATA_BENCH_MODEL_REOPEN`; without it (`--quick`, CI) these are skipped.
/// grdb-tuned is the same as in W8 (one table; SQLite's open does not depend on Swift types).
enum W8ModelReopen: Workload {
    static let id = "W8-model-reopen-fetch"
    static let title = "fresh process, @Model class: open store + fetch one by id · target ≥ 2x GRDB (≤ 1 ms)"
    static let twentyID = "W8-model20-reopen-fetch"
    static let twentyTitle = "fresh process, 20 @Model classes: open store + fetch one by id"
    static let variable = "STRATA_BENCH_MODEL_REOPEN"

    static func run(_ bench: Bench) throws {
        guard let program = getenv(variable).map({ String(cString: $0) }), !program.isEmpty else {
            FileHandle.standardError.write(Data("\(id): skipped (\(variable) names no StrataModelReopen; Benchmarks/run.sh builds it unless --quick)\n".utf8))
            return
        }
        try ObjectStores.ensure(bench)
        ObjectStores.closeAll()
        let n = bench.options.objectCount
        let key = bench.data.id(n / 2)
        // Each workload's children in turn, round after round (`interleavedMedians`): Strata's
        // child, then grdb-tuned's W8 child, which stands beside both workloads (SQLite's open
        // does not depend on Swift types; its measurement is reported under their names).
        var entries: [(workload: String, title: String, renamed: Bool, child: () throws -> ChildProcess.Result)] = []
        let grdbArguments = bench.includes(.grdbTuned)
            ? [W8ObjectReopen.id] + ChildArguments.make(["system": System.grdbTuned.rawValue, "path": ObjectStores.path(bench, .grdbTuned), "key": key.uuidString])
            : nil
        func add(_ workload: String, _ title: String, strata: (() throws -> ChildProcess.Result)?) {
            if let strata { entries.append((workload, title, false, strata)) }
            if let grdbArguments { entries.append((workload, title, true, { try ChildProcess.run(grdbArguments) })) }
        }
        if bench.includes(.strata) {
            let path = ObjectStores.path(bench, .strata)
            add(id, title) { try ChildProcess.run(["open", path, key.uuidString, id], program: program) }
            // The 20-model store: made once by the child (its models), with as many courses.
            let twenty = bench.options.workDirectory + "/objects-20-models.strata"
            let made = try ChildProcess.run(["make-twenty", twenty, String(n)], program: program)
            guard let twentyKey = made.output.split(separator: "\n").last.map(String.init), UUID(uuidString: twentyKey) != nil else {
                throw BenchError("\(twentyID): make-twenty printed no key")
            }
            add(twentyID, twentyTitle) { try ChildProcess.run(["open-twenty", twenty, twentyKey, twentyID], program: program) }
        } else {
            add(id, title, strata: nil)
            add(twentyID, twentyTitle, strata: nil)
        }
        guard !entries.isEmpty else { return }
        let medians = try ChildProcess.interleavedMedians(id, bench.options.freshProcessRepetitions, of: n, entries.map(\.child))
        for (m, entry) in zip(medians, entries) {
            var m = m
            if entry.renamed { m.workload = entry.workload }
            bench.report(m, title: entry.title)
        }
    }
}
