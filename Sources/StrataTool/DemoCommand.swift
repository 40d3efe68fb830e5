import Foundation
import Strata

/// `strata demo`: the main job, on an on-disk store.
struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "insert, upsert, query, page, count, enumerate and reopen a store, timing each step"
    static var help: String {
        """
        usage: strata demo [--path PATH] [--count N]

        Runs the main job on an on-disk store and prints each step and its time: inserts N
        sample courses in one save, upserts some by their unique id, fetches one by id,
        counts with a predicate, reads a sorted page, searches titles, enumerates in batches,
        and reopens the store. Running it again adds N more courses to the same store.

        options:
          --path PATH   the store (default: \(defaultPath))
          --count N     courses to insert (default: 5000)
        """
    }

    static var defaultPath: String { ModelConfiguration.defaultDirectory.appendingPathComponent("demo.store").path }

    var path = DemoCommand.defaultPath
    var count = 5000

    init(arguments: inout Arguments) throws {
        if let value = try arguments.value("--path") { path = value }
        if let n = try arguments.integer("--count", in: 1...100_000_000) { count = n }
    }

    func step<R>(_ what: String, _ body: () throws -> R) rethrows -> R {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        print(String(format: "  %8.2f ms  %@", ms, what))
        return result
    }

    func run() throws -> ExitStatus {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        print("Strata demo on \(path)")
        var generator = SystemRandomNumberGenerator()
        let topics = ["Swift", "Linux", "Storage", "B-trees", "Concurrency", "Testing", "Networking", "Café culture", "Ελληνικά", "Кириллица"]
        let base = Date(timeIntervalSinceReferenceDate: 780_000_000)
        var ids: [UUID] = []

        do {
            let container = try step("open the container (schema checked against the store)") {
                try ModelContainer(for: Course.self, configurations: ModelConfiguration(url: url))
            }
            let context = ModelContext(container)
            let before = try context.fetchCount(FetchDescriptor<Course>())
            print("  the store holds \(before) courses")
            try step("insert \(count) courses and save (one transaction)") {
                for i in 0..<count {
                    let id = UUID()
                    ids.append(id)
                    context.insert(Course(id: id, title: "\(topics[i % topics.count]) \(i)", summary: String(repeating: "A course about \(topics[i % topics.count]). ", count: 3),
                                          duration: Double(i % 240) / 2, createdAt: base.addingTimeInterval(Double(i) * 60),
                                          isPublished: i % 4 != 0, tags: ["t\(i % 7)", "level\(i % 3)"], authorID: i % 5 == 0 ? nil : i % 100))
                }
                try context.save()
            }
            let upserts = min(500, count)
            try step("upsert \(upserts) courses by their unique id (updates, not new rows)") {
                for i in 0..<upserts {
                    let id = ids[Int.random(in: 0..<ids.count, using: &generator)]
                    context.insert(Course(id: id, title: "Updated \(i)", summary: "Revised", duration: 99, createdAt: base, isPublished: true, tags: ["updated"], authorID: 1))
                }
                try context.save()
            }
            let total = try step("count all courses") { try context.fetchCount(FetchDescriptor<Course>()) }
            print("  → \(total) courses (\(before) before + \(count) new; upserts added none)")

            let probe = ids[ids.count / 2]
            let one = try step("fetch one course by unique id (#Predicate { $0.id == id })") {
                try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.id == probe })).first
            }
            print("  → \(one?.title ?? "none")")

            let long = try step("count published courses longer than 60 (predicate on encoded records)") {
                try context.fetchCount(FetchDescriptor<Course>(predicate: #Predicate { $0.duration > 60 && $0.isPublished }))
            }
            print("  → \(long)")

            var page = FetchDescriptor<Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
            page.fetchOffset = 20
            page.fetchLimit = 10
            let newest = try step("page 3 (10 per page) of courses, newest first (from the createdAt index)") { try context.fetch(page) }
            print("  → \(newest.map(\.title).prefix(3).joined(separator: ", ")), ...")

            let search = "cafe"
            let found = try step("search titles with localizedStandardContains(\"\(search)\")") {
                try context.fetch(FetchDescriptor<Course>(predicate: #Predicate { $0.title.localizedStandardContains(search) }))
            }
            print("  → \(found.count) courses (matches \"Café culture\")")

            var minutes = 0.0
            try step("enumerate every course in batches of 1000, summing durations") {
                try context.enumerate(FetchDescriptor<Course>(), batchSize: 1000) { minutes += $0.duration }
            }
            print("  → \(Int(minutes)) hours of courses")
        }
        let reopened = try step("reopen the store (reads the last commit, not the log)") {
            try ModelContainer(for: Course.self, configurations: ModelConfiguration(url: url))
        }
        let again = try step("count after reopening") { try ModelContext(reopened).fetchCount(FetchDescriptor<Course>()) }
        print("  → \(again) courses survived the reopen")
        if let store = reopened.stores.first {
            let info = try store.info()
            print("Store: \(info.fileSize) bytes, commit \(info.sequence), ~\(info.reclaimableBytes) bytes reclaimable by compaction")
        }
        print("Look inside with `strata info \(path)`, `strata verify \(path)` or `strata dump \(path) --limit 3`.")
        return .success
    }
}
