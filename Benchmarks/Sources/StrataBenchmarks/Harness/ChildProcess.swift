import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Counts the sync system calls a child process makes inside its timed sections, with
/// `perf stat` when this machine lets it (Debian's linux-perf, tracepoints readable). The
/// child switches counting on and off through perf's control FIFOs, so setup is not counted.
enum SyscallCounter {
    static let events = ["syscalls:sys_enter_fsync", "syscalls:sys_enter_fdatasync",
                         "syscalls:sys_enter_write", "syscalls:sys_enter_pwrite64", "syscalls:sys_enter_pwritev"]
    static let controlVariable = "STRATA_BENCH_PERF_CONTROL"

    /// Whether `perf stat` can count sync calls here (checked once).
    static let available: Bool = {
        guard let perf = findExecutable("perf") else { return false }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: perf)
        p.arguments = ["stat", "-x", ",", "-o", "/dev/null", "-e", events[1], "--", "/bin/true"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// In a child run under perf: the control and acknowledgement FIFOs.
    private static let control: (FileHandle, FileHandle)? = {
        guard let value = ProcessInfo.processInfo.environment[controlVariable] else { return nil }
        let parts = value.split(separator: ",").map(String.init)
        guard parts.count == 2, let ctl = FileHandle(forWritingAtPath: parts[0]),
              let ack = FileHandle(forReadingAtPath: parts[1]) else { return nil }
        return (ctl, ack)
    }()

    static func enable() { send("enable") }
    static func disable() { send("disable") }

    private static func send(_ command: String) {
        guard let (ctl, ack) = control else { return }
        ctl.write(Data((command + "\n").utf8))
        _ = ack.availableData  // perf answers "ack\n" once the events are switched
    }

    /// Reads perf's CSV output: event name → count.
    static func parse(_ text: String) -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count >= 3, let n = Int(fields[0]) else { continue }
            counts[String(fields[2])] = n
        }
        return counts
    }
}

func findExecutable(_ name: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(dir)/\(name)"
        if access(path, X_OK) == 0 { return path }
    }
    return nil
}

/// Runs this benchmark binary again with a sub-command, in a fresh process.
enum ChildProcess {
    /// This executable's path.
    static let executable: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
    }()

    struct Result {
        /// The measurements the child printed (one JSON line each).
        var measurements: [Measurement]
        /// Wall-clock seconds from spawning the child to its exit.
        var processSeconds: Double
        /// Sync calls in the child's timed sections (nil without perf).
        var syncs: Int?
        /// Write-like calls in the child's timed sections (nil without perf).
        var writeCalls: Int?
        /// Everything the child printed.
        var output = ""
    }

    /// The median of each child over `repetitions` rounds that run every child once, in turn,
    /// after a warm-up round (page cache, dynamic loader), with the whole process's wall time
    /// beside it (workload `id`, over a store of `n`). Interleaved, each system meets the same
    /// state of the machine (a flusher writing back the stores just made, another process's
    /// burst), where runs of one system after another let the first take all of it. Dirty pages
    /// are written back first (`sync`).
    static func interleavedMedians(_ id: String, _ repetitions: Int, of n: Int, _ children: [() throws -> Result]) throws -> [Measurement] {
        sync()
        for child in children { _ = try child() }
        var runs = [[(Measurement, Double)]](repeating: [], count: children.count)
        for _ in 0..<repetitions {
            for (i, child) in children.enumerated() {
                let result = try child()
                guard let m = result.measurements.first else { throw BenchError("\(id): the child reported nothing") }
                runs[i].append((m, result.processSeconds))
            }
        }
        return runs.map { childRuns in
            let sorted = childRuns.sorted { $0.0.seconds < $1.0.seconds }
            var m = sorted[sorted.count / 2].0
            m.seconds = median(sorted.map(\.0.seconds))
            m["process_seconds"] = .double(median(sorted.map(\.1)))
            m["repetitions"] = .int(sorted.count)
            m["of_records"] = .int(n)
            m["interleaved_with"] = .int(children.count - 1)
            return m
        }
    }

    /// Runs `self child <arguments>` (or `program <arguments>`, another executable that prints
    /// measurements as children do); throws if it fails. With `countSyncs`, under perf when possible.
    static func run(_ arguments: [String], countSyncs: Bool = false, program: String? = nil) throws -> Result {
        let process = Process()
        var perfFiles: (output: String, ctl: String, ack: String, log: String)?
        if let program {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = arguments
        } else if countSyncs && SyscallCounter.available, let perf = findExecutable("perf") {
            let base = NSTemporaryDirectory() + "strata-bench-perf-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            let files = (output: base + ".csv", ctl: base + ".ctl", ack: base + ".ack", log: base + ".log")
            guard mkfifo(files.ctl, 0o600) == 0, mkfifo(files.ack, 0o600) == 0,
                  FileManager.default.createFile(atPath: files.log, contents: nil),
                  let log = FileHandle(forWritingAtPath: files.log) else { throw BenchError("cannot make perf's control files") }
            // perf says "Events enabled/disabled" on stderr at each switch: keep the child's
            // stderr in a file and pass on everything else.
            process.standardError = log
            perfFiles = files
            process.executableURL = URL(fileURLWithPath: perf)
            process.arguments = ["stat", "-x", ",", "-o", files.output, "-D", "-1",
                                 "--control", "fifo:\(files.ctl),\(files.ack)",
                                 "-e", SyscallCounter.events.joined(separator: ","), "--", executable, "child"] + arguments
            var environment = ProcessInfo.processInfo.environment
            environment[SyscallCounter.controlVariable] = "\(files.ctl),\(files.ack)"
            process.environment = environment
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["child"] + arguments
        }
        defer {
            if let files = perfFiles {
                if let text = try? String(contentsOfFile: files.log, encoding: .utf8) {
                    let rest = text.split(separator: "\n").filter { !$0.hasPrefix("Events enabled") && !$0.hasPrefix("Events disabled") }
                    if !rest.isEmpty { FileHandle.standardError.write(Data((rest.joined(separator: "\n") + "\n").utf8)) }
                }
                for f in [files.output, files.ctl, files.ack, files.log] { unlink(f) }
            }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        let start = ContinuousClock.now
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let elapsed = start.duration(to: .now).seconds
        guard process.terminationStatus == 0 else {
            throw BenchError("child \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus)")
        }
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
        var result = Result(measurements: lines.compactMap { $0.hasPrefix("{") ? Measurement(jsonLine: $0) : nil },
                            processSeconds: elapsed, output: lines.joined(separator: "\n"))
        if let files = perfFiles, let text = try? String(contentsOfFile: files.output, encoding: .utf8) {
            let counts = SyscallCounter.parse(text)
            result.syncs = (counts[SyscallCounter.events[0]] ?? 0) + (counts[SyscallCounter.events[1]] ?? 0)
            result.writeCalls = SyscallCounter.events[2...].reduce(0) { $0 + (counts[$1] ?? 0) }
        }
        return result
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
