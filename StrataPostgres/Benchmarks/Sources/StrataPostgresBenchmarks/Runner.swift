import Foundation
import PostgresNIO

/// One system's measurement of one workload.
struct Measurement {
    var workload: String
    var system: String
    /// Operations the time covers (objects inserted, lookups, counts, pages, objects read...).
    var n: Int
    /// Seconds: the median of `runs` runs.
    var seconds: Double
    var runs: Int
    var rssGrowthKB: Int
    var anonGrowthKB: Int
    /// What the workload saw (count and digest), compared across systems.
    var outcome: Outcome

    var jsonLine: String {
        "{\"workload\": \"\(workload)\", \"system\": \"\(system)\", \"n\": \(n), \"seconds\": \(String(format: "%.6f", seconds)), "
            + "\"ops_per_sec\": \(Int((Double(n) / max(seconds, 1e-9)).rounded())), \"runs\": \(runs), "
            + "\"rss_growth_kb\": \(rssGrowthKB), \"anon_growth_kb\": \(anonGrowthKB), "
            + "\"count\": \(outcome.count), \"checksum\": \(outcome.checksum)}"
    }
}

/// Runs the workloads, three systems side by side on one server, and prints the table.
///
/// Every workload runs `repetitions` times, the systems taking turns, and the median is
/// reported. W1 runs first, each time on a freshly made table; W3, W4, W5 and W7 then read the
/// tables its last run filled; W9 deletes the unpublished from them (each table loaded again
/// between runs); W6 runs next, each time on a table loaded again (untimed), and W2, saves of one
/// object each, last. Before each write workload the server
/// checkpoints, and after each load it is VACUUM ANALYZEd, so no system pays for another's
/// dirty pages or finds a table without statistics.
@MainActor
final class Runner {
    let options: Options
    let data: Dataset
    let server: Server
    var results: [String: [String: Measurement]] = [:]
    var notes: [String] = []

    init(options: Options) throws {
        self.options = options
        data = Dataset(seed: options.seed)
        server = try Server(options.url)
    }

    func run() async throws {
        let admin = try await server.connect()
        var systems: [any BenchSystem] = []
        for name in ["strata", "nio", "fluent"] where options.systems.isEmpty || options.systems.contains(name) {
            switch name {
            case "strata": systems.append(StrataSystem(server: server))
            case "nio": systems.append(NIOSystem(server: server))
            default: systems.append(try FluentSystem(server: server))
            }
        }
        let version = try await admin.text("SHOW server_version")
        log("PostgreSQL \(version) at \(server.host):\(server.port); n = \(options.n); systems: \(systems.map(\.name).joined(separator: ", "))")
        let started = ContinuousClock.now
        do {
            try await workloads(systems, admin: admin)
        } catch {
            for s in systems { await s.close() }
            try? await admin.close()
            throw error
        }
        for s in systems { await s.close() }
        try? await admin.close()
        log("total time \(String(format: "%.1f", started.duration(to: .now).seconds)) s")
        let table = self.table(systems: systems.map(\.name), server: "PostgreSQL \(version)")
        print(table)
        if let out = options.out { try table.write(toFile: out, atomically: true, encoding: .utf8) }
    }

    private func log(_ text: String) {
        FileHandle.standardError.write(Data("[pgbench] \(text)\n".utf8))
    }

    private func workloads(_ systems: [any BenchSystem], admin: PostgresConnection) async throws {
        let n = options.n
        // W1, or the same rows loaded untimed: the others work on its tables. W1 runs
        // `repetitions` times, each on a fresh table, the systems taking turns (one run of each
        // swung from 0.49x to 0.87x between three runs of the benchmark); the last run's tables stay.
        if options.runs("W1") {
            let ms = try await turns("W1", systems, ops: { $0.count }, before: { s, _ in
                try await s.reset()
                try await admin.run("CHECKPOINT")
            }) { s in
                let section = Section.begin()
                try await s.insert(n, data: self.data)
                let elapsed = section.end()
                return (Outcome(count: try await s.total()), elapsed)
            }
            for m in ms { record(m) }
        } else {
            for s in systems {
                try await s.reset()
                log("\(s.name): loading \(n) (untimed)")
                try await s.load(n, data: data, saveSize: options.strataLoadSave)
            }
        }
        for s in systems {
            let total = try await s.total()
            guard total == n else { throw BenchError("W1: \(s.name) holds \(total) courses, not \(n)") }
        }
        try await admin.run("VACUUM ANALYZE")

        let ids = data.randomIndexes(options.lookups, below: n, salt: 0x3003).map(data.id)
        let x = 2400.0
        let limit = 50, offset = min(1000, n - limit)
        let reads: [(String, Int, @MainActor (any BenchSystem) async throws -> Outcome)] = [
            ("W3", ids.count, { try await $0.pointFetch(ids) }),
            ("W4", options.counts, { try await $0.count(above: x, times: self.options.counts) }),
            ("W5", options.pages, { try await $0.page(limit: limit, offset: offset, pages: self.options.pages) }),
            ("W7", n, { try await $0.enumerateAll(batchSize: self.options.batchSize) }),
        ]
        for (id, ops, body) in reads where options.runs(id) {
            for m in try await turns(id, systems, ops: { _ in ops }, body) { record(m) }
        }

        var reloaded = false
        if options.runs("W9") {
            // Each run after the first on its table loaded again (untimed): one run swung by a
            // third between runs of the whole benchmark.
            let ms = try await turns("W9", systems, ops: { $0.count }, before: { s, run in
                guard run > 0 else { return }
                self.log("W9 \(s.name): loading \(n) again (untimed)")
                try await s.reset()
                try await s.load(n, data: self.data, saveSize: self.options.strataLoadSave)
                try await admin.run("VACUUM ANALYZE")
            }) { s in
                try await admin.run("CHECKPOINT")
                let section = Section.begin()
                try await s.deleteUnpublished()
                let elapsed = section.end()
                return (Outcome(count: n - (try await s.total())), elapsed)
            }
            for m in ms { record(m) }
            reloaded = true
        }
        if options.runs("W6") {
            // Each run on a table loaded anew (untimed), the systems taking turns.
            let expected = n + (n - n / 2)
            let ms = try await turns("W6", systems, ops: { _ in n }, before: { s, run in
                guard run > 0 || reloaded else { return }
                self.log("W6 \(s.name): loading \(n) again (untimed)")
                try await s.reset()
                try await s.load(n, data: self.data, saveSize: self.options.strataLoadSave)
                try await admin.run("VACUUM ANALYZE")
            }) { s in
                try await admin.run("CHECKPOINT")
                let section = Section.begin()
                try await s.upsert(n, data: self.data)
                let elapsed = section.end()
                let total = try await s.total()
                guard total == expected else { throw BenchError("W6: \(s.name) holds \(total) courses after the upsert, not \(expected)") }
                return (Outcome(count: total), elapsed)
            }
            for m in ms { record(m) }
        }
        if options.runs("W2") {
            // Saves of one object each, on the table the workloads before left (each run new
            // courses, past those W6 adds): a save's round trips and its commit.
            let saves = options.saves
            var next = [String: Int]()
            let ms = try await turns("W2", systems, ops: { $0.count }, before: { _, _ in
                try await admin.run("CHECKPOINT")
            }) { s in
                let first = 3 * n + (next[s.name] ?? 0)
                next[s.name, default: 0] += saves
                let section = Section.begin()
                try await s.saveEach(first..<(first + saves), data: self.data)
                return (Outcome(count: saves), section.end())
            }
            for m in ms { record(m) }
        }
    }

    /// `options.repetitions` runs of one workload, the systems taking turns (each run starting
    /// with the next); per system the median time, the largest memory growth, and the outcome,
    /// which must be the same in every run. `before` runs untimed ahead of each system's run;
    /// `body` times itself when it returns its section (W9 counts what it deleted after the
    /// clock stopped), else the whole call is timed. `ops`: the operations, from the outcome.
    private func turns(_ id: String, _ systems: [any BenchSystem], ops: (Outcome) -> Int,
                       before: @MainActor (any BenchSystem, Int) async throws -> Void = { _, _ in },
                       _ body: @MainActor (any BenchSystem) async throws -> (Outcome, Section.Result)) async throws -> [Measurement] {
        var times: [String: [Double]] = [:], rss: [String: Int] = [:], anon: [String: Int] = [:], outcomes: [String: Outcome] = [:]
        for run in 0..<options.repetitions {
            for k in 0..<systems.count {
                let s = systems[(k + run) % systems.count]
                try await before(s, run)
                log("\(id) \(s.name): run \(run + 1) of \(options.repetitions)")
                let (outcome, r) = try await body(s)
                log(String(format: "%@ %@: run %d took %.1f ms", id, s.name, run + 1, r.seconds * 1000))
                times[s.name, default: []].append(r.seconds)
                rss[s.name] = max(rss[s.name] ?? 0, r.rssGrowthKB)
                anon[s.name] = max(anon[s.name] ?? 0, r.anonGrowthKB)
                if let earlier = outcomes[s.name], earlier != outcome {
                    throw BenchError("\(id): \(s.name) saw \(outcome) in run \(run + 1), \(earlier) before")
                }
                outcomes[s.name] = outcome
            }
        }
        return systems.map { s in
            Measurement(workload: id, system: s.name, n: ops(outcomes[s.name]!), seconds: median(times[s.name]!), runs: options.repetitions,
                        rssGrowthKB: rss[s.name]!, anonGrowthKB: anon[s.name]!, outcome: outcomes[s.name]!)
        }
    }

    /// `turns` of a body timed whole.
    private func turns(_ id: String, _ systems: [any BenchSystem], ops: (Outcome) -> Int,
                       _ body: @MainActor @escaping (any BenchSystem) async throws -> Outcome) async throws -> [Measurement] {
        try await turns(id, systems, ops: ops) { s in
            let section = Section.begin()
            let outcome = try await body(s)
            return (outcome, section.end())
        }
    }

    private func record(_ m: Measurement) {
        print(m.jsonLine)
        results[m.workload, default: [:]][m.system] = m
    }

    static let titles: [String: String] = [
        "W1": "bulk insert n, one save/transaction",
        "W2": "saves of one object each",
        "W3": "point fetch by unique id",
        "W4": "count duration > x && isPublished ×20",
        "W5": "page of 50 by createdAt desc, offset 1000 ×200",
        "W6": "upsert n by id, half stored, one save",
        "W7": "enumerate all, every field",
        "W9": "delete all unpublished, one save",
    ]

    func table(systems: [String], server: String) -> String {
        func secs(_ m: Measurement?) -> String {
            guard let m else { return "-" }
            return m.seconds >= 10 ? String(format: "%.1f s", m.seconds) : m.seconds >= 1 ? String(format: "%.2f s", m.seconds)
                : String(format: "%.1f ms", m.seconds * 1000)
        }
        func ratio(_ a: Measurement?, _ b: Measurement?, goal: Double) -> String {
            guard let a, let b, b.seconds > 0 else { return "-" }
            let r = a.seconds / b.seconds
            return String(format: r < 0.1 ? "%.3fx" : "%.2fx", r) + (r >= goal ? "" : " ✗")
        }
        func mib(_ kb: Int?) -> String { kb.map { String(format: "%.0f", Double($0) / 1024) } ?? "-" }
        let date = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withFullDate])
        var lines: [String] = []
        lines.append("StrataPostgres benchmarks, \(date), \(server), n = \(options.n), W3 lookups = \(options.lookups), "
            + "median of \(options.repetitions) runs, the systems taking turns"
            + (options.strataLoadSave.map { "; untimed loads of Strata's table in saves of \($0)" } ?? ""))
        lines.append("speed = other's time ÷ Strata's time (higher is better for Strata); goals: ≥ 0.8x nio, ≥ 1x Fluent (✗: missed)")
        lines.append("")
        lines.append("| workload | ops | strata | nio | fluent | strata vs nio | strata vs fluent | RSS growth MiB s/n/f | RssAnon growth MiB s/n/f | same result |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for id in Options.allWorkloads {
            guard let row = results[id] else { continue }
            let s = row["strata"], n = row["nio"], f = row["fluent"]
            let outcomes = Set(row.values.map { "\($0.outcome.count)/\($0.outcome.checksum)" })
            let ops = row.values.first?.n ?? 0
            lines.append("| \(id) \(Self.titles[id] ?? "") | \(ops) | \(secs(s)) | \(secs(n)) | \(secs(f)) | \(ratio(n, s, goal: 0.8)) | "
                + "\(ratio(f, s, goal: 1)) | \(mib(s?.rssGrowthKB))/\(mib(n?.rssGrowthKB))/\(mib(f?.rssGrowthKB)) | "
                + "\(mib(s?.anonGrowthKB))/\(mib(n?.anonGrowthKB))/\(mib(f?.anonGrowthKB)) | \(outcomes.count == 1 ? "yes" : "NO") |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension PostgresConnection {
    func text(_ sql: String) async throws -> String {
        let rows = try await query(PostgresQuery(unsafeSQL: sql), logger: Server.logger)
        var value = ""
        for try await row in rows { value = try row.decode(String.self) }
        return value
    }
}
