// The commands on stores that are damaged, or held by someone else.
import Foundation
import Strata
import StrataEngine
import Testing

@Suite struct DamagedStoreTests {
    /// A byte flipped inside an earlier commit: verify exits 1 and names the place.
    @Test func verifyNamesTheDamagedPlace() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 300)
        let firstSize = try Fixture.size(of: path)
        do {   // one more commit, so the damage is not in the last one (which opening checks)
            let container = try ModelContainer(for: Lesson.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = ModelContext(container)
            context.insert(Lesson(1000))
            try context.save()
        }
        #expect(try Tool.run("verify", path).status == 0)
        let offset = firstSize / 2
        try Fixture.flipByte(at: offset, of: path)

        let text = try Tool.run("verify", path)
        #expect(text.status == 1, "\(text)")
        #expect(text.stdout.contains("damaged"), "\(text)")
        #expect(text.stdout.contains("at byte "), "\(text)")
        #expect(text.stdout.contains("fails its checksum"), "\(text)")

        let json = try Tool.run("verify", path, "--json")
        #expect(json.status == 1, "\(json)")
        let report = try json.object()
        #expect(report["clean"] as? Bool == false)
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect(!problems.isEmpty)
        // Every problem with an offset points at or before the flipped byte (its page, record or commit body).
        let offsets = problems.compactMap { $0["offset"] as? Int }
        #expect(!offsets.isEmpty && offsets.allSatisfy { $0 <= Int(offset) }, "\(problems)")
    }

    /// A damaged header stops the store from opening: verify still reports it as damage.
    @Test func damagedHeader() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 10)
        try Fixture.flipByte(at: 20, of: path)

        let verify = try Tool.run("verify", path)
        #expect(verify.status == 1, "\(verify)")
        #expect(verify.stdout.contains("damaged"), "\(verify)")
        #expect(verify.stdout.contains("at byte 0"), "\(verify)")
        let info = try Tool.run("info", path)
        #expect(info.status == 1, "\(info)")
        #expect(info.stderr.contains("is damaged at byte 0"), "\(info)")
    }
}

@Suite struct LockedStoreTests {
    /// A store this process holds open for writing: commands report it locked, exit 1, and
    /// change nothing; once it is closed they work.
    @Test func commandsReportALockedStore() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 20, rewrites: 1)
        let size = try Fixture.size(of: path)

        let store = try Store(path: path)
        for command in ["compact", "info", "verify", "dump"] {
            let run = try Tool.run(command, path)
            #expect(run.status == 1, "\(command): \(run)")
            #expect(run.stderr.contains("\(path) is locked"), "\(command): \(run)")
            #expect(run.stdout.isEmpty, "\(command): \(run)")
        }
        #expect(try Fixture.size(of: path) == size)
        store.close()

        #expect(try Tool.run("compact", path).status == 0)
        #expect(try Fixture.size(of: path) < size)
    }

    /// Readers share a store: a read-only holder keeps out compaction, not info.
    @Test func readersShareTheStore() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 5)
        let reader = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(try Tool.run("info", path).status == 0)
        #expect(try Tool.run("dump", path).lines.count == 5)
        let compact = try Tool.run("compact", path)
        #expect(compact.status == 1, "\(compact)")
        #expect(compact.stderr.contains("is locked"), "\(compact)")
        reader.close()
    }
}
