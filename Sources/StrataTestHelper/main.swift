// A child process for tests that need a second process (locking, kill -9 torture).
//
// Usage:
//   StrataTestHelper hold PATH
//       Opens the store for writing, prints "ready", waits for stdin to close.
//   StrataTestHelper read-check PATH --until N
//       Opens the store read-only while another process writes SideBySideWorkload's commits,
//       reads and checks every commit it can see (verify() now and then) until it has seen
//       commit N; prints "ok <distinct commits seen> <reads> <verifies>" (or "PROBLEM ...",
//       exit 1).
//   StrataTestHelper history-writer PATH --batches N
//       Opens PATH for writing (HistoryEvent), saves batch 0, prints "ready", waits for a line
//       on stdin, then saves batches 1..<N (HistoryWorkload, author "history-writer") a few
//       milliseconds apart, renames event 1 in one save, deletes batch 0 in one more, prints
//       "done" and waits for stdin to close.
//   StrataTestHelper save-and-exit PATH --from B --saves N [--compact] [--wait]
//       Opens PATH for writing (HistoryEvent), saves batches B..<B+N (HistoryWorkload, one save
//       each), compacts the store if asked, prints "saved", then (with --wait) waits for stdin
//       to close, for a test to kill it, and exits.
//   StrataTestHelper torture DIR --seed S
//       Saves in a loop to DIR/engine.strata and DIR/objects.store until killed, printing
//       "E n" / "O n" after save n of a level returns (and "C E" / "C O" after a compaction).
//       The saves are TortureWorkload's, numbered on from what the stores hold.
//   StrataTestHelper torture-run [--minutes M | --seconds S] [--seed S] [--dir DIR] [--kills-per-seed K]
//       The long kill loop (scripts/torture.sh): starts `torture` children, SIGKILLs each at a
//       random moment, checks the stores after each kill, prints the figures. Exit status 1
//       if anything was lost, half-saved or damaged (the directory is kept).
import Foundation
import Strata
import StrataEngine
import StrataTestSupport

func say(_ line: String) {
    // One write(2) per line, unbuffered: once it returns, the line outlives a SIGKILL.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String, status: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

func option(_ name: String, in args: [String]) -> String? {
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

func hold(_ path: String) {
    do {
        let store = try Store(path: path)
        say("ready")
        _ = FileHandle.standardInput.readDataToEndOfFile()
        store.close()
    } catch {
        say("error: \(error)")
        exit(1)
    }
}

func readCheck(_ path: String, until last: UInt64) throws -> Never {
    let store = try Store(path: path, options: StoreOptions(readOnly: true))
    var seen = Set<UInt64>()
    var reads = 0, verifies = 0
    let deadline = Date().addingTimeInterval(120)
    say("ready")
    while Date() < deadline {
        do {
            let s = try store.read { try SideBySideWorkload.check($0) }
            seen.insert(s)
            reads += 1
            if reads % 40 == 0 {
                let report = try store.verify()
                verifies += 1
                guard report.isClean else { throw SideBySideProblem("verify: \(report)") }
            }
            if s >= last { say("ok \(seen.count) \(reads) \(verifies)"); exit(0) }
        } catch {
            say("PROBLEM \(error)")
            exit(1)
        }
    }
    say("PROBLEM the writer's commit \(last) never showed (saw \(seen.count) commits)")
    exit(1)
}

func torture(directory: String, seed: UInt64) throws -> Never {
    let durability = tortureDurability(seed: seed)
    let store = try Store(path: TortureLevel.engine.path(in: directory), options: StoreOptions(durability: durability))
    var configuration = ModelConfiguration(url: URL(fileURLWithPath: TortureLevel.objects.path(in: directory)))
    configuration.durability = durability
    let container = try ModelContainer(for: Schema(tortureModels), configurations: configuration)
    var engineSaves = try store.read { tx in try tx.metadata("torture.saves").map { bytes in
        bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    } ?? 0 }
    var objectSaves = try ModelContext(container).fetch(FetchDescriptor<TortureCounter>()).first?.value ?? 0
    var random = SystemRandomNumberGenerator()
    let parent = getppid()
    while true {
        // A driver that died without killing this child leaves it to init: stop then.
        if getppid() != parent { exit(0) }
        if Bool.random(using: &random) {
            let save = EngineSave(seed: seed, n: engineSaves + 1)
            try save.apply(to: store, seed: seed)
            engineSaves += 1
            say("E \(engineSaves)")
            if save.compactAfter {
                try store.compact()
                say("C E")
            }
        } else {
            let save = ObjectSave(seed: seed, n: objectSaves + 1)
            try save.apply(to: container, seed: seed)
            objectSaves += 1
            say("O \(objectSaves)")
            if save.compactAfter {
                try container.compact()
                say("C O")
            }
        }
    }
}

func tortureRun(_ args: [String]) throws {
    let seconds = option("--seconds", in: args).flatMap(Double.init) ?? (option("--minutes", in: args).flatMap(Double.init) ?? 1) * 60
    var seed = option("--seed", in: args).flatMap(UInt64.init) ?? UInt64.random(in: 1...1_000_000)
    let killsPerSeed = option("--kills-per-seed", in: args).flatMap(Int.init) ?? 100
    let root = option("--dir", in: args) ?? FileManager.default.temporaryDirectory.appendingPathComponent("strata-torture-\(getpid())").path
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var total = TortureFigures()
    var seeds = 0
    let start = Date()
    var lastReport = start
    say("torture: \(seconds) s, \(killsPerSeed) kills per seed, from seed \(seed), in \(root)")
    while Date().timeIntervalSince(start) < seconds {
        let directory = "\(root)/seed-\(seed)"
        try? FileManager.default.removeItem(atPath: directory)
        let driver = try TortureDriver(helper: me, directory: directory, seed: seed)
        var failed = false
        for _ in 0..<killsPerSeed where Date().timeIntervalSince(start) < seconds {
            let problems = try driver.round()
            if !problems.isEmpty {
                failed = true
                for p in problems { say("PROBLEM \(p)") }
                break
            }
            if Date().timeIntervalSince(lastReport) > 30 {
                lastReport = Date()
                say("  ... \(Int(Date().timeIntervalSince(start))) s: \(total.kills + driver.figures.kills) kills, seed \(seed)")
            }
        }
        let f = driver.figures
        total.kills += f.kills
        total.unexpectedExits += f.unexpectedExits
        for level in TortureLevel.allCases { total.acknowledgedSaves[level, default: 0] += f.acknowledgedSaves[level, default: 0] }
        total.inFlightSavesFound += f.inFlightSavesFound
        total.compactions += f.compactions
        total.checks += f.checks
        total.problems += f.problems
        seeds += 1
        if failed {
            say("stores kept in \(directory); replay with --seed \(seed)")
            break
        }
        try? FileManager.default.removeItem(atPath: directory)
        seed += 1
    }
    total.seconds = Date().timeIntervalSince(start)
    say("torture: \(seeds) seeds (durability full and deferred alternate by seed); \(total)")
    if !total.problems.isEmpty { exit(1) }
    try? FileManager.default.removeItem(atPath: root)
}

func historyWriter(_ path: String, batches: Int) throws {
    let container = try ModelContainer(for: HistoryEvent.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
    let context = ModelContext(container)
    context.author = HistoryWorkload.author
    try HistoryWorkload.saveBatch(0, in: context)
    say("ready")
    _ = readLine()
    for batch in 1..<max(1, batches) {
        try HistoryWorkload.saveBatch(batch, in: context)
        Thread.sleep(forTimeInterval: 0.005)
    }
    try HistoryWorkload.rename(1, in: context)
    try HistoryWorkload.deleteBatch(0, in: context)
    say("done")
    _ = FileHandle.standardInput.readDataToEndOfFile()
}

func saveAndExit(_ path: String, from first: Int, saves: Int, compact: Bool, wait: Bool) throws {
    let container = try ModelContainer(for: HistoryEvent.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
    let context = ModelContext(container)
    context.author = HistoryWorkload.author
    for batch in first..<(first + saves) { try HistoryWorkload.saveBatch(batch, in: context) }
    if compact { try container.compact() }
    say("saved")
    if wait { _ = FileHandle.standardInput.readDataToEndOfFile() }
}

let args = CommandLine.arguments
guard args.count >= 2 else { fail("usage: StrataTestHelper hold PATH | torture DIR --seed S | torture-run [--minutes M] [--seed S]") }
switch args[1] {
case "hold" where args.count >= 3:
    hold(args[2])
case "read-check" where args.count >= 3:
    do { try readCheck(args[2], until: option("--until", in: args).flatMap(UInt64.init) ?? 1) } catch {
        say("PROBLEM \(error)")
        exit(1)
    }
case "torture" where args.count >= 3:
    let seed = option("--seed", in: args).flatMap(UInt64.init) ?? 1
    do { try torture(directory: args[2], seed: seed) } catch {
        say("error: \(error)")
        exit(1)
    }
case "history-writer" where args.count >= 3:
    do { try historyWriter(args[2], batches: option("--batches", in: args).flatMap(Int.init) ?? 10) } catch {
        say("error: \(error)")
        exit(1)
    }
case "save-and-exit" where args.count >= 3:
    do {
        try saveAndExit(args[2], from: option("--from", in: args).flatMap(Int.init) ?? 0, saves: option("--saves", in: args).flatMap(Int.init) ?? 1,
                        compact: args.contains("--compact"), wait: args.contains("--wait"))
    } catch {
        say("error: \(error)")
        exit(1)
    }
case "torture-run":
    do { try tortureRun(args) } catch { fail("error: \(error)", status: 1) }
default:
    fail("unknown command \(args[1])")
}
