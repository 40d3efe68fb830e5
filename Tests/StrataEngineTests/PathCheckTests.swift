// A write transaction checks that its store's path still names the store's file (a file put
// in its place stops the writer: `.replaced`). It asks for the file's device and inode alone:
// asking for its times (`stat`) made the next write take a fine-grained change time on Linux
// 6.13 and later, so every durable commit's fdatasync wrote the inode as well as the data
// (Docs/Durability.md, "The path check").
import Foundation
import Testing
@testable import StrataEngine

@Suite struct PathCheckTests {
    /// `identity(of:)` (statx for the inode alone) names the file `stat` names, for every kind
    /// of path a store may be at, and nothing where there is no file.
    @Test func identityAgreesWithStat() throws {
        let dir = try EngineTestDirectory()
        let fs = DiskFileSystem()
        let file = dir.path("file")
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let folder = dir.path("folder")
        try fs.createDirectory(folder)
        let link = dir.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: file)
        for path in [file, folder, link, "/dev/null", dir.url.path] {
            let identity = try #require(try fs.identity(of: path), "\(path)")
            #expect(identity == (try fs.status(of: path))?.identity, "\(path)")
            #expect(identity.inode != 0)
        }
        #expect(try fs.identity(of: link) == (try fs.identity(of: file)), "a symbolic link is followed")
        #expect(try fs.identity(of: dir.path("missing")) == nil)
        #expect(try fs.identity(of: file + "/below") == nil, "a path through a file names nothing")
        // Another file renamed over the path is another identity.
        let other = dir.path("other")
        try Data("y".utf8).write(to: URL(fileURLWithPath: other))
        let before = try fs.identity(of: file)
        try fs.rename(other, to: file)
        #expect(try fs.identity(of: file) != before)
        #expect(try fs.identity(of: file) == (try fs.status(of: file))?.identity)
    }

    /// Commits check the path with `identity(of:)` and never ask for its status (its times).
    @Test func commitsAskThePathsIdentityNotItsTimes() throws {
        let dir = try EngineTestDirectory()
        let fs = OpenCostTests.CountingFileSystem()
        let store = try Store(path: dir.path("store"), options: StoreOptions(), fileSystem: fs)
        defer { store.close() }
        let collection = try store.write { try $0.createCollection(named: "c") }
        let status = fs.counter.statusCalls.load(ordering: .relaxed)
        let identity = fs.counter.identityCalls.load(ordering: .relaxed)
        for row in RowID(1)...5 {
            try store.write { try $0.put([UInt8(row)], row: row, in: collection) }
        }
        #expect(fs.counter.statusCalls.load(ordering: .relaxed) == status, "no commit asked for the file's times")
        #expect(fs.counter.identityCalls.load(ordering: .relaxed) - identity >= 5, "each commit checked its path")
        // The check still sees a file put in the store's place.
        try Data("z".utf8).write(to: URL(fileURLWithPath: dir.path("intruder")))
        try fs.rename(dir.path("intruder"), to: dir.path("store"))
        #expect(throws: StoreError.self) { try store.write { try $0.put([9], row: 9, in: collection) } }
        #expect(!store.pathNamesItsFile)
        try fs.removeFile(dir.path("store"))  // not a store: the directory's check at teardown would say so
    }

    /// `permissions(of:)` and an open file's `size()`, asked without the times, agree with `stat`.
    @Test func permissionsAndSizeAgreeWithStat() throws {
        let dir = try EngineTestDirectory()
        let fs = DiskFileSystem()
        let file = dir.path("file")
        try Data(repeating: 7, count: 5_000).write(to: URL(fileURLWithPath: file))
        try fs.setPermissions(of: file, FilePermissions(mode: 0o640, owner: getuid(), group: getgid()))
        let folder = dir.path("folder")
        try fs.createDirectory(folder)
        for path in [file, folder] {
            let permissions = try #require(try fs.permissions(of: path), "\(path)")
            #expect(permissions == (try fs.status(of: path))?.permissions, "\(path)")
        }
        #expect(try fs.permissions(of: file)?.mode == 0o640)
        #expect(try fs.permissions(of: dir.path("missing")) == nil)
        let io = try fs.openFile(file, readOnly: true, create: false)
        defer { io.close() }
        #expect(try io.size() == 5_000)
        #expect(try io.size() == (try io.status()).size)
    }

    /// A commit that writes a blob file gives it the store's permissions without asking for the
    /// store file's times.
    @Test func blobCommitsAskNoStatus() throws {
        let dir = try EngineTestDirectory()
        let fs = OpenCostTests.CountingFileSystem()
        let store = try Store(path: dir.path("store"), options: StoreOptions(), fileSystem: fs)
        defer { store.close() }
        let status = fs.counter.statusCalls.load(ordering: .relaxed)
        var ids: [BlobID] = []
        for i in 0..<3 { ids.append(try store.write { try $0.putBlob([UInt8](repeating: UInt8(i), count: 100)) }) }
        #expect(fs.counter.statusCalls.load(ordering: .relaxed) == status, "no commit asked for a file's times")
        for id in ids { #expect(try store.read { try $0.blobFileExists(id) }) }
    }
}

