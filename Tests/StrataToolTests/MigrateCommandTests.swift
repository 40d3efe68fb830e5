// `strata migrate`: records of older layouts rewritten into the current one, readable by the
// object layer afterwards; all or nothing; locked and read-only stores; the progress it reports.
import Foundation
import Strata
import StrataEngine
import Testing

enum PostV1 {
    final class Post: PersistentModel {
        @Attribute(.unique) var number: Int = 0
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        @Attribute var stars: Int = 0
        init() {}
        init(_ i: Int) { number = i; title = "post \(i)"; body = "body \(i)"; stars = i % 5 }
    }
    final class Tag: PersistentModel {
        @Attribute var name: String = ""
        init() {}
        init(name: String) { self.name = name }
    }
}

enum PostV2 {
    /// `body` renamed to `text`, `priority` added (and indexed), `stars` removed.
    final class Post: PersistentModel {
        @Attribute(.unique) var number: Int = 0
        @Attribute var title: String = ""
        @Attribute(originalName: "body") var text: String = ""
        @Attribute var priority: Int = 3
        init() {}
        init(_ i: Int, priority: Int) { number = i; title = "post \(i)"; text = "text \(i)"; self.priority = priority }
        static var indexes: [[PartialKeyPath<Post>]] { [[\.priority]] }
    }
    /// `color` added.
    final class Tag: PersistentModel {
        @Attribute var name: String = ""
        @Attribute var color: String = "red"
        init() {}
    }
}

@Suite struct MigrateCommandTests {
    static func configuration(_ path: String) -> ModelConfiguration { ModelConfiguration(url: URL(fileURLWithPath: path)) }

    /// `old` posts and two tags written with V1, then the store opened with V2 and `new` more
    /// posts saved.
    static func store(at path: String, old: Int = 50, new: Int = 10) throws {
        do {
            let context = ModelContext(try ModelContainer(for: PostV1.Post.self, PostV1.Tag.self, configurations: configuration(path)))
            for i in 0..<old { context.insert(PostV1.Post(i)) }
            context.insert(PostV1.Tag(name: "swift"))
            context.insert(PostV1.Tag(name: "linux"))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: PostV2.Post.self, PostV2.Tag.self, configurations: configuration(path)))
        for i in old..<(old + new) { context.insert(PostV2.Post(i, priority: 7)) }
        try context.save()
    }

    /// The dump's objects, without the `_layout` marker.
    static func objects(_ path: String) throws -> [NSDictionary] {
        try Tool.run("dump", path).objects().map { object in
            var object = object
            object["_layout"] = nil
            return object as NSDictionary
        }
    }

    @Test func rewritesOldRecordsAndTheObjectLayerReadsThemAfterwards() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.store(at: path)
        let before = try Tool.run("dump", path).objects()
        #expect(before.filter { $0["_layout"] != nil }.count == 52, "50 posts and 2 tags of layout 0")

        let run = try Tool.run("migrate", path)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("52 records rewritten into the current layout"), "\(run)")
        let lines = run.lines.map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("Post 50 of 60 rewritten"), "\(run)")
        #expect(lines.contains("Tag 2 of 2 rewritten"), "\(run)")
        #expect(run.stderr.isEmpty, "no progress bar when standard error is not a terminal")

        // The same values, now all in the current layout.
        let after = try Tool.run("dump", path).objects()
        #expect(after.allSatisfy { $0["_layout"] == nil })
        #expect(after.map { $0 as NSDictionary } == (try Self.objects(path)))
        #expect(try Self.objects(path) == before.map { object in
            var object = object
            object["_layout"] = nil
            return object as NSDictionary
        })
        let verify = try Tool.run("verify", path)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("62 objects decoded"), "\(verify)")

        // The object layer reads every value, through the indexes too.
        do {
            let context = ModelContext(try ModelContainer(for: PostV2.Post.self, PostV2.Tag.self, configurations: Self.configuration(path)))
            let posts = try context.fetch(FetchDescriptor<PostV2.Post>(sortBy: [SortDescriptor(\.number)]))
            #expect(posts.map(\.number) == Array(0..<60))
            #expect(posts.map(\.title) == (0..<60).map { "post \($0)" })
            #expect(posts.map(\.text) == (0..<50).map { "body \($0)" } + (50..<60).map { "text \($0)" })
            #expect(posts.map(\.priority) == Array(repeating: 3, count: 50) + Array(repeating: 7, count: 10))
            #expect(try context.fetchCount(FetchDescriptor<PostV2.Post>(predicate: #Predicate { $0.priority == 3 })) == 50)
            #expect(try context.fetch(FetchDescriptor<PostV2.Post>(predicate: #Predicate { $0.number == 17 })).map(\.text) == ["body 17"])
            #expect(try context.fetch(FetchDescriptor<PostV2.Tag>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name) \($0.color)" }
                    == ["linux red", "swift red"])
            // Changed and saved after the rewrite, as any record.
            posts[3].text = "changed"
            try context.save()
        }

        // A second run has nothing to do, and writes nothing.
        let size = try Fixture.size(of: path)
        let again = try Tool.run("migrate", path, "--json")
        #expect(again.status == 0, "\(again)")
        let json = try again.object()
        #expect(json["rewritten"] as? Int == 0)
        #expect(json["schema"] as? Bool == true)
        let entities = try #require(json["entities"] as? [[String: Any]])
        #expect(entities.map { $0["name"] as? String } == ["Post", "Tag"])
        #expect(entities.map { $0["records"] as? Int } == [60, 2])
        #expect(entities.map { $0["rewritten"] as? Int } == [0, 0])
        #expect(try Fixture.size(of: path) == size)
        #expect(try Tool.run("migrate", path).stdout.contains("nothing rewritten"))
    }

    @Test func anErrorLeavesTheStoreAsItWas() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.store(at: path, old: 5, new: 1)
        // As if written before Strata kept defaults: Tag's `color` has none. Post comes first
        // in the schema, so its records are rewritten before Tag's fail.
        try editSchema(path) { entities in
            for i in entities.indices where entities[i]["name"] as? String == "Tag" { entities[i]["defaults"] = nil }
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let run = try Tool.run("migrate", path)
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("Tag.color"), "\(run)")
        #expect(run.stderr.contains("keeps no default"), "\(run)")
        #expect(run.stderr.contains("Open the store once, writable, with the app's current models"), "\(run)")
        #expect(run.stdout.isEmpty, "\(run)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try Tool.run("dump", path).objects().filter { $0["_layout"] != nil }.count == 7)

        // Doing what the message says: the app's models record the default, and it works.
        _ = try ModelContainer(for: PostV2.Post.self, PostV2.Tag.self, configurations: Self.configuration(path))
        let json = try Tool.run("migrate", path, "--json").object()
        #expect(json["rewritten"] as? Int == 7)
        #expect(try Tool.run("verify", path).status == 0)
    }

    @Test func aLockedOrReadOnlyStoreIsAnErrorAndChangesNothing() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.store(at: path, old: 3, new: 0)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))

        let holder = try Store(path: path)
        let locked = try Tool.run("migrate", path)
        #expect(locked.status == 1, "\(locked)")
        #expect(locked.stderr.contains("\(path) is locked"), "\(locked)")
        holder.close()

        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        let readOnly = try Tool.run("migrate", path)
        #expect(readOnly.status == 1, "\(readOnly)")
        #expect(readOnly.stderr.contains("\(path) is read-only"), "\(readOnly)")
        #expect(readOnly.stderr.contains("write access"), "\(readOnly)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(try Tool.run("migrate", path).status == 0)
    }

    @Test func storesWithoutOldRecordsOrWithoutASchema() throws {
        let folder = try TestFolder()
        let lessons = folder.path("lessons.store")
        try Fixture.lessons(at: lessons, count: 5)
        let run = try Tool.run("migrate", lessons)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("nothing rewritten"), "\(run)")
        #expect(run.lines.map { $0.split(separator: " ").joined(separator: " ") }.contains("Lesson 0 of 5 rewritten"), "\(run)")

        let engine = folder.path("engine.store")
        try Fixture.engineOnly(at: engine)
        let plain = try Tool.run("migrate", engine)
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdout.contains("no object schema"), "\(plain)")
        #expect(try Tool.run("migrate", engine, "--json").object()["schema"] as? Bool == false)

        let missing = try Tool.run("migrate", folder.path("missing.store"))
        #expect(missing.status == 1, "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("missing.store")))
        #expect(try Tool.run("migrate").status == 2)
    }

    /// A record whose fields pass 64 KiB has 32-bit offsets; it stays readable rewritten.
    @Test func aLargeRecordIsRewrittenWithWideOffsets() throws {
        let folder = try TestFolder()
        let path = folder.path()
        let large = String(repeating: "long text ", count: 8_000)
        do {
            let context = ModelContext(try ModelContainer(for: MemoV1.Memo.self, configurations: Self.configuration(path)))
            context.insert(MemoV1.Memo(title: "large", body: large))
            context.insert(MemoV1.Memo(title: "small", body: "short"))
            try context.save()
        }
        _ = try ModelContainer(for: MemoV2.Memo.self, configurations: Self.configuration(path))
        let run = try Tool.run("migrate", path, "--json")
        #expect(run.status == 0, "\(run)")
        #expect(try run.object()["rewritten"] as? Int == 2)
        let verify = try Tool.run("verify", path)
        #expect(verify.status == 0, "\(verify)")
        let context = ModelContext(try ModelContainer(for: MemoV2.Memo.self, configurations: Self.configuration(path)))
        let memos = try context.fetch(FetchDescriptor<MemoV2.Memo>(sortBy: [SortDescriptor(\.title)]))
        #expect(memos.map(\.text) == [large, "short"])
        #expect(memos.map(\.priority) == [3, 3])
    }

    /// The progress `strata migrate` draws: one stage per entity with older layouts, counting
    /// its records, then the commit and the end.
    @Test func progressIsReportedStageByStage() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.store(at: path, old: 2500, new: 0)
        let store = try Store(path: path)
        defer { store.close() }
        var reports: [MigrationProgress] = []
        let report = try upgradeRecords(in: store) { reports.append($0) }
        #expect(report.rewritten == 2502)
        #expect(report.entities == [.init(name: "Post", records: 2500, rewritten: 2500), .init(name: "Tag", records: 2, rewritten: 2)])
        #expect(reports.allSatisfy { $0.stages == 2 })
        #expect(reports.first.map { "\($0.stage) \($0.step) \($0.completedUnitCount)/\($0.totalUnitCount)" } == "0 rewrite Post records 0/2500")
        #expect(reports.contains { $0.stage == 0 && $0.completedUnitCount == 1024 })
        #expect(reports.contains { $0.stage == 1 && $0.step == "rewrite Tag records" && $0.completedUnitCount == 2 })
        #expect(reports.suffix(2).map(\.step) == ["commit", "done"])
        #expect(reports.last?.fractionCompleted == 1)
        let fractions = reports.map(\.fractionCompleted)
        #expect(fractions == fractions.sorted())

        // Nothing to do: no stage runs, and nothing is committed.
        reports = []
        #expect(try upgradeRecords(in: store) { reports.append($0) }.rewritten == 0)
        #expect(reports.last?.step == "done")
        #expect(!reports.contains { $0.step == "commit" })
    }

    /// The stored schema's entities as JSON objects, edited by `body` and written back.
    func editSchema(_ path: String, _ body: (inout [[String: Any]]) throws -> Void) throws {
        let store = try Store(path: path)
        defer { store.close() }
        try store.write { tx in
            let bytes = try #require(try tx.metadata("strata.schema"))
            var schema = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            var entities = try #require(schema["entities"] as? [[String: Any]])
            try body(&entities)
            schema["entities"] = entities
            try tx.setMetadata("strata.schema", Array(try JSONSerialization.data(withJSONObject: schema)))
        }
    }
}
