// Opening a store reads the header, the last commit record and the pages one lookup needs:
// the cost does not grow with the number of records.
import Foundation
import Synchronization
import Testing
@testable import StrataEngine

@Suite struct OpenCostTests {
    /// Counts the reads made through the files it opens.
    final class ReadCounter: Sendable {
        let calls = Atomic<Int>(0)
        let bytes = Atomic<Int>(0)
        /// `status(of:)` and `identity(of:)` asked of the file system (PathCheckTests).
        let statusCalls = Atomic<Int>(0)
        let identityCalls = Atomic<Int>(0)
    }

    final class CountingFile: FileHandleIO {
        let base: any FileHandleIO
        let counter: ReadCounter
        init(_ base: any FileHandleIO, _ counter: ReadCounter) {
            self.base = base
            self.counter = counter
        }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
            let n = try base.read(into: buffer, at: offset)
            counter.calls.add(1, ordering: .relaxed)
            counter.bytes.add(n, ordering: .relaxed)
            return n
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try base.write(bytes, at: offset) }
        func sync() throws { try base.sync() }
        func size() throws -> UInt64 { try base.size() }
        func truncate(to size: UInt64) throws { try base.truncate(to: size) }
        func map(length: Int, roomToGrow: Bool) throws -> any FileMapping { try base.map(length: length, roomToGrow: roomToGrow) }
        func mapShared(length: Int) throws -> any SharedFileMapping { try base.mapShared(length: length) }
        func lock(_ range: Range<UInt64>, exclusive: Bool) throws -> Bool { try base.lock(range, exclusive: exclusive) }
        func unlock(_ range: Range<UInt64>) { base.unlock(range) }
        func conflictingLock(in range: Range<UInt64>, exclusive: Bool) throws -> UInt64? { try base.conflictingLock(in: range, exclusive: exclusive) }
        func close() { base.close() }
        func status() throws -> FileStatus { try base.status() }
        func setPermissions(_ permissions: FilePermissions) throws { try base.setPermissions(permissions) }
    }

    struct CountingFileSystem: FileSystem {
        let base = DiskFileSystem()
        let counter = ReadCounter()
        func openFile(_ path: String, readOnly: Bool, create: Bool) throws -> any FileHandleIO {
            CountingFile(try base.openFile(path, readOnly: readOnly, create: create), counter)
        }
        func openFile(_ path: String, readOnly: Bool, create: Bool, mode: UInt32) throws -> any FileHandleIO {
            CountingFile(try base.openFile(path, readOnly: readOnly, create: create, mode: mode), counter)
        }
        func status(of path: String) throws -> FileStatus? {
            counter.statusCalls.add(1, ordering: .relaxed)
            return try base.status(of: path)
        }
        func identity(of path: String) throws -> FileIdentity? {
            counter.identityCalls.add(1, ordering: .relaxed)
            return try base.identity(of: path)
        }
        func permissions(of path: String) throws -> FilePermissions? { try base.permissions(of: path) }
        func setPermissions(of path: String, _ permissions: FilePermissions) throws { try base.setPermissions(of: path, permissions) }
        func fileExists(_ path: String) -> Bool { base.fileExists(path) }
        func isDirectory(_ path: String) -> Bool { base.isDirectory(path) }
        func rename(_ from: String, to: String) throws { try base.rename(from, to: to) }
        func removeFile(_ path: String) throws { try base.removeFile(path) }
        func createDirectory(_ path: String) throws { try base.createDirectory(path) }
        func listDirectory(_ path: String) throws -> [String] { try base.listDirectory(path) }
        func syncDirectory(_ path: String) throws { try base.syncDirectory(path) }
        func linkFile(_ existing: String, to newPath: String) throws { try base.linkFile(existing, to: newPath) }
        func removeDirectory(_ path: String) throws { try base.removeDirectory(path) }
    }

    struct Cost: CustomStringConvertible {
        var fileSize: Int
        var pages: Int
        var blocks: Int
        var readCalls: Int
        var bytesRead: Int
        var description: String { "file \(fileSize) B: \(pages) pages + \(blocks) blocks, \(readCalls) reads, \(bytesRead) B read" }
    }

    static func record(_ row: RowID) -> [UInt8] { withUnsafeBytes(of: row.bigEndian) { Array($0) } }

    /// A store of `count` small records written in one transaction, plus a few small commits after it.
    static func build(_ path: String, count: Int) throws {
        let store = try Store(path: path, options: StoreOptions(durability: .deferred))
        try store.write { tx in
            let c = try tx.createCollection(named: "c")
            for row in 1...RowID(count) { try tx.put(record(row), row: row, in: c) }
        }
        for i in 1...3 {
            try store.write { tx in try tx.setMetadata("m", [UInt8(i)]) }
        }
        try store.sync()
    }

    /// Opens the store, looks up one record, and says what that read.
    static func openAndLookUp(_ path: String, row: RowID) throws -> Cost {
        let fs = CountingFileSystem()
        let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
        let found = try store.read { tx in try tx.record(row, in: #require(tx.collection(named: "c"))) }
        #expect(found == record(row))
        let stats = store.statistics
        let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        return Cost(fileSize: size, pages: stats.pagesRead, blocks: stats.blocksRead,
                    readCalls: fs.counter.calls.load(ordering: .relaxed), bytesRead: fs.counter.bytes.load(ordering: .relaxed))
    }

    @Test func openingReadsABoundedNumberOfPages() throws {
        let dir = try EngineTestDirectory()
        let small = dir.path("small.strata")
        let large = dir.path("large.strata")
        try Self.build(small, count: 1_000)
        try Self.build(large, count: 100_000)
        let smallCost = try Self.openAndLookUp(small, row: 500)
        let largeCost = try Self.openAndLookUp(large, row: 50_000)
        print("open + one lookup, 1k records:", smallCost)
        print("open + one lookup, 100k records:", largeCost)

        // One page per tree level and one record block: a 100k-record tree is 3 or 4 levels deep.
        #expect(smallCost.pages + smallCost.blocks <= 6, "\(smallCost)")
        #expect(largeCost.pages + largeCost.blocks <= 7, "\(largeCost)")
        #expect(largeCost.pages + largeCost.blocks <= smallCost.pages + smallCost.blocks + 3)
        // Reads through the file: the header, the commit record and those pages, never the log.
        #expect(largeCost.readCalls <= 20, "\(largeCost)")
        #expect(largeCost.bytesRead <= 256 << 10, "\(largeCost)")
        #expect(largeCost.bytesRead * 10 < largeCost.fileSize, "\(largeCost)")
        #expect(largeCost.readCalls <= smallCost.readCalls + 5, "small: \(smallCost), large: \(largeCost)")
    }

    /// Reopening a store after a compaction is as cheap.
    @Test func openingACompactedStoreIsCheapToo() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        try Self.build(path, count: 20_000)
        do { try Store(path: path).compact() }
        let cost = try Self.openAndLookUp(path, row: 12_345)
        #expect(cost.pages + cost.blocks <= 6, "\(cost)")
        #expect(cost.bytesRead * 10 < cost.fileSize, "\(cost)")
    }
}
