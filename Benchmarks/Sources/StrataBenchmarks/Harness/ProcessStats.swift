import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the kernel says about this process: resident memory, its peak, and bytes written.
/// glibc's malloc_trim, which Swift's Glibc module does not export.
@_silgen_name("malloc_trim")
private func trimMalloc(_ pad: Int) -> Int32

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

    /// Resident anonymous memory in KiB (RssAnon: resident minus file-backed and shared pages,
    /// from /proc/self/statm). Pages of a mapped file are the kernel's cache and not counted.
    /// Read with one pread, so that sampling it often costs little.
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

    /// Page faults so far that needed no disk read (getrusage's ru_minflt): the first touch of
    /// each page of code, heap or a mapped file a process makes.
    static func minorFaults() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_minflt)
    }

    /// The process's lifetime peak resident set in KiB (getrusage's ru_maxrss). Never reset.
    static func lifetimePeakKB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
    }

    /// Returns freed memory to the kernel and starts a new peak (VmHWM) from the current RSS,
    /// so that the next `memory().peakKB` is the peak of what follows.
    static func startPeak() {
        _ = trimMalloc(0)
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            handle.write(Data("5".utf8))
            try? handle.close()
        }
    }

    /// Bytes passed to write-like system calls so far (`wchar` of /proc/self/io) and their count.
    static func written() -> (bytes: Int, calls: Int) {
        guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return (0, 0) }
        var bytes = 0, calls = 0
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":")
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
            if parts[0] == "wchar" { bytes = value }
            if parts[0] == "syscw" { calls = value }
        }
        return (bytes, calls)
    }

    /// The size of a file in bytes (0 if it does not exist).
    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}

/// The peak of RssAnon while a section runs: the kernel keeps a peak of the whole resident
/// set (VmHWM) but not of its anonymous part, so a thread samples it every 2 ms.
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

    /// Stops sampling; returns the peak seen (with one last sample).
    func stop() -> Int {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { max(peak, ProcessStats.anonKB()) }
    }
}

/// Measures one timed section: wall time, peak RSS and RssAnon, bytes written, and (under
/// `perf`) syncs.
struct Section {
    let rssBeforeKB: Int
    let anonBeforeKB: Int
    private let start: ContinuousClock.Instant
    private let written: (bytes: Int, calls: Int)
    private let sampler: AnonSampler?

    /// Starts a section: a fresh peak, counters on. `samplingAnon` false: no thread samples
    /// RssAnon, and its peak is the larger of the values at the start and the end. For the
    /// fresh-process workloads of a millisecond or two (E4, W8): the sampler's thread started,
    /// and its read of `/proc`, beside the open it times (which maps files: `/proc` reads and
    /// `mmap` take the same lock) made the timed part slower, and more for a store opened
    /// through a mapping than for one read with `pread`.
    static func begin(samplingAnon: Bool = true) -> Section {
        ProcessStats.startPeak()
        let rss = ProcessStats.memory().rssKB
        let anon = ProcessStats.anonKB()
        let sampler = samplingAnon ? AnonSampler() : nil
        SyscallCounter.enable()
        return Section(rssBeforeKB: rss, anonBeforeKB: anon, start: .now, written: ProcessStats.written(), sampler: sampler)
    }

    private init(rssBeforeKB: Int, anonBeforeKB: Int, start: ContinuousClock.Instant, written: (bytes: Int, calls: Int), sampler: AnonSampler?) {
        self.rssBeforeKB = rssBeforeKB
        self.anonBeforeKB = anonBeforeKB
        self.start = start
        self.written = written
        self.sampler = sampler
    }

    struct Result {
        let seconds: Double
        let peakKB: Int
        let rssBeforeKB: Int
        let bytesWritten: Int
        let writeCalls: Int
        /// The peak of RssAnon during the section (sampled), and RssAnon when it began.
        let peakAnonKB: Int
        let anonBeforeKB: Int

        /// What a measurement reports of memory beside the peak RSS.
        var memoryExtras: [(String, JSONValue)] {
            [("peak_anon_kb", .int(peakAnonKB)), ("anon_before_kb", .int(anonBeforeKB))]
        }
    }

    /// Ends the section (counters off) and returns what it measured.
    func end() -> Result {
        let elapsed = start.duration(to: .now)
        let w = ProcessStats.written()
        SyscallCounter.disable()
        let peakAnon = sampler?.stop() ?? max(anonBeforeKB, ProcessStats.anonKB())
        return Result(seconds: elapsed.seconds, peakKB: ProcessStats.memory().peakKB, rssBeforeKB: rssBeforeKB,
                      bytesWritten: w.bytes - written.bytes, writeCalls: w.calls - written.calls,
                      peakAnonKB: peakAnon, anonBeforeKB: anonBeforeKB)
    }
}

extension Duration {
    var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }
}

/// The median of some values (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
