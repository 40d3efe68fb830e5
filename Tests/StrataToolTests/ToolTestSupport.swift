// Running the built `strata` tool as a process, and the stores it runs on.
import Foundation
import Strata
import StrataEngine
import Testing
import StrataTestSupport

/// What one run of `strata` did.
struct ToolRun: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Standard output parsed as one JSON object.
    func object() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any], "not a JSON object: \(stdout)")
    }

    /// Each line of standard output parsed as a JSON object.
    func objects() throws -> [[String: Any]] {
        try lines.map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not a JSON object: \(line)")
        }
    }

    var description: String { "exit \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
}

enum Tool {
    /// The `strata` executable, built beside the test bundle (as LockTests finds StrataTestHelper).
    static func url() throws -> URL {
        var folders: [URL] = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        folders.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        // On macOS the bundle is Foo.xctest/Contents/MacOS/Foo: the products are three levels up.
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())
        for folder in folders {
            let candidate = folder.appendingPathComponent("strata")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw ToolMissing(looked: folders.map(\.path))
    }

    struct ToolMissing: Error, CustomStringConvertible {
        let looked: [String]
        var description: String { "the strata executable was not found (build it with `swift build --build-tests`); looked in \(looked)" }
    }

    /// Runs `strata` with these arguments and waits for it. Output goes through files, so a
    /// large output never blocks the child.
    static func run(_ arguments: String...) throws -> ToolRun { try run(arguments) }

    /// The same, from the folder `directory` (default: this process's), with `environment`
    /// added to this process's.
    static func run(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:], asUser user: UInt32? = nil) throws -> ToolRun {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("stdout"), err = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        if let user {
            // As another user (the tests run as root in CI): through setpriv, as a shell user would be.
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", try url().path] + arguments
        } else {
            process.executableURL = try url()
            process.arguments = arguments
        }
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus,
                       stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
    }
}

/// A folder of its own for one test: each store left in it is verified when it goes, and a
/// problem is an issue of the test (`TestStore`).
final class TestFolder {
    let folder: TestStore
    var url: URL { folder.url }
    init(_ name: String = #function) throws { folder = TestStore(name, report: { Issue.record(Comment(rawValue: $0)) }) }
    func path(_ name: String = "test.store") -> String { url.appendingPathComponent(name).path }
    /// The store at `path` is damaged on purpose: it is not verified.
    func expectDamage(at path: String) { folder.expectDamage(at: path) }
}

// MARK: The model the stores hold: one property of each kind `strata dump` decodes.

enum Level: String, Codable { case beginner, advanced }

struct Place: Codable, Hashable {
    var city: String
    var floor: Int
}

final class Lesson: PersistentModel {
    @Attribute(.unique) var id: UUID
    @Attribute var title: String
    @Attribute var minutes: Int
    @Attribute var price: Decimal
    @Attribute var startsAt: Date
    @Attribute var published: Bool
    @Attribute var tags: [String]
    @Attribute var level: Level
    @Attribute var place: Place?
    @Attribute var note: String?
    @Attribute(.externalStorage) var attachment: Data
    @Attribute var link: URL
    @Attribute var scores: [String: Int]
    @Attribute var rating: Float

    init() {}
    init(_ i: Int) {
        id = Lesson.id(i)
        title = "Lesson \(i)"
        minutes = 30 + i % 60
        price = Decimal(string: "\(i).25")!
        startsAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 3600)
        published = i % 2 == 0
        tags = ["t\(i % 3)", "all"]
        level = i % 3 == 0 ? .advanced : .beginner
        place = i % 4 == 0 ? nil : Place(city: "Lisboa", floor: i % 5)
        note = i % 2 == 0 ? "bring \"paper\"\nand a pen" : nil
        // Tiny values stay in the record; larger ones go to a blob file.
        attachment = i % 2 == 0 ? Data([UInt8(i % 256), 1, 2]) : Data(repeating: UInt8(i % 256), count: 40)
        link = URL(string: "https://example.com/lessons/\(i)")!
        scores = ["a": i, "b": -i]
        rating = 4.5
    }

    static func id(_ i: Int) -> UUID { UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", i))! }

    static var indexes: [[PartialKeyPath<Lesson>]] { [[\.startsAt]] }
}

final class Shelf: PersistentModel {
    @Attribute var label: String
    @Relationship(deleteRule: .cascade, inverse: \Volume.shelf) var volumes: [Volume] = []
    init() {}
    init(label: String) { self.label = label }
}

final class Volume: PersistentModel {
    @Attribute var title: String
    @Relationship var shelf: Shelf? = nil
    init() {}
    init(title: String) { self.title = title }
}

enum MemoV1 {
    final class Memo: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        init() {}
        init(title: String, body: String) { self.title = title; self.body = body }
    }
}

enum MemoV2 {
    /// `body` renamed to `text`, `priority` added.
    final class Memo: PersistentModel {
        @Attribute var title: String = ""
        @Attribute(originalName: "body") var text: String = ""
        @Attribute var priority: Int = 3
        init() {}
        init(title: String, text: String, priority: Int) { self.title = title; self.text = text; self.priority = priority }
    }
}

enum Fixture {
    /// A store of `count` lessons saved at once; with `rewrites`, every lesson's title is
    /// then changed that many times (one save each), which leaves space for compaction.
    @discardableResult
    static func lessons(at path: String, count: Int = 120, rewrites: Int = 0) throws -> Int {
        let container = try ModelContainer(for: Lesson.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for i in 0..<count { context.insert(Lesson(i)) }
        try context.save()
        for round in 0..<rewrites {
            for lesson in try context.fetch(FetchDescriptor<Lesson>()) { lesson.title = "Lesson \(lesson.minutes) round \(round)" }
            try context.save()
        }
        return count
    }

    /// Two shelves, the first holding three volumes.
    static func shelves(at path: String) throws {
        let container = try ModelContainer(for: Shelf.self, Volume.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        let first = Shelf(label: "first")
        first.volumes = [Volume(title: "A"), Volume(title: "B"), Volume(title: "C")]
        context.insert(first)
        context.insert(Shelf(label: "empty"))
        try context.save()
    }

    /// Two memos saved with MemoV1, then one more after a lightweight migration to MemoV2.
    static func migratedMemos(at path: String) throws {
        let configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
        do {
            let context = ModelContext(try ModelContainer(for: MemoV1.Memo.self, configurations: configuration))
            context.insert(MemoV1.Memo(title: "old 1", body: "a"))
            context.insert(MemoV1.Memo(title: "old 2", body: "b"))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: MemoV2.Memo.self, configurations: configuration))
        context.insert(MemoV2.Memo(title: "new", text: "c", priority: 1))
        try context.save()
    }

    /// A store written with StrataEngine alone: no schema, records of plain bytes.
    static func engineOnly(at path: String) throws {
        let store = try Store(path: path)
        defer { store.close() }
        try store.write { tx in
            let c = try tx.createCollection(named: "notes")
            let byKey = try tx.createIndex(named: "key", on: c, unique: true)
            for i in 1...5 {
                try tx.put(Array("note \(i)".utf8), row: RowID(i), in: c, indexKeys: [IndexKey(byKey, KeyEncoding.encode(i))])
            }
        }
    }

    /// Flips every bit of one byte of a file.
    static func flipByte(at offset: UInt64, of path: String) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [~byte])
    }

    static func bytes(of path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func size(of path: String) throws -> UInt64 {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.uint64Value)
    }
}

extension Tool {
    /// The package that built the tool, when it was built in the package's `.build` (as
    /// `swift run` does); nil for another scratch folder.
    static func packageFolder() throws -> URL? {
        var folder = try url().resolvingSymlinksInPath().deletingLastPathComponent()
        while folder.path != "/" {
            if folder.lastPathComponent == ".build" { return folder.deletingLastPathComponent() }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }
}
