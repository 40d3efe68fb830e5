import Foundation
import Strata

/// M1: the memory of reading a large store. A store of n objects (default 1M) is made by a
/// child in saves of 50,000; a fresh child then opens it and runs W4's `fetchCount` over every
/// object, sampling RssAnon. Pages of the mapped file are the kernel's cache: what counts is
/// the process's own (anonymous) memory. Strata only (the target is absolute).
enum M1CountMemory: Workload {
    static let id = "M1-open-count-memory"
    static let title = "fresh process: open a store of n objects, fetchCount over all · target < 32 MiB anonymous memory"
    static let batch = 50_000

    static func run(_ bench: Bench) throws {
        guard bench.includes(.strata) else { return }
        let n = bench.n
        let path = bench.options.workDirectory + "/m1.strata"
        removeStoreFiles(path)
        _ = try ChildProcess.run([id] + ChildArguments.make(["part": "build", "path": path, "n": n, "seed": bench.options.seed]))
        _ = try ChildProcess.run([id] + ChildArguments.make(["part": "count", "path": path, "n": n, "seed": 0]))  // warm the page cache
        let child = try ChildProcess.run([id] + ChildArguments.make(["part": "count", "path": path, "n": n, "seed": 0]))
        removeStoreFiles(path)
        guard let m = child.measurements.first else { throw BenchError("\(id): the child reported nothing") }
        bench.report(m, title: title)
    }

    static func child(_ arguments: ChildArguments) throws {
        let path = try arguments.string("path")
        let n = try arguments.int("n")
        if try arguments.string("part") == "build" {
            let data = Dataset(seed: UInt64(try arguments.int("seed")))
            let container = try ObjectStores.openContainer(path: path)
            var i = 0
            while i < n {
                let context = ModelContext(container)
                for j in i..<min(n, i + batch) { context.insert(StrataModel.Course(data.course(j))) }
                try context.save()
                i += batch
            }
            return
        }
        let x = W4ObjectCount.threshold
        let section = Section.begin()
        let container = try ObjectStores.openContainer(path: path)
        let count = try ModelContext(container).fetchCount(FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.duration > x && $0.isPublished }))
        let result = section.end()
        var m = Measurement(workload: id, system: System.strata.rawValue, n: n, seconds: result.seconds, peakRSSKB: result.peakKB,
                            bytes: ProcessStats.fileSize(path))
        m.extras = [("matched", .int(count)), ("rss_before_kb", .int(result.rssBeforeKB))] + result.memoryExtras
        m["note"] = .string("\(count) matched; peak RssAnon \(result.peakAnonKB / 1024) MiB (\(result.anonBeforeKB / 1024) MiB before opening)")
        print(m.jsonLine)
    }
}
