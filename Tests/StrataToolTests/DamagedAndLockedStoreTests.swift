// The commands on stores that are damaged, or held by someone else.
import Foundation
import Strata
import StrataEngine
import Testing
import StrataTestSupport

@Suite struct DamagedStoreTests {
    /// A byte flipped inside an earlier commit: verify exits 1 and names the place.
    @Test func verifyNamesTheDamagedPlace() throws {
        let folder = try TestFolder()
        let path = folder.path()
        folder.expectDamage(at: path)   // a byte is flipped, on purpose
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

    /// An index that disagrees with a record (here: a row's unique entry moved to another key
    /// by the engine directly, checksums all valid): verify computes each record's keys from
    /// the stored schema and names the row.
    @Test func verifyChecksIndexEntriesAgainstTheirRecords() throws {
        let folder = try TestFolder()
        let path = folder.path()
        folder.expectDamage(at: path)   // an index entry is moved, on purpose
        try Fixture.lessons(at: path, count: 10)
        do {
            let store = try Store(path: path)
            try store.write { tx in
                let lessons = try #require(tx.collection(named: "Lesson"))
                let byID = try #require(tx.index(named: "unique:id", in: lessons)).id
                let byStart = try #require(tx.index(named: "index:startsAt", in: lessons)).id
                let schema = try #require(try StoredModelSchema(tx))
                let keysOf = schema.indexKeys(tx)
                let record = try #require(try tx.record(3, in: lessons))
                let keys = try #require(try record.withUnsafeBytes { try keysOf(lessons, 3, $0) })
                #expect(Set(keys.map(\.index)) == [byID, byStart])
                let moved = keys.map { $0.index == byID ? IndexKey(byID, KeyEncoding.encode(UUID())) : $0 }
                try tx.put(record, row: 3, in: lessons, indexKeys: moved, previousKeys: keys)
            }
        }
        let text = try Tool.run("verify", path)
        #expect(text.status == 1, "\(text)")
        #expect(text.stdout.contains("row 3 of collection 1 (Lesson)"), "\(text)")
    }

    /// A damaged header stops the store from opening: verify still reports it as damage.
    @Test func damagedHeader() throws {
        let folder = try TestFolder()
        let path = folder.path()
        folder.expectDamage(at: path)   // the header is damaged, on purpose
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
    /// A store this process holds open for writing: `compact` (which writes) reports it
    /// locked, exits 1 and changes nothing; `info`, `verify` and `dump` read the last commit
    /// the writer published, also after it commits again.
    @Test func commandsOnAStoreAnotherProcessWrites() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 20, rewrites: 1)
        let size = try Fixture.size(of: path)

        let store = try Store(path: path)
        let compact = try Tool.run("compact", path)
        #expect(compact.status == 1, "\(compact)")
        #expect(compact.stderr.contains("\(path) is locked"), "\(compact)")
        #expect(compact.stdout.isEmpty, "\(compact)")
        #expect(try Fixture.size(of: path) == size)
        let verify = try Tool.run("verify", path)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("clean"), "\(verify)")
        #expect(try Tool.run("dump", path).lines.count == 20)
        #expect(try Tool.run("info", path).status == 0)
        // The writer goes on; the tools see its new commit.
        try store.write { tx in
            let c = try #require(tx.collection(named: "Lesson"))
            try tx.setMetadata("note", [1])
            _ = c
        }
        let sequence = try store.read { $0.sequence }
        let info = try Tool.run("info", path, "--json").object()
        #expect(info["last_commit"] as? Int == Int(sequence), "\(info)")
        #expect(try Tool.run("verify", path).status == 0)
        store.close()

        #expect(try Tool.run("compact", path).status == 0)
        #expect(try Fixture.size(of: path) < size)
    }

    /// Readers share a store, and do not keep a writer (here, compaction) out.
    @Test func readersShareTheStore() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 5)
        let reader = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(try Tool.run("info", path).status == 0)
        #expect(try Tool.run("dump", path).lines.count == 5)
        let compact = try Tool.run("compact", path)
        #expect(compact.status == 0, "\(compact)")
        #expect(try reader.read { tx in try tx.count(in: #require(tx.collection(named: "Lesson"))) } == 5)
        #expect(try Tool.run("dump", path).lines.count == 5)
        reader.close()
    }
}

@Suite struct UpgradeCommandTests {
    /// A store of format version 1: every command names `strata upgrade`; it converts the
    /// store, which then opens, verifies and dumps; a second run has nothing to do.
    @Test func upgradeConvertsAnOlderStore() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try FormatVersion1Fixture.install(at: path)
        let info = try Tool.run("info", path)
        #expect(info.status == 1, "\(info)")
        #expect(info.stderr.contains("strata upgrade \(path)"), "\(info)")

        let run = try Tool.run("upgrade", path)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout.contains("converted from file format version 1 to 2"), "\(run)")
        #expect(try Tool.run("verify", path).status == 0)
        #expect(try Tool.run("info", path, "--json").object()["format_version"] as? Int == 2)
        let again = try Tool.run("upgrade", path, "--json").object()
        #expect(again["from_version"] as? Int == 2)
    }
}

@Suite struct UnwritableStoreTests {
    /// `strata compact` on a store this user may not write says what to do in a shell (the
    /// file's permissions), not the API call a program would make.
    @Test func compactOnAStoreThisUserMayNotWriteSaysWhatToDoInTheShell() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 10)
        // Root may write any file: then the tool runs as nobody, on files root owns.
        let asNobody = geteuid() == 0
        if !asNobody { try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path) }
        let run = try Tool.run(["compact", path], asUser: asNobody ? 65534 : nil)
        let text = run.stdout + run.stderr
        #expect(run.status == 1, "\(run)")
        #expect(text.contains("cannot be written"), "\(run)")
        #expect(text.contains("chmod"), "\(run)")
        #expect(!text.contains("StoreOptions"), "\(run)")
        #expect(try Tool.run("verify", path).status == 0)
    }
}
