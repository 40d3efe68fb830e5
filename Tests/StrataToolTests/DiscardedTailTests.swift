// `strata verify` on the bytes past a store's last valid commit, made by cutting and appending
// real bytes of real store files: a torn tail (a commit cut short, as a crash leaves it) is a
// warning with exit 0; a whole commit there (a lost commit) is damage, exit 1.
import Foundation
import Strata
import StrataEngine
import Testing

@Suite struct DiscardedTailTests {
    /// A store of two saves: the file after the first (`before`) and the bytes of the second
    /// commit (`last`), which starts at `before.count`.
    struct TwoSaves {
        let folder: TestFolder
        let path: String
        let before: [UInt8]
        let last: [UInt8]

        init() throws {
            folder = try TestFolder()
            path = folder.path()
            try Fixture.lessons(at: path, count: 40)
            before = try Fixture.bytes(of: path)
            let context = ModelContext(try ModelContainer(for: Lesson.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
            for i in 40..<60 { context.insert(Lesson(i)) }
            try context.save()
            // Less the zeros the writer wrote ahead of its next commits (the container is open).
            last = Self.withoutZeroTail(Array(try Fixture.bytes(of: path)[before.count...]))
        }

        /// Bytes without the zeros at their end.
        static func withoutZeroTail(_ bytes: [UInt8]) -> [UInt8] { Array(bytes[..<((bytes.lastIndex { $0 != 0 } ?? -1) + 1)]) }

        /// Writes the first save's bytes followed by `tail`.
        func write(tail: [UInt8]) throws { try Fixture.write(before + tail, to: path) }
    }

    /// A commit cut short anywhere, from its first body byte to one byte short of its end:
    /// clean, exit 0, and a warning that says how many bytes recovery discards.
    @Test(arguments: [1, 2, 3, 5, 8])
    func aTornTailIsAWarning(eighths: Int) throws {
        let store = try TwoSaves()
        var cut = eighths == 8 ? store.last.count - 1 : store.last.count * eighths / 8
        try store.write(tail: Array(store.last.prefix(cut)))
        // The tail is reported up to its last nonzero byte: zeros after it are not a commit
        // (a writer writes zeros ahead of its commits).
        cut = TwoSaves.withoutZeroTail(Array(store.last.prefix(cut))).count

        let text = try Tool.run("verify", store.path)
        #expect(text.status == 0, "\(text)")
        #expect(text.lines.first?.hasSuffix("40 objects decoded with the stored schema)") == true, "\(text)")
        #expect(text.lines.contains("warning: the last \(cut) byte\(cut == 1 ? "" : "s") (from byte \(store.before.count)) are a commit cut short, as a crash leaves it; recovery discards them when the store is next opened for writing"), "\(text)")

        let json = try Tool.run("verify", store.path, "--json")
        #expect(json.status == 0, "\(json)")
        let report = try json.object()
        #expect(report["clean"] as? Bool == true)
        let tail = try #require(report["discarded_tail"] as? [String: Any], "\(json)")
        #expect(tail["bytes"] as? Int == cut)
        #expect(tail["offset"] as? Int == store.before.count)
        #expect((tail["whole_commits"] as? [Any])?.isEmpty == true)
        #expect((report["warnings"] as? [String])?.count == 1)
    }

    /// Cut into the first commit after the store's creation (the container's, with the
    /// schema): the store opens empty, and verify says so with the warning, not a bare "clean".
    @Test func cutIntoTheFirstDataCommit() throws {
        let folder = try TestFolder()
        let path = folder.path()
        let empty = folder.path("empty.store")
        try Store(path: empty).close()
        let emptySize = try Fixture.size(of: empty)
        try Fixture.lessons(at: path, count: 40)
        let bytes = try Fixture.bytes(of: path)
        try Fixture.write(Array(bytes.prefix(Int(emptySize) + 100)), to: path)

        let run = try Tool.run("verify", path, "--json")
        #expect(run.status == 0, "\(run)")
        let report = try run.object()
        #expect(report["records"] as? Int == 0, "\(run)")
        #expect((report["discarded_tail"] as? [String: Any])?["bytes"] as? Int == 100, "\(run)")
        let text = try Tool.run("verify", path)
        #expect(text.lines.contains { $0.hasPrefix("warning: the last 100 bytes (from byte \(emptySize))") }, "\(text)")
    }

    /// A whole commit whose body was damaged after it was written: exit 1, named as a lost
    /// commit with its sequence and where it is.
    @Test func aWholeCommitWithADamagedBodyIsALostCommit() throws {
        let store = try TwoSaves()
        var tail = store.last
        tail[tail.count / 3] ^= 0x40
        try store.write(tail: tail)

        let text = try Tool.run("verify", store.path)
        #expect(text.status == 1, "\(text)")
        #expect(text.stdout.contains("damaged, 1 problem"), "\(text)")
        #expect(text.stdout.contains("hold a whole commit (commit 3) that recovery discards: its body"), "\(text)")
        #expect(text.stdout.contains("a lost commit"), "\(text)")
        #expect(!text.stdout.contains("warning:"), "\(text)")

        let report = try Tool.run("verify", store.path, "--json").object()
        #expect(report["clean"] as? Bool == false)
        let whole = try #require((report["discarded_tail"] as? [String: Any])?["whole_commits"] as? [[String: Any]])
        #expect(whole.count == 1)
        #expect(whole.first?["sequence"] as? Int == 3)
        #expect(whole.first?["end"] as? Int == store.before.count + store.last.count)
    }

    /// A whole commit whose own record fails its checksum: a lost commit too.
    @Test func aWholeCommitWithADamagedRecordIsALostCommit() throws {
        let store = try TwoSaves()
        var tail = store.last
        tail[tail.count - 40] ^= 0x01   // inside the commit record's catalog, before its trailer
        try store.write(tail: tail)
        let run = try Tool.run("verify", store.path)
        #expect(run.status == 1, "\(run)")
        #expect(run.stdout.contains("hold a whole commit that recovery discards: its commit record fails its checksum"), "\(run)")
    }

    /// The last commit appended back whole: the store is as it was, clean with no warning.
    @Test func theLastCommitAppendedBackIsClean() throws {
        let store = try TwoSaves()
        try store.write(tail: [])
        #expect(try Tool.run("verify", store.path).lines.count == 1)
        try store.write(tail: store.last)
        let run = try Tool.run("verify", store.path)
        #expect(run.status == 0, "\(run)")
        #expect(run.lines.count == 1 && run.stdout.contains("60 objects decoded"), "\(run)")
    }
}
