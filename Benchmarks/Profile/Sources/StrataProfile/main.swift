// One workload of Benchmarks/ on Strata alone, for callgrind (profile.sh toggles collection
// on `run()`, so that making the store and warming up are not counted).
//
//   StrataProfile MODE [K] [FOLDER]
//
// MODE: W1 (insert K objects and save), W3 (K point fetches by id), W4 (K fetchCounts),
// W5 (K sorted pages), W6 (upsert K objects, half existing), W7 (enumerate all K times),
// W9 (delete the unpublished, save), E3 (scan K times at the engine level).
// The object store holds 20,000 courses (made on first use in FOLDER, default
// /tmp/strata-profile); W1, W6 and W9 work on a copy.
import Foundation
import Strata
import StrataEngine

final class Course: PersistentModel {
    @Attribute(.unique) var id: UUID
    @Attribute var title: String
    @Attribute var summary: String
    @Attribute var duration: Double
    @Attribute var createdAt: Date
    @Attribute var isPublished: Bool
    @Attribute var tags: [String]
    @Attribute var authorID: Int?

    static var indexes: [[PartialKeyPath<Course>]] { [[\.createdAt]] }

    init() {}

    init(_ i: Int) {
        id = UUID()
        title = "Course number \(i) about things"
        summary = String(repeating: "summary text ", count: 8) + "\(i)"
        duration = Double(i % 180)
        createdAt = Date(timeIntervalSinceReferenceDate: Double(i * 37 % 1_000_003))
        isPublished = i % 3 != 0
        tags = ["swift", "tag\(i % 10)"]
        authorID = i % 5 == 0 ? nil : i % 1000
    }
}

struct Usage: Error, CustomStringConvertible {
    var description: String { "usage: StrataProfile W1|W3|W4|W5|W6|W7|W9|E3 [K] [FOLDER]" }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { throw Usage() }
let mode = arguments[1]
let k = arguments.count > 2 ? Int(arguments[2]) ?? 100 : 100
let folder = arguments.count > 3 ? arguments[3] : "/tmp/strata-profile"
let objectCount = 20_000
let fm = FileManager.default
try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)

func container(_ path: String) throws -> ModelContainer {
    try ModelContainer(for: Course.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
}

let storePath = folder + "/objects.store"
if !fm.fileExists(atPath: storePath) {
    let context = ModelContext(try container(storePath))
    for i in 0..<objectCount { context.insert(Course(i)) }
    try context.save()
}
/// The container the workload runs on: the store itself, or a fresh copy for W1, W6 and W9.
let workPath: String
switch mode {
case "W1", "W6", "W9":
    workPath = folder + "/work.store"
    for suffix in ["", ".lock", ".blobs"] { try? fm.removeItem(atPath: workPath + suffix) }
    if mode != "W1" { try fm.copyItem(atPath: storePath, toPath: workPath) }
default:
    workPath = storePath
}
nonisolated(unsafe) let shared = try container(workPath)
nonisolated(unsafe) var ids: [UUID] = []
try ModelContext(try container(storePath)).enumerate(FetchDescriptor<Course>(), batchSize: 5000) { ids.append($0.id) }
nonisolated(unsafe) var sum = 0

@inline(never) func w1() throws {
    let context = ModelContext(shared)
    for i in 0..<k { context.insert(Course(i)) }
    try context.save()
}

@inline(never) func w3() throws {
    let context = ModelContext(shared)
    for j in 0..<k {
        let key = ids[(j &* 7919) % ids.count]
        let found = try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.id == key }))
        sum &+= found.first?.title.utf8.count ?? 0
    }
}

@inline(never) func w4() throws {
    let context = ModelContext(shared)
    let threshold = 90.0
    let descriptor = FetchDescriptor<Course>(predicate: #Predicate { $0.duration > threshold && $0.isPublished })
    for _ in 0..<k { sum &+= try context.fetchCount(descriptor) }
}

@inline(never) func w5() throws {
    let context = ModelContext(shared)
    var descriptor = FetchDescriptor<Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
    descriptor.fetchLimit = 50
    descriptor.fetchOffset = 1000
    for _ in 0..<k { for c in try context.fetch(descriptor) { sum &+= c.title.utf8.count &+ c.tags.count } }
}

@inline(never) func w6() throws {
    let context = ModelContext(shared)
    for i in 0..<k {
        let course = Course(i)
        if i < k / 2, i < ids.count { course.id = ids[i]; course.duration += 1 }
        context.insert(course)
    }
    try context.save()
}

@inline(never) func w7() throws {
    for _ in 0..<k {
        try ModelContext(shared).enumerate(FetchDescriptor<Course>(), batchSize: 5000) { c in
            sum &+= c.title.utf8.count &+ c.summary.utf8.count &+ c.tags.count &+ (c.authorID ?? 0) &+ Int(c.duration)
            sum &+= Int(c.createdAt.timeIntervalSinceReferenceDate) &+ (c.isPublished ? 1 : 0) &+ Int(c.id.uuid.0)
        }
    }
}

@inline(never) func w9() throws {
    let context = ModelContext(shared)
    try context.delete(model: Course.self, where: #Predicate { !$0.isPublished })
    try context.save()
}

/// E3 at the engine level: a store of 100,000 records of 150 to 250 bytes, scanned whole.
nonisolated(unsafe) var engine: (store: Store, collection: CollectionID)?
if mode == "E3" {
    let path = folder + "/engine.store"
    let fresh = !fm.fileExists(atPath: path)
    let store = try Store(path: path, options: StoreOptions())
    if fresh {
        try store.write { tx in
            let c = try tx.createCollection(named: "c")
            for i in 1...100_000 { try tx.put([UInt8](repeating: UInt8(i & 0x7F), count: 150 + i % 100), row: RowID(i), in: c) }
        }
    }
    guard let collection = try store.read({ $0.collection(named: "c") }) else { throw Usage() }
    engine = (store, collection)
}

@inline(never) func e3() throws {
    guard let (store, collection) = engine else { return }
    for _ in 0..<k {
        try store.read { tx in
            try tx.forEachRecord(in: collection) { row, raw in
                sum &+= raw.count &+ Int(raw[raw.count / 2]) &+ Int(row)
                return true
            }
        }
    }
}

/// The workload: what profile.sh counts.
@inline(never) func run() throws {
    switch mode {
    case "W1": try w1()
    case "W3": try w3()
    case "W4": try w4()
    case "W5": try w5()
    case "W6": try w6()
    case "W7": try w7()
    case "W9": try w9()
    case "E3": try e3()
    default: throw Usage()
    }
}

// A first pass warms what the read workloads read (pages checked once per process, the query
// cache); it calls the workload's function, not `run()`, so profile.sh does not count it.
switch mode {
case "W3": try w3()
case "W4": try w4()
case "W5": try w5()
case "W7": try w7()
case "E3": try e3()
default: break
}
try run()
print(sum)
