// Many threads, each with its own ModelContext, on one ModelContainer for a while: inserting,
// upserting, changing, deleting, batch-deleting and fetching at once. Each thread owns a range
// of keys and keeps a model of it, so after every save it can check that it reads exactly its
// own writes (nothing lost, nothing doubled); all threads upsert a shared set of keys, which
// must stay unique. At the end, and after a reopen: counts, uniqueness, verify().
//
// `swift test` runs it for a moment; STRATA_STRESS_SECONDS sets how long (scripts/tsan.sh runs
// it under Thread Sanitizer).
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

/// Collects what the worker threads find wrong.
final class StressProblems: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    private var counts: [String: Int] = [:]
    func add(_ text: String) { lock.withLock { if list.count < 30 { list.append(text) } } }
    func count(_ what: String, _ n: Int = 1) { lock.withLock { counts[what, default: 0] += n } }
    var all: [String] { lock.withLock { list } }
    var figures: [String: Int] { lock.withLock { counts } }
}

/// The workers' final models, merged after the threads are done.
final class StressModels: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Int: String] = [:]
    func merge(_ own: [Int: String]) { lock.withLock { items.merge(own) { a, _ in a } } }
    var all: [Int: String] { lock.withLock { items } }
}

@Suite struct ContainerStressTests {
    static let seconds = ProcessInfo.processInfo.environment["STRATA_STRESS_SECONDS"].flatMap(Double.init) ?? 1.0
    static let sharedKeys = 1_000_000..<1_000_040

    @Test func threadsWithTheirOwnContextsKeepEveryInvariant() throws {
        let dir = try ReliabilityDirectory()
        let url = URL(fileURLWithPath: dir.path + "/stress.store")
        let workers = 6
        let problems = StressProblems()
        let models = StressModels()
        let deadline = Date().addingTimeInterval(Self.seconds)
        do {
            let container = try ModelContainer(for: TortureItem.self, TortureCounter.self, configurations: ModelConfiguration(url: url))
            // Threads of their own (concurrentPerform would run only as many at once as there are cores).
            let done = DispatchGroup()
            for worker in 0..<(workers + 2) {
                done.enter()
                Thread {
                    if worker >= workers {
                        Self.read(container, until: deadline, problems)
                    } else {
                        models.merge(Self.write(container, worker: worker, until: deadline, problems))
                    }
                    done.leave()
                }.start()
            }
            done.wait()
            #expect(problems.all.isEmpty, "\(problems.all)")
            try Self.check(container, models.all, problems)
        }
        let reopened = try ModelContainer(for: TortureItem.self, TortureCounter.self, configurations: ModelConfiguration(url: url))
        try Self.check(reopened, models.all, problems)
        #expect(problems.all.isEmpty, "\(problems.all)")
        let f = problems.figures
        #expect(f["saves", default: 0] > workers, "\(f)")
        print("ContainerStressTests: \(workers) writers and 2 readers for \(Self.seconds) s: \(f)")
    }

    /// A writer: its own keys (its model says what each holds), plus upserts of shared keys.
    static func write(_ container: ModelContainer, worker: Int, until deadline: Date, _ problems: StressProblems) -> [Int: String] {
        var random = SeededGenerator(seed: UInt64(worker) &* 7919 &+ 1)
        let base = worker * 10_000
        var own: [Int: String] = [:]
        var round = 0
        let context = ModelContext(container)
        while Date() < deadline {
            round += 1
            do {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    // Inserts (upserts when the key is stored) of own keys, and a shared key.
                    for _ in 0..<Int.random(in: 1..<30, using: &random) {
                        let key = base + Int.random(in: 0..<400, using: &random)
                        let value = "w\(worker)-r\(round)-k\(key)"
                        let item = TortureItem()
                        item.key = key
                        item.payload = value
                        item.group = key % 8
                        context.insert(item)
                        own[key] = value
                    }
                    let shared = TortureItem()
                    shared.key = sharedKeys.randomElement(using: &random)!
                    shared.payload = "shared by w\(worker)"
                    context.insert(shared)
                    try context.save()
                    problems.count("saves")
                case 4..<6:
                    // Change fetched objects.
                    let low = base + Int.random(in: 0..<400, using: &random), high = low + 20
                    let found = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key >= low && $0.key < high }))
                    for item in found {
                        item.payload = "w\(worker)-r\(round)-changed"
                        own[item.key] = item.payload
                    }
                    try context.save()
                    problems.count("saves")
                case 6..<8:
                    // Delete fetched objects, or a range at once.
                    let low = base + Int.random(in: 0..<400, using: &random), high = low + 10
                    if Bool.random(using: &random) {
                        for item in try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key >= low && $0.key < high })) {
                            context.delete(item)
                        }
                    } else {
                        try context.delete(model: TortureItem.self, where: #Predicate { $0.key >= low && $0.key < high })
                    }
                    for key in low..<high { own[key] = nil }
                    try context.save()
                    problems.count("saves")
                default:
                    // Read back everything this worker owns, through a scan and through the indexes.
                    let low = base, high = base + 10_000
                    let mine = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key >= low && $0.key < high }))
                    let read = Dictionary(mine.map { ($0.key, $0.payload) }, uniquingKeysWith: { a, _ in problems.add("worker \(worker): key \(a) twice"); return a })
                    if read != own { problems.add("worker \(worker) round \(round): reads \(read.count) of its objects, \(read.filter { own[$0.key] != $0.value }.count) wrong; wrote \(own.count)") }
                    let probe = base + Int.random(in: 0..<400, using: &random)
                    let one = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key == probe }))
                    if one.map(\.payload) != (own[probe].map { [$0] } ?? []) { problems.add("worker \(worker): key \(probe) by the unique index reads \(one.map(\.payload))") }
                    problems.count("checks")
                }
            } catch {
                problems.add("worker \(worker) round \(round): \(error)")
                context.rollback()
            }
        }
        return own
    }

    /// A reader: every fetch sees each key once, and counts agree with what it fetched.
    static func read(_ container: ModelContainer, until deadline: Date, _ problems: StressProblems) {
        let context = ModelContext(container)
        while Date() < deadline {
            do {
                let all = try context.fetch(FetchDescriptor<TortureItem>())
                if Set(all.map(\.key)).count != all.count { problems.add("a reader saw a key twice in one fetch") }
                let shared = try context.fetchCount(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key >= 1_000_000 }))
                if shared > sharedKeys.count { problems.add("a reader counts \(shared) shared objects for \(sharedKeys.count) keys") }
                problems.count("reads")
            } catch {
                problems.add("reader: \(error)")
            }
        }
    }

    static func check(_ container: ModelContainer, _ own: [Int: String], _ problems: StressProblems) throws {
        let context = ModelContext(container)
        let all = try context.fetch(FetchDescriptor<TortureItem>())
        let byKey = Dictionary(all.map { ($0.key, $0.payload) }, uniquingKeysWith: { a, _ in problems.add("a key is held twice"); return a })
        let ownRead = byKey.filter { !sharedKeys.contains($0.key) }
        if ownRead != own { problems.add("at the end: \(ownRead.count) owned objects, the workers' models \(own.count)") }
        for (key, payload) in byKey where sharedKeys.contains(key) && !payload.hasPrefix("shared by w") {
            problems.add("shared key \(key) holds \(payload)")
        }
        for g in 0..<8 {
            let n = try context.fetchCount(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.group == g }))
            if n != all.filter({ $0.group == g }).count { problems.add("the group index counts \(n) in group \(g)") }
        }
        for store in container.stores {
            let report = try store.verify()
            if !report.isClean { problems.add("verify: \(report)") }
        }
    }
}
