// Inputs that once made a fuzz target (scripts/fuzz.sh) trap, kept as tests. Each names the
// target, the input (base64, as libFuzzer prints it) and what went wrong.
import Foundation
import Glibc
import Testing
import Strata
import StrataTestSupport
@testable import StrataEngine

@Suite struct FuzzRegressionTests {
    /// decode-engine-nocrc (packed leaves): a packed leaf whose second slot points past the
    /// page's end made the check read the first cell's varint up to there, past the page.
    /// The page is placed here at the very end of readable memory (a page that may not be read
    /// follows it), so that a read past it crashes the test instead of reading on.
    @Test func aPackedLeafSlotPastThePageIsDamage() throws {
        let input = try #require(Data(base64Encoded: "AAAAAAAWAAMFAgB4AAAAEgAAABYAMTc="))
        let page = Array(input.dropFirst())
        let size = Int(sysconf(Int32(_SC_PAGESIZE)))
        let memory = try #require(mmap(nil, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        defer { munmap(memory, 2 * size) }
        #expect(mprotect(memory + size, size, PROT_NONE) == 0)
        let start = memory + size - page.count
        page.withUnsafeBytes { start.copyMemory(from: $0.baseAddress!, byteCount: page.count) }
        #expect(!PageLayout.checkStructure(UnsafeRawPointer(start), length: page.count, offset: 1 << 40))
    }

    /// decode-engine-nocrc (format 2): a page whose keys are out of order (its checksum forged)
    /// passed its checks; copied into a node to change it, it encoded with the common prefix of
    /// its first and last keys, which a shorter key in the middle lacks, and trapped.
    @Test func aPageWithKeysOutOfOrderCopiesAndEncodesSafely() throws {
        let input = try #require(Data(base64Encoded: "AAAAAAAdAAEBAwBrEQAVABoAARoAAAAAAAAAAQAA"))
        let page = Array(input.dropFirst())
        try page.withUnsafeBytes { raw in
            try #require(PageLayout.checkStructure(raw.baseAddress!, length: raw.count, offset: 1 << 40))
            let view = PageView(raw.baseAddress!)
            let node = try #require(Node(copying: view, budget: DirtyBudget(limit: .max)))
            var again: [UInt8] = []
            node.encode(into: &again)
            let keys = (0..<view.count).map { view.key($0) }
            again.withUnsafeBytes { copy in
                #expect(PageLayout.checkStructure(copy.baseAddress!, length: copy.count, offset: 1 << 40))
                let reread = PageView(copy.baseAddress!)
                #expect((0..<reread.count).map { reread.key($0) } == keys)
            }
        }
    }

    /// decode-engine-nocrc: an index key holding a NaN date (0x28 then a NaN's ordered bits)
    /// decoded fine, but describing it trapped inside Foundation's Date.description.
    @Test func describingANaNDateKeyDoesNotTrap() throws {
        let input = try #require(Data(base64Encoded: "BjgA/wER//8A/wABKP//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="))
        let parts = try #require(KeyComponent.decode(Array(input.dropFirst())))
        #expect(parts.map(\.description).joined().contains("nan"))
        // The same from a value a program can store.
        let key = KeyEncoding.encode(Date(timeIntervalSinceReferenceDate: .nan))
        #expect(KeyComponent.decode(key)?.first?.description == "Date(timeIntervalSinceReferenceDate: nan)")
    }

    /// open-store-nocrc: a commit record whose catalog gave a collection more than Int.max
    /// records (checksums forged) opened, and `count(in:)` trapped converting it to an Int.
    /// Such a catalog is now no commit record at all: opening falls back to the commit before.
    @Test func impossibleCountsInTheCatalogAreDamage() throws {
        let fs = SimulatedFileSystem()
        let path = "/store.strata"
        do {
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            try store.write { tx in try tx.put([1], row: 1, in: try tx.createCollection(named: "c")) }
            try store.write { tx in try tx.put([2], row: 2, in: tx.collection(named: "c")!) }
            store.close()
        }
        let (bytes, salt, found) = try FuzzRegressionTests.lastCommit(path, in: fs)
        var last = found
        for (field, value) in [("count", UInt64.max), ("count", UInt64(Int.max) + 1), ("liveBytes", UInt64.max)] {
            var damaged = last
            if field == "count" { damaged.catalog.collections[0].count = value } else { damaged.catalog.collections[0].liveBytes = value }
            // A valid checksum over impossible values, as a checksum collision (or a forger) would give.
            let record = damaged.encode()
            #expect(CommitRecord.decode(record, at: last.offset, salt: salt) == nil, "\(field) \(value)")
            fs.setBytes(Array(bytes[..<Int(last.offset)]) + record, of: path)
            let store = try Store(path: path, options: StoreOptions(readOnly: true), fileSystem: fs)
            #expect(try store.read { try $0.count(in: $0.collection(named: "c")!) } == 1, "the commit before is what opens")
            _ = try store.info()
        }
        last.catalog.systemBytes = UInt64(Int.max)
        last.catalog.collections[0].liveBytes = UInt64(Int.max)
        fs.setBytes(Array(bytes[..<Int(last.offset)]) + last.encode(), of: path)
        let store = try Store(path: path, options: StoreOptions(readOnly: true), fileSystem: fs)
        #expect(try store.info().liveBytes == Int.max, "sums of large figures saturate rather than trap")
    }

    /// open-store-nocrc: a catalog that counts fewer records (or bytes) than the collection's
    /// rows hold made `delete` underflow and trap. Now a delete throws `.corrupt` and changes
    /// nothing; byte counts that would go below zero stay at zero.
    @Test func catalogThatUndercountsItsRowsIsDamage() throws {
        let fs = SimulatedFileSystem()
        let path = "/store.strata"
        do {
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            try store.write { tx in
                let c = try tx.createCollection(named: "c")
                try tx.put([1], row: 1, in: c)
                try tx.setMetadata("m", [1, 2, 3])
            }
            store.close()
        }
        let (bytes, _, found) = try FuzzRegressionTests.lastCommit(path, in: fs)
        var last = found
        last.catalog.collections[0].count = 0
        last.catalog.collections[0].liveBytes = 0
        last.catalog.systemBytes = 0
        fs.setBytes(Array(bytes[..<Int(last.offset)]) + last.encode(), of: path)
        let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
        let c = try #require(try store.read { $0.collection(named: "c") })
        do {
            try store.write { tx in _ = try tx.delete(1, in: c) }
            Issue.record("delete: expected a .corrupt error")
        } catch let error as StoreError {
            #expect(error.code == .corrupt, "delete: \(error)")
        }
        #expect(try store.read { try $0.record(1, in: c) } == [1])
        try store.write { tx in try tx.put([2], row: 1, in: c, previousKeys: []) }
        try store.write { tx in try tx.setMetadata("m", nil) }
        #expect(try store.info().collections[0].liveBytes >= 0)
    }
}

extension FuzzRegressionTests {
    /// open-store-nocrc: a page whose row entry points at an offset near 2^64 (checksums
    /// forged) made a write transaction's read of that row trap converting the offset to an
    /// Int, and `offset + length` could overflow on the read path. Both now throw `.corrupt`.
    @Test func recordPointersFarPastTheEndAreDamage() throws {
        let fs = SimulatedFileSystem()
        let path = "/far.strata"
        do {
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            try store.write { tx in try tx.put([1], row: 1, in: try tx.createCollection(named: "c")) }
            store.close()
        }
        let (bytes, salt, found) = try FuzzRegressionTests.lastCommit(path, in: fs)
        let last = found
        for far in [UInt64.max - 4, UInt64.max / 2, UInt64(bytes.count) + 10] {
            // A new root: one leaf whose row 1's value lies in a frame at `far`, in a commit with valid checksums.
            let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
            var value: [UInt8] = []
            ValueLocation(offset: far, length: 100).encode(into: &value)
            withUnsafeBytes(of: RowID(1).bigEndian) { k in value.withUnsafeBytes { v in leaf.appendLeafCell(key: k, value: v, flags: ValueFlags.inFrame) } }
            var page: [UInt8] = []
            leaf.encode(into: &page)
            // Pages start at multiples of 16: zeros before it.
            let body = [UInt8](repeating: 0, count: Int((16 - last.end % 16) % 16)) + page
            let pageOffset = last.end + UInt64(body.count - page.count)
            var catalog = last.catalog
            catalog.collections[0].root = pageOffset
            let record = CommitRecord(sequence: last.sequence + 1, offset: last.end + UInt64(body.count), previousOffset: last.offset,
                                      bodyStart: last.end, bodyChecksum: Checksum.hash(body), flags: 0, timeMilliseconds: 0, salt: salt,
                                      catalog: catalog)
            fs.setBytes(Array(bytes[..<Int(last.end)]) + body + record.encode(), of: path)
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            let c = try #require(try store.read { $0.collection(named: "c") })
            #expect(throws: StoreError.self) { try store.read { try $0.record(1, in: c) } }
            // Deleting the row does not read its value: it goes, without reading past the end.
            try store.write { tx in _ = try tx.delete(1, in: c) }
            store.close()
        }
    }
}

/// Found by the kill torture (scripts/torture.sh), not the fuzzers.
@Suite struct TortureRegressionTests {
    /// Compaction listed a blob folder of ~2,700 files and the helper died of a bad pointer
    /// dereference in listDirectory: it copied whole `dirent`s, reading past the end of
    /// readdir's buffer when the last entry was short. Names of every length list right.
    @Test func listingALargeFolderReadsEveryName() throws {
        let dir = try ReliabilityDirectory()
        var expected: Set<String> = []
        for i in 0..<3000 {
            let name = String(repeating: "n", count: 1 + i % 200) + "-\(i)"
            expected.insert(name)
            _ = FileManager.default.createFile(atPath: dir.path + "/" + name, contents: nil)
        }
        #expect(Set(try DiskFileSystem().listDirectory(dir.path)) == expected)
    }

    /// An insert that upserts onto a stored object replaced its record but left the blob of its
    /// external-storage value behind, forever (compaction keeps every blob the store lists).
    @Test func anUpsertDropsTheBlobsOfTheRecordItReplaces() throws {
        let dir = try ReliabilityDirectory()
        let container = try ModelContainer(for: TortureItem.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: dir.path + "/s.store")))
        for round in 0..<3 {
            let context = ModelContext(container)
            let item = TortureItem()
            item.key = 7
            item.photo = Data(repeating: UInt8(round), count: 1000)
            context.insert(item)
            try context.save()
        }
        let store = try #require(container.stores.first)
        #expect(try store.read { try $0.blobIDs().count } == 1)
        #expect(try ModelContext(container).fetch(FetchDescriptor<TortureItem>()).first?.photo == Data(repeating: 2, count: 1000))
        #expect(try store.verify().isClean)
        _ = try store.compact()
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/s.store.blobs"))?.count == 1)
    }

    /// ObjectPowerLossTests (deferred durability): a commit that deleted a blob removed its
    /// file at once, although the commit itself was not synced; a power cut then reopened the
    /// store on the commit before, which still referred to the removed file. Now the file
    /// goes only once the deleting commit is durable (a sync, a compaction, or a full commit).
    @Test func deferredBlobDeletionWaitsForTheCommitToBeDurable() throws {
        let fs = SimulatedFileSystem()
        let path = "/d.strata"
        let store = try Store(path: path, options: StoreOptions(durability: .deferred), fileSystem: fs)
        let blob = try store.write { tx in
            let blob = try tx.putBlob([UInt8](repeating: 7, count: 100))
            try tx.put([1], row: 1, in: try tx.createCollection(named: "c"))
            return blob
        }
        try store.sync()
        try store.write { tx in try tx.deleteBlob(blob) }
        #expect(fs.filePaths.contains { $0.hasPrefix(path + ".blobs/") }, "the file stays while the deleting commit is not durable")
        for seed in UInt64(0)..<8 {
            let image = fs.powerLoss(.tearUnsynced(seed: seed))
            let reopened = try Store(path: path, options: StoreOptions(durability: .deferred), fileSystem: image)
            #expect(try reopened.verify().isClean, "torn power cut \(seed)")
            if try reopened.read({ try $0.blobIDs() }) == [blob] {
                #expect(try reopened.read { try $0.blob(blob) } == [UInt8](repeating: 7, count: 100))
            }
        }
        try store.sync()
        #expect(!fs.filePaths.contains { $0.hasPrefix(path + ".blobs/") }, "gone once the commit is durable")
    }
}

extension FuzzRegressionTests {
    /// open-store-nocrc: a commit record whose sequence number is UInt64.max (checksums
    /// forged) opened, and the next commit trapped adding one to it. Now that commit throws
    /// `.corrupt`, writes nothing, and the store still reads what it held.
    @Test func aCommitSequenceAtItsMaximumRefusesTheNextCommit() throws {
        let fs = SimulatedFileSystem()
        let path = "/sequence.strata"
        do {
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            try store.write { tx in try tx.put([1], row: 1, in: try tx.createCollection(named: "c")) }
            store.close()
        }
        let (bytes, _, found) = try FuzzRegressionTests.lastCommit(path, in: fs)
        var last = found
        last.sequence = .max
        let damaged = Array(bytes[..<Int(last.offset)]) + last.encode()
        fs.setBytes(damaged, of: path)
        let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
        let c = try #require(try store.read { $0.collection(named: "c") })
        do {
            try store.write { tx in try tx.put([2], row: 2, in: c) }
            Issue.record("expected a .corrupt error")
        } catch let error as StoreError {
            #expect(error.code == .corrupt, "\(error)")
            #expect(error.description.contains("sequence"), "\(error)")
        }
        #expect(try store.read { try $0.record(1, in: c) } == [1])
        #expect(try store.read { try $0.record(2, in: c) } == nil)
        store.close()
        #expect(fs.bytes(of: path) == damaged, "the refused commit wrote nothing")
    }
}

extension FuzzRegressionTests {
    /// A put of a row at or past the catalog's next row id does not look the row up (it was
    /// never written). A damaged catalog whose next row id is too small (checksums forged) must
    /// not make that put replace a stored row silently: it throws `.corrupt` and the row keeps
    /// its record.
    @Test func aNextRowIDBelowAStoredRowIsDamageNotAReplacement() throws {
        let fs = SimulatedFileSystem()
        let path = "/next.strata"
        do {
            let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
            try store.write { tx in
                let c = try tx.createCollection(named: "c")
                for row in 1...5 as ClosedRange<RowID> { try tx.put([UInt8(row)], row: row, in: c) }
            }
            store.close()
        }
        let (bytes, _, found) = try FuzzRegressionTests.lastCommit(path, in: fs)
        var last = found
        last.catalog.collections[0].nextRowID = 3
        fs.setBytes(Array(bytes[..<Int(last.offset)]) + last.encode(), of: path)
        let store = try Store(path: path, options: StoreOptions(), fileSystem: fs)
        let c = try #require(try store.read { $0.collection(named: "c") })
        do {
            try store.write { tx in try tx.put([99], row: 4, in: c) }
            Issue.record("expected a .corrupt error")
        } catch let error as StoreError {
            #expect(error.code == .corrupt, "\(error)")
        }
        #expect(try store.read { try $0.record(4, in: c) } == [4])
        #expect(try store.read { try $0.count(in: c) } == 5)
    }
}

extension FuzzRegressionTests {
    /// A store's bytes, its salt and its last commit record: what a test forges a damaged
    /// catalog from (a valid checksum over impossible values, as a forger would give).
    static func lastCommit(_ path: String, in fs: SimulatedFileSystem) throws -> (bytes: [UInt8], salt: UInt64, commit: CommitRecord) {
        let bytes = try #require(fs.bytes(of: path))
        let io = try fs.openFile(path, readOnly: true, create: false)
        defer { io.close() }
        let salt = try #require(try? FileHeader.decode(Array(bytes[0..<64])).get()).salt
        let commit = try #require(try Recovery.lastCommit(io: io, size: UInt64(bytes.count), salt: salt, path: path))
        return (bytes, salt, commit)
    }
}
