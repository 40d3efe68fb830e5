// The kill loop: start `StrataTestHelper torture DIR --seed S`, SIGKILL it at a random moment,
// check both stores against the model (TortureCheck), start it again on the same stores, and
// so on. The helper prints "E n" / "O n" after save n of a level returns, one write(2) per
// line straight to a file, so what it acknowledged is known however it dies.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The figures of a torture run.
public struct TortureFigures: Sendable, CustomStringConvertible {
    public var kills = 0
    /// Runs that ended on their own (the helper exited or failed to start) rather than by a kill.
    public var unexpectedExits = 0
    public var acknowledgedSaves: [TortureLevel: Int] = [:]
    /// Kills that struck while a save was in flight and found it committed (it had not been acknowledged).
    public var inFlightSavesFound = 0
    public var compactions = 0
    public var checks = 0
    public var seconds = 0.0
    public var problems: [String] = []

    public init() {}

    public var description: String {
        let e = acknowledgedSaves[.engine, default: 0], o = acknowledgedSaves[.objects, default: 0]
        return "\(kills) kills survived in \(String(format: "%.1f", seconds)) s: \(e) engine saves and \(o) object saves acknowledged, "
            + "\(inFlightSavesFound) unacknowledged in-flight saves found committed, \(compactions) compactions, "
            + "\(checks) store checks (each with verify()), \(unexpectedExits) unexpected exits, \(problems.count) problems"
    }
}

public final class TortureDriver {
    public let helper: URL
    public let directory: String
    public let seed: UInt64
    public private(set) var figures = TortureFigures()
    private var engineModel: EngineModel
    private var objectModel: ObjectModel
    private var acknowledged: [TortureLevel: Int] = [.engine: 0, .objects: 0]
    private var random: SeededGenerator

    /// A driver for a fresh torture directory (created if needed).
    public init(helper: URL, directory: String, seed: UInt64) throws {
        self.helper = helper
        self.directory = directory
        self.seed = seed
        engineModel = EngineModel(seed: seed)
        objectModel = ObjectModel(seed: seed)
        random = SeededGenerator(seed: seed &+ 1)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// Returns once the helper's log shows an acknowledged save ("E n" or "O n"), or the helper
    /// has exited, or `patience` seconds have passed.
    public static func waitForASave(log: String, process: Process, patience: Double) {
        let deadline = Date().addingTimeInterval(patience)
        while process.isRunning, Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.split(separator: "\n").contains(where: { $0.hasPrefix("E ") || $0.hasPrefix("O ") }) { return }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }

    /// One round: start the helper, kill it after `delay` seconds (or a random one up to
    /// `maximumDelay`), check the stores. Returns this round's problems.
    ///
    /// With `afterASave`, the random delay starts once the helper has acknowledged a save in
    /// this round, however long that takes on a busy machine (bounded by `patience` seconds),
    /// so that every round kills a helper that is saving, not one still starting.
    @discardableResult
    public func round(maximumDelay: Double = 0.4, afterASave: Bool = false, patience: Double = 300,
                      whileRunning: (() -> Void)? = nil) throws -> [String] {
        let started = Date()
        let log = directory + "/helper.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let process = Process()
        process.executableURL = helper
        process.arguments = ["torture", directory, "--seed", String(seed)]
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? output.close()
        if afterASave { Self.waitForASave(log: log, process: process, patience: patience) }
        let delay = Double.random(in: 0...maximumDelay, using: &random)
        Thread.sleep(forTimeInterval: delay)
        whileRunning?()
        var killed = false
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            killed = true
        }
        process.waitUntilExit()
        if killed && process.terminationReason == .uncaughtSignal { figures.kills += 1 } else { figures.unexpectedExits += 1 }

        // What the helper acknowledged before it died.
        var lastAcknowledged = acknowledged
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let level = TortureLevel(rawValue: String(parts[0])), let n = Int(parts[1]) {
                lastAcknowledged[level] = n
            } else if line.hasPrefix("C ") {
                figures.compactions += 1
            }
        }
        var problems: [String] = []
        if !killed || process.terminationReason != .uncaughtSignal {
            // The helper saves until it is killed: anything else is a failure (a trap, a thrown error).
            problems.append("the helper exited by itself (status \(process.terminationStatus)): \(text.suffix(2000))")
        }
        for level in TortureLevel.allCases {
            figures.acknowledgedSaves[level, default: 0] += lastAcknowledged[level]! - acknowledged[level]!
        }
        let engine = TortureCheck.engine(path: TortureLevel.engine.path(in: directory), seed: seed, model: &engineModel,
                                         acknowledged: lastAcknowledged[.engine]!)
        let objects = TortureCheck.objects(path: TortureLevel.objects.path(in: directory), seed: seed, model: &objectModel,
                                           acknowledged: lastAcknowledged[.objects]!)
        figures.checks += 2
        for (level, result) in [(TortureLevel.engine, engine), (.objects, objects)] {
            if result.saves > lastAcknowledged[level]! { figures.inFlightSavesFound += 1 }
            acknowledged[level] = max(result.saves, lastAcknowledged[level]!)
        }
        problems += engine.problems + objects.problems
        if !problems.isEmpty {
            problems = problems.map { "seed \(seed), kill \(figures.kills) after \(String(format: "%.3f", delay)) s: \($0)" }
        }
        figures.problems += problems
        figures.seconds += Date().timeIntervalSince(started)
        return problems
    }
}
