import Foundation

/// The summary of a run as markdown: times with Strata's speed relative to each peer, then
/// the resources each system used.
struct SummaryTable {
    let bench: Bench
    let totalSeconds: Double

    /// Workload ids in the order they ran.
    var workloadIDs: [String] {
        var seen: [String] = []
        for m in bench.measurements where !seen.contains(m.workload) { seen.append(m.workload) }
        return seen
    }

    func measurement(_ workload: String, _ system: System) -> Measurement? {
        bench.measurements.first { $0.workload == workload && $0.system == system.rawValue }
    }

    /// How many times faster Strata is than `peer` on a workload (above 1: Strata is faster).
    /// A measurement with a `score` (higher is better, such as 1 / bytes per object) is compared by it.
    /// The "bare" column takes the bare fsync loop or, for W10, dd.
    func speedup(_ workload: String, over peer: System) -> Double? {
        guard let s = measurement(workload, .strataEngine) ?? measurement(workload, .strata),
              let p = measurement(workload, peer) ?? (peer == .bareFsync ? measurement(workload, .dd) : nil) else { return nil }
        if let a = s["score"]?.doubleValue, let b = p["score"]?.doubleValue { return a > 0 && b > 0 ? a / b : nil }
        guard s.seconds > 0, p.seconds > 0 else { return nil }
        return s.opsPerSecond / p.opsPerSecond
    }

    /// How the binary was built: figures are judged only from a release build (a debug build is
    /// CI's smoke run, `STRATA_BENCH_BUILD=debug`).
    #if DEBUG
    static let build = "debug build (a smoke run: its times mean nothing)"
    #else
    static let build = "release build"
    #endif

    func markdown() -> String {
        let o = bench.options
        var lines: [String] = []
        lines.append("# Strata vs GRDB (SQLite): engine- and object-level benchmarks")
        lines.append("")
        lines.append("\(Date().formatted(.iso8601)) · \(Machine.description) · \(Self.build) · "
                     + "n = \(Format.count(o.n)), lookups = \(Format.count(o.lookupCount)), commits = \(Format.count(o.commits)), "
                     + "repetitions = \(o.repetitions) · whole run \(Format.time(totalSeconds))")
        lines.append("")
        lines.append("Load average (1 min) at the start: \(bench.loadAtStart), at the end: \(Machine.loadAverage). "
                     + "Other work on the machine shows up as noise; min and max per workload are in results.jsonl.")
        lines.append("")
        lines.append("Speed columns: operations per second (time for all n). **×** columns: Strata's throughput divided by the peer's; above 1× Strata is faster.")
        lines.append("")
        let systems = System.allCases.filter { s in bench.measurements.contains { $0.system == s.rawValue } }
        var header = "| workload | n | " + systems.map(\.rawValue).joined(separator: " | ")
        header += " | Strata ÷ GRDB | Strata ÷ GRDB tuned | Strata ÷ bare fsync / dd |"
        lines.append(header)
        lines.append("|" + String(repeating: " --- |", count: 2) + String(repeating: " ---: |", count: systems.count + 3))
        for w in workloadIDs {
            var cells = ["**\(w)** \(bench.titles[w] ?? "")"]
            let n = bench.measurements.first { $0.workload == w }?.n ?? 0
            cells.append(Format.count(n))
            for s in systems {
                guard let m = measurement(w, s) else { cells.append("–"); continue }
                if case .string(let shown)? = m["shown"] { cells.append(shown); continue }
                cells.append(m.n == 1 ? Format.time(m.seconds) : "\(Format.rate(m.opsPerSecond)) (\(Format.time(m.seconds)))")
            }
            for peer in [System.grdb, .grdbTuned, .bareFsync] {
                cells.append(speedup(w, over: peer).map { "**\(Format.ratio($0))**" } ?? "–")
            }
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append("## Resources")
        lines.append("")
        lines.append("Peak RSS is the process's VmHWM during the workload (E1, E4, E5 run each system in a fresh process; "
                     + "E2, E3 run in one process with all three stores open, so *growth* over the RSS at the start is the number to compare). "
                     + "Peak anon is the highest RssAnon (anonymous memory: what the process allocated, not pages of files it maps, "
                     + "which are the kernel's cache) sampled every 2 ms during the workload; anon growth is it less RssAnon at the start. "
                     + "Bytes written: bytes passed to write calls during the timed part (/proc/self/io). "
                     + "fsyncs: fsync + fdatasync calls in the timed part, counted by `perf stat`.")
        lines.append("")
        lines.append("| workload | system | time | peak RSS | RSS growth | peak anon | anon growth | file size | bytes written | fsyncs | write calls | notes |")
        lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for w in workloadIDs {
            for m in bench.measurements where m.workload == w {
                let growth = m["rss_growth_kb"]?.doubleValue ?? m["rss_before_kb"]?.doubleValue.map { Double(m.peakRSSKB ?? 0) - $0 }
                var notes: [String] = []
                if case .string(let same)? = m["same_result"], same != "yes" { notes.append("**different result**") }
                if let s = m["engine_syncs"]?.doubleValue { notes.append("engine syncs \(Int(s))") }
                if let p = m["process_seconds"]?.doubleValue { notes.append("process wall \(Format.time(p))") }
                if let open = m["open_seconds"]?.doubleValue, let fetch = m["fetch_seconds"]?.doubleValue {
                    let predicate = m["predicate_seconds"]?.doubleValue.map { " (its #Predicate \(Format.time($0)))" } ?? ""
                    notes.append("open \(Format.time(open)) + fetch \(Format.time(fetch))\(predicate)")
                }
                if let per = m["micros_per_op"]?.doubleValue { notes.append(String(format: "%.0f µs/commit", per)) }
                if let p50 = m["p50_us"]?.doubleValue, let p99 = m["p99_us"]?.doubleValue {
                    notes.append(String(format: "p50 %.0f µs, p99 %.0f µs", p50, p99))
                }
                if let b = m["bytes_per_record"]?.doubleValue { notes.append("\(Int(b)) B/record") }
                if let objects = m["rss_after_objects_kb"]?.doubleValue, let peak = m.peakRSSKB {
                    notes.append("save's peak beyond the objects \(Format.kilobytes(peak - Int(objects)))")
                }
                if let r = m["record_bytes"]?.doubleValue, let t = m["tree_bytes"]?.doubleValue {
                    notes.append("records \(Format.bytes(Int(r))) + tree \(Format.bytes(Int(t)))")
                }
                if let w = m["wal_bytes"]?.doubleValue { notes.append("WAL before checkpoint \(Format.bytes(Int(w)))") }
                if let p = m["pages_read"]?.doubleValue, m.n > 0 {
                    notes.append(String(format: "%.2f pages read/op", p / Double(m.n)))
                }
                if let b = m["blocks_read"]?.doubleValue, m.n > 0 {
                    notes.append(String(format: "%.2f 32 KiB blocks read/op", b / Double(m.n)))
                }
                if let b = m["bytes_per_commit"]?.doubleValue { notes.append("\(Format.bytes(Int(b)))/commit") }
                if let f = m["fsyncs_per_op"]?.doubleValue { notes.append(String(format: "%.2f fsyncs/op", f)) }
                if let mbs = m["mb_per_sec"]?.doubleValue { notes.append(String(format: "%.0f MB/s", mbs)) }
                if let d = m["deleted"]?.doubleValue, let of = m["of_records"]?.doubleValue { notes.append("deleted \(Format.count(Int(d))) of \(Format.count(Int(of)))") }
                if let note = m["note"], case .string(let text) = note { notes.append(text) }
                let peakAnon: String = m["peak_anon_kb"]?.doubleValue.map { Format.kilobytes(Int($0)) } ?? "–"
                var anonGrowthKB: Double? = m["anon_growth_kb"]?.doubleValue
                if anonGrowthKB == nil, let before = m["anon_before_kb"]?.doubleValue, let peak = m["peak_anon_kb"]?.doubleValue { anonGrowthKB = peak - before }
                let anonGrowth: String = anonGrowthKB.map { Format.kilobytes(Int($0)) } ?? "–"
                let cells: [String] = [
                    w, m.system, Format.time(m.seconds),
                    m.peakRSSKB.map(Format.kilobytes) ?? "–",
                    growth.map { Format.kilobytes(Int($0)) } ?? "–",
                    peakAnon,
                    anonGrowth,
                    m.bytes.map(Format.bytes) ?? "–",
                    m["bytes_written"]?.doubleValue.map { Format.bytes(Int($0)) } ?? "–",
                    m["fsyncs"]?.doubleValue.map { Format.count(Int($0)) } ?? "–",
                    m["write_calls"]?.doubleValue.map { Format.count(Int($0)) } ?? "–",
                    notes.joined(separator: "; "),
                ]
                lines.append("| " + cells.joined(separator: " | ") + " |")
            }
        }
        lines.append("")
        lines.append("Systems: **strata-engine** is StrataEngine used directly (hand-written binary record, a unique index on id and a "
                     + "non-unique index on createdAt, default options: 16 MiB write budget, durability full). **grdb** is GRDB 7.10.0 the idiomatic way "
                     + "(Codable record, query interface, SQLite's defaults); **grdb-tuned** uses cached prepared statements, `Row` access, createdAt as REAL "
                     + "and a 32 MiB page cache (`cache_size`, StrataEngine's default cache budget). "
                     + "Both GRDB: DatabaseQueue, WAL, synchronous=NORMAL for bulk work and FULL for E5 (set on the open connection and read back). "
                     + "**bare-fsync** is a loop of 4 KiB pwrite appends each followed by fdatasync: the floor this disk sets for a durable commit.")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// What machine this is, in one line.
enum Machine {
    static let description: String = {
        var cpu = "unknown CPU"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let name = line.split(separator: ":", maxSplits: 1).last {
            cpu = name.trimmingCharacters(in: .whitespaces)
        }
        var uts = utsname()
        uname(&uts)
        let kernel = withUnsafeBytes(of: uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), Linux \(kernel)"
    }()

    /// The 1-minute load average.
    static var loadAverage: String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").first).map(String.init) ?? "?"
    }
}
