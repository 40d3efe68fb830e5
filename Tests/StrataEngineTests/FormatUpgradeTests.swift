// A store of format version 1 (FormatVersion1Fixture, written by the format-1 engine) is
// refused with a message naming the command that converts it; `Store.upgrade` converts it all
// or nothing, keeping every record, index entry, blob and metadata value, and the rows' keys
// (an update after the conversion names them as before).
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct FormatUpgradeTests {
    /// What the fixture holds (see the generator in FormatVersion1Fixture.swift's history).
    static func person(_ r: UInt64) -> [UInt8] { Array("person \(r) ".utf8) + (0..<Int(r * 7 % 50)).map { UInt8(truncatingIfNeeded: $0 &+ Int(r)) } }
    static let peopleRows = (1...41 as ClosedRange<UInt64>).filter { $0 != 5 }

    static func record(_ r: UInt64) -> [UInt8] {
        switch r {
        case 3: Array("changed 3".utf8)
        case 41: (0..<3000).map { UInt8(truncatingIfNeeded: $0 * 13) }
        default: person(r)
        }
    }

    static func email(_ r: UInt64) -> String { r == 3 ? "new3@x" : r == 41 ? "big@x" : "p\(r)@x" }
    static func keys(_ r: UInt64, _ email: IndexID, _ age: IndexID) -> [IndexKey] {
        [IndexKey(email, KeyEncoding.encode(Self.email(r))), IndexKey(age, KeyEncoding.encode(r == 41 ? 4 : Int(r % 5)))]
    }

    static func install(in directory: String) throws -> String {
        let path = directory + "/v1.strata"
        try Data(base64Encoded: FormatVersion1Fixture.store.filter { !$0.isWhitespace })!.write(to: URL(fileURLWithPath: path))
        try FileManager.default.createDirectory(atPath: path + ".blobs", withIntermediateDirectories: true)
        for (name, contents) in FormatVersion1Fixture.blobs {
            try Data(base64Encoded: contents)!.write(to: URL(fileURLWithPath: path + ".blobs/" + name))
        }
        return path
    }

    @Test func aVersionOneStoreIsRefusedWithTheCommandThatConvertsIt() throws {
        let dir = try EngineTestDirectory()
        let path = try Self.install(in: dir.url.path)
        dir.expectDamage(at: path)   // a format-1 store, which verify does not read
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let error = expectStoreError(.olderFormat) { try Store(path: path) }
        #expect(error?.message.contains("format version 1") == true)
        #expect(error?.message.contains("strata upgrade \(path)") == true, "\(error?.message ?? "")")
        expectStoreError(.olderFormat) { try Store(path: path, options: StoreOptions(readOnly: true)) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before, "refusing changes nothing")
    }

    @Test func upgradeConvertsEverything() throws {
        let dir = try EngineTestDirectory()
        let path = try Self.install(in: dir.url.path)
        let report = try Store.upgrade(path: path)
        #expect(report.fromVersion == 1 && report.toVersion == 2)
        #expect(report.records == Self.peopleRows.count + 3)
        #expect(!FileManager.default.fileExists(atPath: path + ".upgrade"))
        let store = try Store(path: path)
        let (people, email, age) = try store.read { tx in
            let people = try #require(tx.collection(named: "people"))
            #expect(tx.indexes(of: people).map(\.name).sorted() == ["age", "email"], "the dropped index stays dropped")
            return (people, try #require(tx.index(named: "email", in: people)).id, try #require(tx.index(named: "age", in: people)).id)
        }
        try store.read { tx in
            var rows: [RowID] = []
            var cursor = try tx.rows(in: people)
            while let (row, bytes) = try cursor.next() {
                rows.append(row)
                #expect(bytes == Self.record(row), "row \(row)")
            }
            #expect(rows == Self.peopleRows)
            #expect(try tx.count(in: people) == Self.peopleRows.count)
            #expect(try tx.nextRowID(in: people) == 42)
            for r in Self.peopleRows { #expect(try tx.lookup(KeyEncoding.encode(Self.email(r)), in: email) == r) }
            #expect(try tx.lookup(KeyEncoding.encode("p5@x"), in: email) == nil)
            #expect(try tx.countEntries(in: age) == Self.peopleRows.count)
            #expect(try tx.countEntries(in: age, range: .exact(KeyEncoding.encode(4))) == 9)
            let plain = try #require(tx.collection(named: "plain"))
            #expect(try tx.record(2, in: plain) == [2])
            #expect(try tx.metadata("schema") == Array("{\"v\":1}".utf8))
            #expect(try tx.metadata("big") == (0..<5000).map { UInt8(truncatingIfNeeded: $0 * 7) })
            #expect(try tx.blobIDs() == [BlobID(rawValue: 2)])
            #expect(try tx.blob(BlobID(rawValue: 2)) == (0..<20000).map { UInt8(truncatingIfNeeded: $0) })
        }
        let keysOf: RecordIndexKeys = { collection, row, _ in collection == people ? Self.keys(row, email, age) : [] }
        #expect(try store.verify(indexKeys: keysOf).isClean)
        // The rows' keys came along: an update names them, a wrong set is refused.
        try store.write { tx in
            expectStoreError(.indexKeyMismatch) { try tx.put([1], row: 4, in: people, indexKeys: [], previousKeys: []) }
            try tx.put([1], row: 4, in: people, indexKeys: [IndexKey(email, KeyEncoding.encode("four@x"))], previousKeys: Self.keys(4, email, age))
            try tx.delete(41, in: people, indexKeys: Self.keys(41, email, age))
            _ = try tx.putBlob([9])
        }
        #expect(try store.read { try $0.lookup(KeyEncoding.encode("four@x"), in: email) } == 4)
        #expect(try store.verify().isClean)
        store.close()
        // Upgrading again changes nothing.
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        let again = try Store.upgrade(path: path)
        #expect(again.fromVersion == 2 && again.toVersion == 2)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == size)
    }

    /// Every write, sync, rename and directory sync of the conversion failed in turn: after
    /// each failure the store is the old one, untouched; after a power cut at each, it is the
    /// old one or the new one, whole.
    @Test(arguments: [SimulatedFileSystem.Operation.write, .sync, .rename, .syncDirectory, .open])
    func upgradeIsAllOrNothing(failing operation: SimulatedFileSystem.Operation) throws {
        let dir = try EngineTestDirectory()
        let diskPath = try Self.install(in: dir.url.path)
        let path = "/v1.strata"
        let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: diskPath)))
        let base = SimulatedFileSystem()
        base.setBytes(original, of: path)
        for (name, _) in FormatVersion1Fixture.blobs {
            try base.createDirectory(path + ".blobs")
            base.setBytes([UInt8](try Data(contentsOf: URL(fileURLWithPath: diskPath + ".blobs/" + name))), of: path + ".blobs/" + name)
        }
        try base.syncDirectory("/")
        var n = 1
        var failures = 0
        while n < 40 {
            let fs = base.clone()
            fs.fail(operation, at: n, errno: SystemError.ioError)
            do {
                _ = try Store.upgrade(path: path, fileSystem: fs)
                break
            } catch let error as StoreError {
                failures += 1
                #expect(error.code == .ioFailure, "\(operation) \(n): \(error)")
                #expect(!fs.fileExists(path + ".upgrade"), "\(operation) \(n)")
                // The old store untouched, or (a failure after the rename) the new one, whole.
                fs.disarm()
                if fs.bytes(of: path) != original { try expectConverted(fs, "\(operation) \(n) failed after the rename") }
            }
            for mode in [SimulatedFileSystem.PowerLoss.dropUnsynced, .keepUnsynced, .tearUnsynced(seed: UInt64(n))] {
                let cut = base.clone()
                cut.cutPower(at: operation, n: n, mode: mode)
                _ = try? Store.upgrade(path: path, fileSystem: cut)
                guard let image = cut.powerLossImage else { continue }
                if image.bytes(of: path) == original { continue }
                try expectConverted(image, "\(operation) \(n), power cut (\(mode))")
            }
            n += 1
        }
        #expect(n < 40 && failures > 0, "\(operation): \(failures) failures")
    }

    func expectConverted(_ fs: SimulatedFileSystem, _ context: String) throws {
        let store = try Store(path: "/v1.strata", options: StoreOptions(), fileSystem: fs)
        defer { store.close() }
        #expect(try store.read { tx in try tx.count(in: #require(tx.collection(named: "people"))) } == Self.peopleRows.count, "\(context)")
        #expect(try store.verify().isClean, "\(context)")
    }
}
