import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata demo`: the main job, on an on-disk store.
struct DemoCommand: Command {
    static let name = "demo"
    static let summary = "insert, upsert, query, page, count, enumerate and reopen a store, timing each step"
    static var help: String {
        """
        usage: strata demo [--path PATH] [--count N] [--keep]

        Runs the main job on an on-disk store and prints each step and its time: inserts N
        sample courses in one save, upserts some by their unique id, fetches one by id,
        counts with a predicate, reads a sorted page, searches titles, enumerates in batches,
        and reopens the store. Each run starts on a fresh store: the store an earlier demo
        left at PATH is removed first (only a store that holds nothing but the demo's
        courses; any other store is left alone, and the demo stops).

        options:
          --path PATH   the store (default: \(defaultPath)); its folder must exist
          --count N     courses to insert (default: 5000)
          --keep        keep the courses of earlier runs and add N more
        """
    }

    static var defaultPath: String { ModelConfiguration.defaultDirectory.appendingPathComponent("demo.store").path }

    var path = DemoCommand.defaultPath
    var count = 5000
    var keep = false

    init(arguments: inout Arguments) throws {
        if let value = try arguments.value("--path") { path = value }
        if let n = try arguments.integer("--count", in: 1...100_000_000) { count = n }
        keep = arguments.flag("--keep")
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
        if !keep { try removeEarlierDemo() }
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
        let strata = Self.invocation()
        let quoted = Self.shellQuoted(path)
        print("Look inside with `\(strata.command) info \(quoted)`, `\(strata.command) verify \(quoted)` or `\(strata.command) dump \(quoted) --limit 3`.")
        if let hint = strata.installHint { print(hint) }
        return .success
    }

    /// Removes the store an earlier demo left at `path` (and its side files), after checking
    /// that it holds nothing but the demo's courses.
    private func removeEarlierDemo() throws {
        let fm = FileManager.default
        guard fm.fileExists(atPath: path) else { return }
        let entities: [String]
        do {
            let store = try Store(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
            defer { store.close() }
            entities = try store.read { tx in try StoredModelSchema(tx)?.entities.map(\.name) ?? tx.collectionNames }
        } catch {
            throw ToolError("\(path) cannot be replaced by a fresh demo store: \(describe(error)). Give the demo another --path.", path: path)
        }
        guard entities.allSatisfy({ $0 == String(describing: Course.self) }) else {
            throw ToolError("\(path) is not a demo store (it holds \(entities.joined(separator: ", "))), so the demo leaves it alone. Give the demo another --path.", path: path)
        }
        for file in [path, path + ".blobs", path + ".compact"] where fm.fileExists(atPath: file) {
            try fm.removeItem(atPath: file)
        }
    }

    /// How to run this `strata` from the current folder: `swift run strata` in the package
    /// that built it (then also how to install it), `strata` when it is on PATH, else its path.
    static func invocation() -> (command: String, installHint: String?) {
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])).resolvingSymlinksInPath().path
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).resolvingSymlinksInPath().path
        if executable.hasPrefix(here + "/.build/") {
            return ("swift run strata", "To run it as `strata` from anywhere: `swift build -c release`, then copy .build/release/strata to a folder on your PATH (such as ~/.local/bin).")
        }
        let onPath = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains { folder in
            URL(fileURLWithPath: String(folder)).appendingPathComponent("strata").resolvingSymlinksInPath().path == executable
        }
        return (onPath ? "strata" : shellQuoted(executable), nil)
    }

    /// `text` as one word for a POSIX shell.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "/._-+=:@,%".unicodeScalars.contains($0)) }
        return plain && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
