import Foundation
import Testing
@testable import Strata
@_spi(StorageBackend) import StrataRecords

/// Strata works out a store's path without `URL.path` (`FilePaths`, for a fresh process's open;
/// W8, Docs/Benchmarks.md). Its answers must be Foundation's for every URL a store may be
/// given, and two paths to one file must give one key, so that the containers of a process
/// share the store.
@Suite struct FilePathsTests {
    static let paths = [
        "/tmp/a/store.strata", "/tmp/a b/store c.strata", "/tmp/Zürich ✓/東京.store", "/tmp/100%/a%20b",
        "/tmp/q?x=1/s", "/tmp/hash#frag/s", "/tmp/dir/", "/tmp//double//slash", "/", "/tmp/a+b&c;d=e",
        "/tmp/percent%2F/s", "relative/store.strata", "store.strata", "/tmp/./dot/../dotdot",
    ]

    @Test(arguments: paths)
    func pathIsFoundations(path: String) {
        let url = URL(fileURLWithPath: path)
        #expect(FilePaths.path(of: url) == url.path, "\(path)")
        let isDirectory = URL(fileURLWithPath: path, isDirectory: true)
        #expect(FilePaths.path(of: isDirectory) == isDirectory.path, "\(path)/")
    }

    @Test func otherSpellingsOfFileURLs() throws {
        let urls = [
            try #require(URL(string: "file:///tmp/a%20b/c.strata")),
            try #require(URL(string: "file:///tmp/%E2%9C%93")),
            try #require(URL(string: "file:///tmp/bad%zz")),
            try #require(URL(string: "file:///tmp/x?query")),
            URL(fileURLWithPath: "sub/store.strata", relativeTo: URL(fileURLWithPath: "/tmp/base/", isDirectory: true)),
            URL(filePath: "/tmp/filepath/store"),
        ]
        for url in urls { #expect(FilePaths.path(of: url) == url.path, "\(url)") }
    }

    @Test(arguments: ["/a/./b/../c", "a/b", "/../x", "//x//y/", "/", "/a/b/..", "/a/..", "./x", "../up/x", "/a/b/.", "/tmp/é/./ü/../x", "/a/.../b/..x/x..", ""])
    func standardizedIsFoundations(path: String) {
        #expect(FilePaths.standardized(path) == URL(filePath: path).standardizedFileURL.path, "\(path)")
    }

    @Test func defaultDirectoryPathIsDefaultDirectorys() {
        #expect(FilePaths.standardized(ModelConfiguration.defaultDirectoryPath) == FilePaths.standardized(ModelConfiguration.defaultDirectory.path))
    }

    @Test func canonicalPathsNameOneFileOnce() throws {
        let dir = TemporaryDirectory()
        let fm = FileManager.default
        let real = dir.url.appendingPathComponent("real").path
        try fm.createDirectory(atPath: real, withIntermediateDirectories: true)
        let link = dir.url.appendingPathComponent("link").path
        try fm.createSymbolicLink(atPath: link, withDestinationPath: real)
        let file = real + "/store.strata"
        #expect(fm.createFile(atPath: file, contents: Data([1])))

        // An existing file: as Foundation resolves it, by any spelling.
        let key = FilePaths.canonical(file)
        #expect(key == URL(filePath: file).standardizedFileURL.resolvingSymlinksInPath().path)
        #expect(FilePaths.canonical(link + "/store.strata") == key)
        #expect(FilePaths.canonical(link + "/../real/./store.strata") == key)
        // A file not made yet: its folder resolved, by any spelling.
        #expect(FilePaths.canonical(link + "/new.strata") == FilePaths.canonical(real + "/new.strata"))
        #expect(FilePaths.canonical(real + "/missing/deeper/new.strata") == FilePaths.canonical(link + "/missing/deeper/new.strata"))
        #expect(FilePaths.canonical("/") == "/")
    }

    /// Two containers of a process opened through a symbolic link and the real path share one
    /// store: a save through one is read through the other at once.
    @Test func containersThroughALinkShareTheStore() throws {
        let dir = TemporaryDirectory()
        let real = dir.url.appendingPathComponent("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = dir.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        let a = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: real.appendingPathComponent("s.store")))
        let b = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: link.appendingPathComponent("s.store")))
        let context = ModelContext(a)
        context.insert(Trip(name: "shared", startDate: Date(timeIntervalSince1970: 0)))
        try context.save()
        #expect(try ModelContext(b).fetchCount(FetchDescriptor<Trip>()) == 1)
    }
}
