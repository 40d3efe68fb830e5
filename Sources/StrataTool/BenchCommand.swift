import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata bench`: the engine- and object-level workloads of Benchmarks/ (without the SQLite
/// peer) at a chosen size, one JSON line per workload and level.
struct BenchCommand: Command {
    static let name = "bench"
    static let summary = "time bulk insert, point fetch, count, sorted page and enumerate; print JSON lines"
    static let help = """
        usage: strata bench [--n N] [--path DIR]

        Runs each workload twice, on StrataEngine directly (hand-encoded records) and on
        Strata objects through ModelContext, over N courses (the record of Benchmarks/):
          W1 bulk_insert     insert N courses in one transaction / one save()
          W3 point_fetch     fetch courses by their unique id, in random order (warm)
          W4 count_where     count duration > 90 && isPublished (no index; about 18% match)
          W5 sorted_page     a page of 50, newest first by the createdAt index, offset 1000
          W7 enumerate       visit every course, reading each field
        Prints one JSON line per workload and level: "workload", "id", "system", "n", "ops",
        "seconds", "ops_per_sec", "us_per_op", the store's "fsyncs", "bytes_written" and
        "pages_read" during the workload, and the process's "peak_rss_kb" so far. Measure a
        release build (`swift run -c release strata bench`); the comparison with SQLite is in
        Benchmarks/.

        options:
          --n N        courses (default: 10000)
          --path DIR   keep the two stores in DIR (engine.store, objects.store), replacing
                       earlier ones (default: a temporary folder, removed afterwards)
        """

    var n = 10_000
    var folder: String?

    init(arguments: inout Arguments) throws {
        if let value = try arguments.integer("--n", in: 1...100_000_000) { n = value }
        folder = try arguments.value("--path")
    }

    func run() throws -> ExitStatus {
        #if DEBUG
        printError("strata bench: this is a debug build; for meaningful numbers run `swift run -c release strata bench`")
        #endif
        let fm = FileManager.default
        let directory = folder.map { URL(fileURLWithPath: $0) }
            ?? fm.temporaryDirectory.appendingPathComponent("strata-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if folder == nil { try? fm.removeItem(at: directory) } }
        let enginePath = directory.appendingPathComponent("engine.store").path
        let objectsPath = directory.appendingPathComponent("objects.store").path
        for path in [enginePath, objectsPath] {
            try? fm.removeItem(atPath: path)
            try? fm.removeItem(atPath: path + ".blobs")
        }

        let data = BenchData(n: n)
        let plan = BenchPlan(n: n)
        try EngineBench.run(path: enginePath, data: data, plan: plan) { Output.standard.json($0); Output.standard.flush() }
        try ObjectBench.run(path: objectsPath, data: data, plan: plan) { Output.standard.json($0); Output.standard.flush() }
        return .success
    }
}

/// How much each workload does for a given n.
struct BenchPlan {
    let n: Int
    var lookups: Int { min(n, 100_000) }
    var countRepetitions: Int { 10 }
    var pageRepetitions: Int { 100 }
    var pageOffset: Int { min(1000, n / 2) }
    let pageSize = 50
    /// `duration > threshold && isPublished` matches about 18% of the courses.
    let durationThreshold = 90.0
}

/// The courses of a run: the same values for both levels, from a fixed seed.
struct BenchData {
    struct Values {
        let id: UUID
        let title: String
        let summary: String
        let duration: Double
        let createdAt: Date
        let isPublished: Bool
        let tags: [String]
        let authorID: Int?
    }

    let courses: [Values]
    /// Ids to look up, in random order.
    let probes: [UUID]

    init(n: Int) {
        var random = SeededRandom(seed: 0x5EED)
        let topics = ["Swift", "Linux", "Storage", "B-trees", "Concurrency", "Testing", "Networking", "Café culture"]
        let base = Date(timeIntervalSinceReferenceDate: 780_000_000)
        let courses = (0..<n).map { i in
            let topic = topics[i % topics.count]
            return Values(id: UUID(uuid: random.uuidBytes()), title: "\(topic) course \(i)",
                          summary: "A course about \(topic), with exercises, notes and a short test at the end of each part.",
                          duration: Double(i % 240) / 2, createdAt: base.addingTimeInterval(Double(random.next() % 100_000_000)),
                          isPublished: i % 4 != 0, tags: (0..<(2 + i % 3)).map { "tag\(($0 + i) % 12)" },
                          authorID: i % 5 == 0 ? nil : i % 100)
        }
        self.courses = courses
        probes = (0..<BenchPlan(n: n).lookups).map { _ in courses[Int(random.next() % UInt64(n))].id }
    }
}

/// SplitMix64: repeatable numbers, so every run measures the same data.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func uuidBytes() -> uuid_t {
        let a = next(), b = next()
        func byte(_ v: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: v >> (8 * i)) }
        return (byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6) & 0x0F | 0x40, byte(a, 7),
                byte(b, 0) & 0x3F | 0x80, byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7))
    }
}

/// Times one workload and makes its JSON line.
struct BenchMeasurement {
    let workload: String
    let id: String
    let system: String
    let n: Int

    func run(ops: Int, store: Store, _ body: () throws -> [(String, JSONValue)]) rethrows -> JSONValue {
        let before = store.statistics
        let start = DispatchTime.now().uptimeNanoseconds
        let extra = try body()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let after = store.statistics
        return .object([
            ("workload", .string(workload)), ("id", .string(id)), ("system", .string(system)), ("n", .integer(Int64(n))),
            ("ops", .integer(Int64(ops))), ("seconds", .double(rounded(seconds, 6))),
            ("ops_per_sec", .double(seconds > 0 ? rounded(Double(ops) / seconds, 0) : 0)),
            ("us_per_op", .double(ops > 0 ? rounded(seconds * 1e6 / Double(ops), 3) : 0)),
            ("fsyncs", .integer(Int64(after.syncs - before.syncs))),
            ("bytes_written", .integer(Int64(after.bytesWritten - before.bytesWritten))),
            ("pages_read", .integer(Int64(after.pagesRead - before.pagesRead))),
            ("peak_rss_kb", .integer(Int64(BenchMeasurement.peakResidentKilobytes()))),
            ("build", .string(BenchMeasurement.build)),
        ] + extra)
    }

    private func rounded(_ x: Double, _ digits: Int) -> Double {
        let scale = pow(10.0, Double(digits))
        return (x * scale).rounded() / scale
    }

    static var build: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    /// The process's peak resident memory (`VmHWM` in /proc/self/status), 0 where there is none.
    static func peakResidentKilobytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}
