import Foundation
import Strata
import StrataEngine

// `StrataBenchmarks profile MODE [K] [FOLDER]`: one workload on Strata alone, at a small size,
// for callgrind (Benchmarks/profile.sh collects inside `profiledWorkload()` only, so making
// the store and the warm-up pass are not counted). The objects and records are the
// benchmarks' own (`Dataset`, `StrataModel.Course`, `CourseCodec`).
//
// MODE: W1 (insert K objects and save), W2 (K single-object durable saves into a fresh store,
// each its own `save()`: callgrind counts a save's own work, not the time its fdatasync waits), W3 (K point fetches by id), W4 (K fetchCounts),
// W5 (K sorted pages), W6 (upsert K objects, half existing), W7 (enumerate all K times),
// W9 (delete the unpublished and save), E3 (scan the engine store K times, decoding records).
// The object store holds 20,000 courses, the engine store 100,000 records, made on first use
// in FOLDER (default /tmp/strata-profile); W1, W6 and W9 work on a copy.
enum Profile {
    static let objectCount = 20_000
    static let recordCount = 100_000

    struct Setup {
        var mode = ""
        var k = 100
        var container: ModelContainer?
        var ids: [UUID] = []
        var engine: (store: Store, collection: CollectionID)?
        var sum = 0
    }

    nonisolated(unsafe) static var setup = Setup()
    static let data = Dataset()

    static func main(_ arguments: [String]) throws {
        // `profile W8-store [FOLDER]`: makes the object store if need be and prints its path and
        // the id of one of its objects, for Benchmarks/profile.sh W8 (a fresh process's open
        // and first fetch, W8's child, counted by callgrind).
        if arguments.first == "W8-store" {
            let folder = arguments.count > 1 ? arguments[1] : "/tmp/strata-profile"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try openObjects(folder, mode: "W3")
            setup.container = nil
            print(folder + "/objects.strata", data.id(objectCount / 2).uuidString)
            return
        }
        let usage = BenchError("usage: StrataBenchmarks profile W1|W2|W3|W4|W5|W6|W7|W9|E3 [K] [FOLDER], or profile W8-store [FOLDER]")
        guard let mode = arguments.first, ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W9", "E3"].contains(mode) else { throw usage }
        setup.mode = mode
        setup.k = arguments.count > 1 ? Int(arguments[1]) ?? 100 : 100
        let folder = arguments.count > 2 ? arguments[2] : "/tmp/strata-profile"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if mode == "E3" { try openEngine(folder + "/engine.strata") } else { try openObjects(folder, mode: mode) }
        // A first pass warms what the read workloads read (pages checked once per process,
        // the query cache), outside `profiledWorkload()`.
        if ["W2", "W3", "W4", "W5", "W7", "E3"].contains(mode) { try workload() }
        try profiledWorkload()
        print(setup.sum)
    }

    private static func openObjects(_ folder: String, mode: String) throws {
        let fm = FileManager.default
        let stored = folder + "/objects.strata"
        if !fm.fileExists(atPath: stored) {
            let context = ModelContext(try ObjectStores.openContainer(path: stored))
            for i in 0..<objectCount { context.insert(StrataModel.Course(data.course(i))) }
            try context.save()
        }
        var path = stored
        if ["W1", "W2", "W6", "W9"].contains(mode) {
            path = folder + "/work.strata"
            removeStoreFiles(path)
            if mode != "W1" && mode != "W2" { try fm.copyItem(atPath: stored, toPath: path) }
        }
        setup.container = try ObjectStores.openContainer(path: path)
        setup.ids = (0..<objectCount).map(data.id)
    }

    private static func openEngine(_ path: String) throws {
        let fresh = !FileManager.default.fileExists(atPath: path)
        let store = try Store(path: path, options: StoreOptions())
        if fresh {
            try store.write { tx in
                let c = try tx.createCollection(named: "courses")
                var buffer: [UInt8] = []
                for i in 0..<recordCount {
                    CourseCodec.encode(data.course(i), into: &buffer)
                    try tx.put(buffer, row: RowID(i + 1), in: c)
                }
            }
        }
        guard let collection = try store.read({ $0.collection(named: "courses") }) else { throw BenchError("profile: no collection") }
        setup.engine = (store, collection)
    }

    static func workload() throws {
        let k = setup.k
        switch setup.mode {
        case "W1":
            let context = ModelContext(try container())
            for i in 0..<k { context.insert(StrataModel.Course(data.course(objectCount + i))) }
            try context.save()
        case "W2":
            // As W2's child: one object inserted and saved (durably, by default) at a time.
            let context = ModelContext(try container())
            let first = 10_000_000 + setup.sum
            for i in 0..<k {
                context.insert(StrataModel.Course(data.course(first + i)))
                try context.save()
            }
            setup.sum += k
        case "W3":
            let context = ModelContext(try container())
            for j in 0..<k {
                let key = setup.ids[(j &* 7919) % setup.ids.count]
                let found = try context.fetch(FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.id == key }))
                setup.sum &+= found.first?.title.utf8.count ?? 0
            }
        case "W4":
            let context = ModelContext(try container())
            let threshold = 900.0
            let descriptor = FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.duration > threshold && $0.isPublished })
            for _ in 0..<k { setup.sum &+= try context.fetchCount(descriptor) }
        case "W5":
            let context = ModelContext(try container())
            var descriptor = FetchDescriptor<StrataModel.Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
            descriptor.fetchLimit = 50
            descriptor.fetchOffset = 1000
            for _ in 0..<k { for c in try context.fetch(descriptor) { setup.sum &+= c.title.utf8.count &+ c.tags.count } }
        case "W6":
            let context = ModelContext(try container())
            for i in 0..<k {
                var course = data.course(i < k / 2 ? i % objectCount : objectCount + i)
                if i < k / 2 { course.duration += 1 }
                context.insert(StrataModel.Course(course))
            }
            try context.save()
        case "W7":
            for _ in 0..<k {
                try ModelContext(try container()).enumerate(FetchDescriptor<StrataModel.Course>(), batchSize: 5000) { setup.sum &+= $0.checksum }
            }
        case "W9":
            let context = ModelContext(try container())
            try context.delete(model: StrataModel.Course.self, where: #Predicate { !$0.isPublished })
            try context.save()
        default:
            guard let (store, collection) = setup.engine else { return }
            for _ in 0..<k {
                try store.read { tx in
                    try tx.forEachRecord(in: collection) { _, raw in
                        setup.sum &+= CourseCodec.decode(raw)?.checksum ?? 0
                        return true
                    }
                }
            }
        }
    }

    private static func container() throws -> ModelContainer {
        guard let container = setup.container else { throw BenchError("profile: no container") }
        return container
    }
}

/// What Benchmarks/profile.sh counts (callgrind collects inside this function only).
@inline(never) func profiledWorkload() throws {
    try Profile.workload()
}
