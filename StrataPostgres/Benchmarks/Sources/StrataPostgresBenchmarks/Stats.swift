import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// glibc's malloc_trim, which Swift's Glibc module does not export.
@_silgen_name("malloc_trim")
private func trimMalloc(_ pad: Int) -> Int32

/// What the kernel says about this process's memory.
enum ProcessStats {
    /// Current and peak resident set in KiB (VmRSS and VmHWM of /proc/self/status).
    static func memory() -> (rssKB: Int, peakKB: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        var rss = 0, peak = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("VmRSS:") { rss = kilobytes(line) }
            if line.hasPrefix("VmHWM:") { peak = kilobytes(line) }
        }
        return (rss, peak)
    }

    /// Resident anonymous memory in KiB (RssAnon, from /proc/self/statm: resident minus shared).
    static func anonKB() -> Int {
        let fd = Glibc.open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { Glibc.close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let n = buffer.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return 0 }
        let fields = buffer[0..<n].split(separator: UInt8(ascii: " ")).prefix(3).map { Int(String(decoding: $0, as: UTF8.self)) ?? 0 }
        guard fields.count == 3 else { return 0 }
        return (fields[1] - fields[2]) * pageKB
    }

    static let pageKB = Int(sysconf(Int32(_SC_PAGESIZE))) / 1024

    private static func kilobytes(_ line: Substring) -> Int {
        Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Returns freed memory to the kernel and starts a new peak (VmHWM) from the current RSS.
    static func startPeak() {
        _ = trimMalloc(0)
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
    }
}

/// The peak of RssAnon while a section runs, sampled every 2 ms by a thread of its own (the
/// kernel keeps a peak of the whole resident set only).
final class AnonSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init() {
        peak = ProcessStats.anonKB()
        Thread {
            while true {
                let now = ProcessStats.anonKB()
                let stop = self.lock.withLock { () -> Bool in
                    self.peak = max(self.peak, now)
                    return self.stopped
                }
                if stop { break }
                usleep(2000)
            }
            self.done.signal()
        }.start()
    }

    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { max(peak, ProcessStats.anonKB()) }
    }
}

/// One timed section: wall time, and how far the resident set (and its anonymous part) grew
/// above where it began.
struct Section {
    let rssBeforeKB: Int
    let anonBeforeKB: Int
    let start: ContinuousClock.Instant
    let sampler: AnonSampler

    struct Result {
        var seconds: Double
        /// Peak RSS (VmHWM) minus RSS at the start, KiB.
        var rssGrowthKB: Int
        /// Peak RssAnon (sampled) minus RssAnon at the start, KiB.
        var anonGrowthKB: Int
        var peakRSSKB: Int
    }

    static func begin() -> Section {
        ProcessStats.startPeak()
        let rss = ProcessStats.memory().rssKB
        let anon = ProcessStats.anonKB()
        let sampler = AnonSampler()
        return Section(rssBeforeKB: rss, anonBeforeKB: anon, start: .now, sampler: sampler)
    }

    func end() -> Result {
        let elapsed = start.duration(to: .now)
        let peakAnon = sampler.stop()
        let peak = ProcessStats.memory().peakKB
        return Result(seconds: elapsed.seconds, rssGrowthKB: max(0, peak - rssBeforeKB), anonGrowthKB: max(0, peakAnon - anonBeforeKB),
                      peakRSSKB: peak)
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}

func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// What a read workload saw: how many objects (or the counts summed) and a digest of their
/// fields, compared across the three systems.
struct Outcome: Equatable, Sendable {
    var count = 0
    var checksum = 0

    mutating func add(_ c: Course) {
        count += 1
        checksum &+= c.checksum
    }
}
