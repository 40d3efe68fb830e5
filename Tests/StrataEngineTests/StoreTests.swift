// The store's behaviour through its public API: records, cursors, reopening, snapshots,
// rollback, metadata, blobs, compaction, read-only opening and the errors for bad files.
import Foundation
import Synchronization
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct StoreTests {
    static func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    static func fileSize(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// The file's size less the zeros its writer wrote ahead of its commits: the end of its last commit.
    static func committedSize(_ path: String) throws -> Int {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))).strippingZeroTail().count
    }

    // MARK: Records

    @Test func putGetUpdateDelete() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let users = try store.write { tx throws in
            let users = try tx.createCollection(named: "users")
            #expect(try tx.createCollection(named: "users") == users)   // the same one again
            #expect(try tx.count(in: users) == 0)
            let first = try tx.allocateRowID(in: users)
            let second = try tx.allocateRowID(in: users)
            #expect(first != second)
            try tx.put(Self.bytes("ada"), row: first, in: users)
            try tx.put(Self.bytes("grace"), row: second, in: users)
            try tx.put([], row: 10, in: users)                        // an empty record is a record
            // A write transaction reads its own writes.
            #expect(try tx.record(first, in: users) == Self.bytes("ada"))
            #expect(try tx.count(in: users) == 3)
            #expect(try tx.nextRowID(in: users) == 11)
            return users
        }
        try store.read { tx throws in
            #expect(tx.collection(named: "users") == users)
            #expect(tx.name(of: users) == "users")
            #expect(tx.collectionNames == ["users"])
            #expect(try tx.record(1, in: users) == Self.bytes("ada"))
            #expect(try tx.record(2, in: users) == Self.bytes("grace"))
            #expect(try tx.record(10, in: users) == [])
            #expect(try tx.record(3, in: users) == nil)
            #expect(try tx.contains(10, in: users))
            #expect(try !tx.contains(3, in: users))
            #expect(try tx.withRecord(2, in: users) { $0.count } == 5)
            #expect(try tx.count(in: users) == 3)
            #expect(tx.sequence == 1)
        }
        try store.write { tx throws in
            try tx.put(Self.bytes("ada lovelace"), row: 1, in: users)   // update
            #expect(try tx.delete(2, in: users))
            #expect(try !tx.delete(2, in: users))                       // already gone
            #expect(try !tx.delete(999, in: users))
            #expect(try tx.allocateRowID(in: users) == 11)              // row ids are not reused
        }
        try store.read { tx throws in
            #expect(try tx.record(1, in: users) == Self.bytes("ada lovelace"))
            #expect(try tx.record(2, in: users) == nil)
            #expect(try tx.count(in: users) == 2)
            #expect(try tx.nextRowID(in: users) == 12)
        }
        let deleted = try store.write { try $0.deleteAll(in: users) }
        #expect(deleted == 2)
        #expect(try store.read { try $0.count(in: users) } == 0)
        try expectClean(store)
    }

    @Test func largeRecordsAndManyRows() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }   // bigger than a block and the flush threshold
        let c = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            try tx.put(big, row: 1, in: c)
            for row in 2...2000 { try tx.put(withUnsafeBytes(of: RowID(row)) { Array($0) }, row: RowID(row), in: c) }
            #expect(try tx.record(1, in: c) == big)
            return c
        }
        try store.read { tx throws in
            #expect(try tx.record(1, in: c) == big)
            #expect(try tx.record(1234, in: c) == withUnsafeBytes(of: RowID(1234)) { Array($0) })
            #expect(try tx.count(in: c) == 2000)
        }
        try expectClean(store)
    }

    @Test func errorsForUnknownCollectionsAndBadArguments() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let ghost = CollectionID(rawValue: 77)
        try store.write { tx throws in
            expectStoreError(.notFound) { try tx.put([1], row: 1, in: ghost) }
            expectStoreError(.notFound) { try tx.count(in: ghost) }
            expectStoreError(.notFound) { try tx.delete(1, in: ghost) }
            expectStoreError(.notFound) { try tx.allocateRowID(in: ghost) }
            expectStoreError(.notFound) { try tx.createIndex(named: "i", on: ghost, unique: false) }
            expectStoreError(.invalidArgument) { try tx.createCollection(named: "") }
        }
        try store.read { tx throws in
            #expect(tx.collection(named: "nope") == nil)
            let error = expectStoreError(.notFound) { try tx.count(in: ghost) }
            #expect(error?.message.contains("createCollection") == true)
        }
    }

    /// The largest row id is refused with an error (never an overflow trap), and allocation
    /// reports running out instead of handing out a used id.
    @Test func rowIDLimits() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            expectStoreError(.invalidArgument) { try tx.put([1], row: .max, in: c) }
            #expect(try tx.count(in: c) == 0)
            try tx.put([1], row: .max - 1, in: c)
            #expect(try tx.nextRowID(in: c) == .max)
            expectStoreError(.invalidArgument) { try tx.allocateRowID(in: c) }
            try tx.put([2], row: 0, in: c)                     // row 0 is a row like any other
        }
        try store.read { tx throws in
            let c = try #require(tx.collection(named: "c"))
            var cursor = try tx.rows(in: c, reverse: true)
            #expect(try cursor.nextRowID() == .max - 1)
            #expect(try cursor.nextRowID() == 0)
            #expect(try cursor.nextRowID() == nil)
        }
        try expectClean(store)
    }

    // MARK: Cursors

    @Test func rowCursorsForwardReverseAndFrom() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        // Rows 2, 4, ..., 1000 in "even"; "other" (created before and after) must never show up.
        let rows = Array(stride(from: RowID(2), through: 1000, by: 2))
        let even = try store.write { tx throws in
            let before = try tx.createCollection(named: "before")
            let even = try tx.createCollection(named: "even")
            let after = try tx.createCollection(named: "after")
            for r in rows { try tx.put(Self.bytes("row \(r)"), row: r, in: even) }
            for r in 0...5 as ClosedRange<RowID> {
                try tx.put([9], row: r, in: before)
                try tx.put([9], row: r, in: after)
                try tx.put([9], row: RowID.max - 1 - r, in: before)
            }
            try tx.put([9], row: RowID.max - 1, in: after)
            return even
        }
        try store.read { tx throws in
            func collect(from start: RowID? = nil, reverse: Bool = false) throws -> [RowID] {
                var out: [RowID] = []
                var cursor = try tx.rows(in: even, from: start, reverse: reverse)
                while let (row, record) = try cursor.next() {
                    #expect(record == Self.bytes("row \(row)"))
                    out.append(row)
                }
                #expect(try cursor.next() == nil)   // stays at the end
                return out
            }
            #expect(try collect() == rows)
            #expect(try collect(reverse: true) == rows.reversed())
            #expect(try collect(from: 500) == rows.filter { $0 >= 500 })
            #expect(try collect(from: 501) == rows.filter { $0 >= 501 })
            #expect(try collect(from: 500, reverse: true) == rows.filter { $0 <= 500 }.reversed())
            #expect(try collect(from: 501, reverse: true) == rows.filter { $0 <= 501 }.reversed())
            #expect(try collect(from: 0) == rows)
            #expect(try collect(from: 1001) == [])
            #expect(try collect(from: 1, reverse: true) == [])
            #expect(try collect(from: .max, reverse: true) == rows.reversed())

            // Row ids only, and borrowed bytes.
            var ids: [RowID] = []
            var cursor = try tx.rows(in: even, reverse: true)
            while let id = try cursor.nextRowID() { ids.append(id) }
            #expect(ids == rows.reversed())
            var lengths = 0
            var borrowing = try tx.rows(in: even)
            while try borrowing.next({ _, raw in lengths += raw.count }) {}
            #expect(lengths == rows.reduce(0) { $0 + "row \($1)".utf8.count })

            // forEachRecord stops when the body returns false.
            var seen: [RowID] = []
            try tx.forEachRecord(in: even, from: 100) { row, raw in
                #expect(Array(raw) == Self.bytes("row \(row)"))
                seen.append(row)
                return seen.count < 3
            }
            #expect(seen == [100, 102, 104])
            seen = []
            try tx.forEachRecord(in: even, reverse: true) { row, _ in seen.append(row); return true }
            #expect(seen == rows.reversed())

            // A cursor's walk a leaf at a time (`forEach`) stops on the row it was given, and
            // goes on after it: mixed with single steps, it hands out every row once, in order,
            // across the leaves of 500 rows.
            for reverse in [false, true] {
                var walk = try tx.rows(in: even, reverse: reverse)
                var got: [RowID] = []
                while true {
                    var taken = 0
                    try walk.forEach { row, raw in
                        #expect(Array(raw) == Self.bytes("row \(row)"))
                        got.append(row)
                        taken += 1
                        return taken < 37
                    }
                    guard let (row, _) = try walk.next() else { break }
                    got.append(row)
                }
                #expect(got == (reverse ? rows.reversed() : rows))
                try walk.forEach { _, _ in Issue.record("a row after the end"); return true }
            }
        }
        // In a write transaction that has changed the collection, a walk refuses to go on once
        // the collection changed again under it. (A walk made before any change reads the
        // collection as committed.)
        #expect(throws: StoreError.self) {
            try store.write { tx throws in
                try tx.put(Self.bytes("new"), row: 1001, in: even)
                try tx.forEachRecord(in: even) { row, _ in
                    try tx.put(Self.bytes("changed"), row: row + 1, in: even)
                    return true
                }
            }
        }
        try store.read { tx throws in
            // The failed write left nothing.
            #expect(try tx.record(3, in: even) == nil)
            #expect(try tx.record(1001, in: even) == nil)
        }
        // An empty collection has no rows either way.
        let empty = try store.write { try $0.createCollection(named: "empty") }
        try store.read { tx throws in
            var forward = try tx.rows(in: empty)
            #expect(try forward.next() == nil)
            var backward = try tx.rows(in: empty, reverse: true)
            #expect(try backward.next() == nil)
        }
    }

    /// `forEachBatch` lends the same rows as `forEach`, in order both ways and from a start,
    /// in batches of at most `batchCapacity`, with records held in value frames lent alone
    /// between them. Once its body returns false the cursor hands out nothing more, and in a
    /// write transaction each batch is one row.
    @Test func rowBatchesLendTheRowsOfAWalk() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let long = PageLayout.inlineValueLimit + 1
        // 300 rows; every 50th record too long to lie in its leaf (a value frame).
        func record(_ row: RowID) -> [UInt8] {
            row % 50 == 7 ? Array(repeating: UInt8(truncatingIfNeeded: row), count: long) : Self.bytes("row \(row)")
        }
        let rows = Array(RowID(1)...300)
        let table = try store.write { tx throws in
            let table = try tx.createCollection(named: "t")
            for r in rows { try tx.put(record(r), row: r, in: table) }
            return table
        }
        func batches(_ tx: ReadTransaction, from start: RowID? = nil, reverse: Bool = false, stopAfter: Int = .max) throws -> [[RowID]] {
            var out: [[RowID]] = []
            try tx.forEachRecordBatch(in: table, from: start, reverse: reverse) { batch in
                #expect(!batch.isEmpty && batch.count <= RowCursor.batchCapacity)
                for lent in batch { #expect(Array(lent.bytes) == record(lent.row)) }
                out.append(batch.map(\.row))
                return out.count < stopAfter
            }
            return out
        }
        try store.read { tx throws in
            let forward = try batches(tx)
            #expect(forward.flatMap { $0 } == rows)
            // Full batches but around the 6 framed records: at most 300 / 64 + 1 + 2 × 6.
            #expect(forward.count <= 300 / RowCursor.batchCapacity + 1 + 2 * 6)
            // Each framed record alone in its batch.
            for batch in forward where batch.contains(where: { $0 % 50 == 7 }) { #expect(batch.count == 1) }
            #expect(try batches(tx, reverse: true).flatMap { $0 } == rows.reversed())
            #expect(try batches(tx, from: 123).flatMap { $0 } == Array(123...300))
            #expect(try batches(tx, from: 123, reverse: true).flatMap { $0 } == Array((1...123).reversed()))
            #expect(try batches(tx, from: 301).isEmpty)

            // Stopped, a cursor is used up.
            var cursor = try tx.rows(in: table)
            var lent = 0
            try cursor.forEachBatch { batch in lent += batch.count; return false }
            #expect(lent > 0 && lent <= RowCursor.batchCapacity)
            try cursor.forEachBatch { _ in Issue.record("a batch after the body stopped"); return true }
            #expect(try cursor.next() == nil)
            // After single steps, the batches go on from the next row.
            var stepped = try tx.rows(in: table)
            _ = try stepped.next()
            _ = try stepped.next()
            var rest: [RowID] = []
            try stepped.forEachBatch { batch in rest += batch.map(\.row); return true }
            #expect(rest == Array(3...300))
        }
        try store.write { tx throws in
            var sizes = Set<Int>()
            var seen: [RowID] = []
            try tx.forEachRecordBatch(in: table) { batch in
                sizes.insert(batch.count)
                for lent in batch { #expect(Array(lent.bytes) == record(lent.row)) }
                seen += batch.map(\.row)
                return true
            }
            #expect(sizes == [1])
            #expect(seen == rows)
        }
    }

    // MARK: Readers of the current commit

    /// Readers of the current commit share one transaction, which the store keeps between
    /// reads. It must neither keep the store (and its writer lock) alive once the store is let
    /// go, nor stop reading when a reader keeps it longer than the store; and a commit in
    /// between gives the next reader the new commit.
    @Test func readersShareTheCurrentCommitWithoutKeepingTheStore() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        var kept: ReadTransaction?
        var users: CollectionID?
        do {
            let store = try Store(path: path)
            users = try store.write { tx throws in
                let users = try tx.createCollection(named: "users")
                try tx.put(Self.bytes("Ada"), row: 1, in: users)
                return users
            }
            let first = try store.beginRead(), second = try store.beginRead()
            #expect(first === second)
            kept = first
            try store.write { tx throws in try tx.put(Self.bytes("Grace"), row: 2, in: #require(users)) }
            let third = try store.beginRead()
            #expect(third !== first)
            #expect(try third.count(in: #require(users)) == 2)
            #expect(try first.count(in: #require(users)) == 1)   // still its own commit
        }
        // The store is gone (its lock with it): it opens again for writing, and the reader kept
        // from it still reads its commit.
        let again = try Store(path: path)
        try again.write { tx throws in try tx.put(Self.bytes("Hopper"), row: 3, in: #require(users)) }
        let reader = try #require(kept)
        #expect(try reader.count(in: #require(users)) == 1)
        #expect(try reader.record(1, in: #require(users)) == Self.bytes("Ada"))
        kept = nil
        #expect(try again.read { try $0.count(in: #require(users)) } == 3)
    }

    // MARK: Reopening

    @Test func reopenKeepsEverything() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let before: EngineStoreDump
        let blobBytes = (0..<5000).map { UInt8(truncatingIfNeeded: $0) }
        do {
            let store = try Store(path: path)
            try store.write { tx throws in
                let users = try tx.createCollection(named: "users")
                let email = try tx.createIndex(named: "email", on: users, unique: true)
                let city = try tx.createIndex(named: "city", on: users, unique: false)
                for i in 1...300 {
                    try tx.put(Self.bytes("user \(i)"), row: RowID(i), in: users,
                               indexKeys: [IndexKey(email, KeyEncoding.encode("u\(i)@x")), IndexKey(city, KeyEncoding.encode("city \(i % 7)"))])
                }
                _ = try tx.createCollection(named: "empty")
                _ = try tx.putBlob(blobBytes)
                try tx.setMetadata("schema", Self.bytes("v1"))
            }
            try store.write { tx throws in
                let users = try #require(tx.collection(named: "users"))
                let email = try #require(tx.index(named: "email", in: users)).id, city = try #require(tx.index(named: "city", in: users)).id
                for i in stride(from: 1, through: 300, by: 3) {
                    try tx.delete(RowID(i), in: users, indexKeys: [IndexKey(email, KeyEncoding.encode("u\(i)@x")), IndexKey(city, KeyEncoding.encode("city \(i % 7)"))])
                }
                _ = try tx.allocateRowID(in: users)   // bumps the next row id past 301
            }
            before = try store.read { try EngineStoreDump($0, metadataNames: ["schema"]) }
            #expect(before.counts["users"] == 200)
        }
        let store = try Store(path: path)
        try store.read { tx throws in
            #expect(try EngineStoreDump(tx, metadataNames: ["schema"]) == before)
            let users = try #require(tx.collection(named: "users"))
            #expect(try tx.nextRowID(in: users) == 302)
            #expect(tx.indexes(of: users).map(\.name).sorted() == ["city", "email"])
            #expect(tx.index(named: "email", in: users)?.isUnique == true)
            #expect(tx.index(named: "city", in: users)?.isUnique == false)
            #expect(tx.collectionNames == ["users", "empty"])
            #expect(tx.sequence == 2)
            #expect(try tx.blob(tx.blobIDs()[0]) == blobBytes)
        }
        // Still writable after reopening, and the next row id carries on.
        try store.write { tx throws in
            let users = try #require(tx.collection(named: "users"))
            #expect(try tx.allocateRowID(in: users) == 302)
        }
        #expect(try store.read { $0.sequence } == 3)
        try expectClean(store)
        let info = try store.info()
        #expect(info.collections.first { $0.name == "users" }?.count == 200)
        #expect(info.sequence == 3)
        #expect(info.fileSize == (try Self.fileSize(path)))
    }

    // MARK: Snapshots

    @Test func readersKeepTheirSnapshotWhileAWriterCommits() throws {
        let dir = try EngineTestDirectory()
        // A tiny cache, so that old readers really read the (old) file rather than cached pages.
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 0))
        let (c, index) = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            let index = try tx.createIndex(named: "k", on: c, unique: false)
            for i in 1...500 { try tx.put(Self.bytes("v1 \(i)"), row: RowID(i), in: c, indexKeys: [IndexKey(index, KeyEncoding.encode(i % 10))]) }
            return (c, index)
        }
        let old = try store.beginRead()
        let oldDump = try EngineStoreDump(old)

        // A reader begun while a write transaction is open sees only what was committed.
        let writer = try store.beginWrite()
        func keys(_ i: Int) -> [IndexKey] { [IndexKey(index, KeyEncoding.encode(i % 2 == 0 ? 99 : i % 10))] }
        for i in 1...500 where i % 2 == 0 {
            try writer.put(Self.bytes("v2 \(i)"), row: RowID(i), in: c, indexKeys: keys(i), previousKeys: [IndexKey(index, KeyEncoding.encode(i % 10))])
        }
        for i in 1...500 where i % 5 == 0 { try writer.delete(RowID(i), in: c, indexKeys: keys(i)) }
        for i in 501...800 { try writer.put(Self.bytes("new \(i)"), row: RowID(i), in: c) }
        try writer.setMetadata("m", [1])
        let during = try store.beginRead()
        #expect(try EngineStoreDump(during) == oldDump)
        #expect(try during.metadata("m") == nil)
        try writer.commit()

        #expect(try EngineStoreDump(old) == oldDump)
        #expect(try EngineStoreDump(during) == oldDump)
        #expect(try old.count(in: c) == 500)
        #expect(try old.lookup(KeyEncoding.encode(99), in: index) == nil)
        let new = try store.beginRead()
        #expect(new.sequence == old.sequence + 1)
        #expect(try new.record(2, in: c) == Self.bytes("v2 2"))
        #expect(try new.count(in: c) == 800 - 100)
        let newDump = try EngineStoreDump(new)

        // Compaction switches files; readers that began before keep reading the old one.
        let report = try store.compact()
        #expect(report.records == 700)
        #expect(try EngineStoreDump(old) == oldDump)
        #expect(try old.record(2, in: c) == Self.bytes("v1 2"))
        #expect(try old.countEntries(in: index, range: .exact(KeyEncoding.encode(2))) == 50)
        #expect(try EngineStoreDump(new) == newDump)

        // And more commits after the compaction do not disturb them either.
        try store.write { tx throws in
            for i in 1...800 { try tx.delete(RowID(i), in: c, indexKeys: i > 500 ? [] : keys(i)) }
        }
        #expect(try EngineStoreDump(old) == oldDump)
        #expect(try EngineStoreDump(new) == newDump)
        #expect(try store.read { try $0.count(in: c) } == 0)
        try expectClean(store)
    }

    /// Readers on other threads, while a writer commits and compacts, always see whole
    /// commits: money moves between accounts, and every snapshot's total is the same.
    @Test func concurrentReadersSeeWholeCommits() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(durability: .deferred, cacheSize: 256 << 10))
        let accounts = 20
        func amount(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        let (c, index) = try store.write { tx in
            let c = try tx.createCollection(named: "accounts")
            let index = try tx.createIndex(named: "balance", on: c, unique: false)
            for row in 1...RowID(accounts) { try tx.put(amount(100), row: row, in: c, indexKeys: [IndexKey(index, KeyEncoding.encode(100))]) }
            return (c, index)
        }
        final class Shared: Sendable {
            let done = Flag()
            let problems = Mutex<[String]>([])
            let snapshots = Atomic<Int>(0)
            func problem(_ text: String) { problems.withLock { if $0.count < 10 { $0.append(text) } } }
        }
        let shared = Shared()
        let group = DispatchGroup()
        for reader in 0..<2 {
            group.enter()
            Thread {
                defer { group.leave() }
                var lastSequence: UInt64 = 0
                repeat {
                    do {
                        try store.read { tx in
                            if tx.sequence < lastSequence { shared.problem("reader \(reader): sequence went back from \(lastSequence) to \(tx.sequence)") }
                            lastSequence = tx.sequence
                            var total: UInt64 = 0
                            var balances: [RowID: UInt64] = [:]
                            var cursor = try tx.rows(in: c)
                            while let (row, record) = try cursor.next() {
                                let value = record.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                                total += value
                                balances[row] = value
                            }
                            if total != UInt64(accounts) * 100 || balances.count != accounts {
                                shared.problem("reader \(reader), commit \(tx.sequence): \(balances.count) accounts, total \(total)")
                            }
                            var entries = try tx.entries(in: index)
                            var seen = 0
                            while let (key, row) = try entries.next() {
                                seen += 1
                                if key != KeyEncoding.encode(Int(balances[row] ?? 0)) { shared.problem("commit \(tx.sequence): row \(row)'s index entry is stale") }
                            }
                            if seen != accounts { shared.problem("commit \(tx.sequence): \(seen) index entries") }
                        }
                        shared.snapshots.add(1, ordering: .relaxed)
                    } catch {
                        shared.problem("reader \(reader): \(error)")
                    }
                } while !shared.done.isSet
            }.start()
        }
        var g = SeededGenerator(seed: 99)
        var balances = [UInt64](repeating: 100, count: accounts + 1)
        for round in 1...150 {
            try store.write { tx in
                for _ in 0..<3 {
                    let from = Int.random(in: 1...accounts, using: &g), to = Int.random(in: 1...accounts, using: &g)
                    let moved = UInt64.random(in: 0...balances[from], using: &g)
                    let before = balances
                    balances[from] -= moved
                    balances[to] += moved
                    for row in Set([from, to]) {
                        try tx.put(amount(balances[row]), row: RowID(row), in: c, indexKeys: [IndexKey(index, KeyEncoding.encode(Int(balances[row])))],
                                   previousKeys: [IndexKey(index, KeyEncoding.encode(Int(before[row])))])
                    }
                }
            }
            if round % 40 == 0 { try store.compact() }
        }
        _ = shared.done.setOnce()
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(shared.problems.withLock { $0 } == [])
        print("concurrent readers checked \(shared.snapshots.load(ordering: .relaxed)) snapshots")
        #expect(shared.snapshots.load(ordering: .relaxed) > 0)
        try expectClean(store)
    }

    /// A blob deleted by a later commit stays readable to readers that began before it.
    @Test func readersKeepTheirBlobsWhileAWriterDeletesThem() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let (id, other) = try store.write { tx in (try tx.putBlob([1, 2, 3]), try tx.putBlob([4])) }
        let file = store.blobs.filePath(id.rawValue)
        do {
            let old = try store.beginRead()
            try store.write { try $0.deleteBlob(id) }
            #expect(try old.blob(id) == [1, 2, 3])
            let newer = try store.beginRead()
            try store.compact()
            #expect(try old.blob(id) == [1, 2, 3])
            _ = try store.read { tx in expectStoreError(.notFound) { try tx.blob(id) } }
            withExtendedLifetime(newer) {}
            #expect(FileManager.default.fileExists(atPath: file))
            withExtendedLifetime(old) {}
        }
        // Once the last reader that could see it is gone, so is the file.
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try store.read { try $0.blob(other) } == [4])
        try expectClean(store)
    }

    // MARK: Rollback

    @Test func rollbackDropsEverything() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        let c = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            try tx.put([1], row: 1, in: c)
            try tx.setMetadata("m", [1])
            return c
        }
        let committed = try store.read { try EngineStoreDump($0, metadataNames: ["m"]) }
        let sizeBefore = try Self.committedSize(path)
        func blobFiles() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: path + ".blobs").count) ?? 0 }
        let blobsBefore = blobFiles()

        // Explicit rollback, with enough written to have flushed part of the transaction to the file.
        let tx = try store.beginWrite()
        let payload = [UInt8](repeating: 7, count: 4000)
        for row in 2...600 as ClosedRange<RowID> { try tx.put(payload, row: row, in: c) }
        try tx.put([2], row: 1, in: c)
        try tx.delete(1, in: c)
        let d = try tx.createCollection(named: "d")
        try tx.put([3], row: 1, in: d)
        _ = try tx.createIndex(named: "i", on: c, unique: true)
        try tx.setMetadata("m", [2])
        try tx.setMetadata("n", [3])
        _ = try tx.putBlob([4, 5, 6])
        #expect(try tx.count(in: c) == 599)
        tx.rollback()
        tx.rollback()   // twice is harmless
        expectStoreError(.closed) { try tx.put([1], row: 1, in: c) }
        expectStoreError(.closed) { try tx.commit() }

        #expect(try store.read { try EngineStoreDump($0, metadataNames: ["m"]) } == committed)
        #expect(try store.read { $0.collection(named: "d") } == nil)
        #expect(try store.read { try $0.metadata("n") } == nil)
        #expect(try Self.committedSize(path) == sizeBefore)
        #expect(blobFiles() == blobsBefore)

        // A throwing body rolls back.
        struct Oops: Error {}
        #expect(throws: Oops.self) {
            try store.write { tx throws in
                try tx.put([9], row: 1, in: c)
                throw Oops()
            }
        }
        #expect(try store.read { try $0.record(1, in: c) } == [1])

        // A transaction dropped without a commit rolls back and lets the next writer in.
        func dropAWriteTransaction() throws {
            let tx = try store.beginWrite()
            try tx.put([8], row: 1, in: c)
            try tx.put([8], row: 2, in: c)
        }
        try dropAWriteTransaction()
        let next = DispatchSemaphore(value: 0)
        let thread = Thread { if let tx = try? store.beginWrite() { tx.rollback() }; next.signal() }
        thread.start()
        #expect(next.wait(timeout: .now() + 120) == .success, "a dropped write transaction still holds the writer")
        #expect(try store.read { try EngineStoreDump($0, metadataNames: ["m"]) } == committed)
        #expect(try Self.committedSize(path) == sizeBefore)

        // Still usable, and all of it survives a reopen.
        try store.write { try $0.put([5], row: 5, in: c) }
        try expectClean(store)
        #expect(try store.read { try $0.count(in: c) } == 2)
    }

    // MARK: Metadata

    @Test func metadataSetGetRemove() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        do {
            let store = try Store(path: path)
            try store.write { tx throws in
                #expect(try tx.metadata("schema") == nil)
                try tx.setMetadata("schema", Self.bytes("v1"))
                try tx.setMetadata("other", [])
                try tx.setMetadata("big", [UInt8](repeating: 3, count: 100_000))
                #expect(try tx.metadata("schema") == Self.bytes("v1"))
                try tx.setMetadata("schema", Self.bytes("v2"))            // replace in the same transaction
                #expect(try tx.metadata("schema") == Self.bytes("v2"))
            }
            try store.read { tx throws in
                #expect(try tx.metadata("schema") == Self.bytes("v2"))
                #expect(try tx.metadata("other") == [])
                #expect(try tx.metadata("big") == [UInt8](repeating: 3, count: 100_000))
                #expect(try tx.metadata("schem") == nil)
                #expect(tx.collectionNames.isEmpty)                        // metadata is not a collection
            }
            try store.write { tx throws in
                try tx.setMetadata("other", nil)
                try tx.setMetadata("missing", nil)                          // removing nothing is fine
                try tx.setMetadata("schema", Self.bytes("v3"))
            }
            try expectClean(store)
        }
        let store = try Store(path: path)
        try store.read { tx throws in
            #expect(try tx.metadata("schema") == Self.bytes("v3"))
            #expect(try tx.metadata("other") == nil)
            #expect(try tx.metadata("big")?.count == 100_000)
        }
        try store.compact()
        try store.read { tx throws in
            #expect(try tx.metadata("schema") == Self.bytes("v3"))
            #expect(try tx.metadata("other") == nil)
        }
        try expectClean(store)
    }

    // MARK: Blobs

    @Test func blobsPutGetDeleteAndReopen() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        dir.expectDamage(at: path)   // a blob file is removed at the end, on purpose
        let small = [UInt8](repeating: 1, count: 10)
        let large = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let (a, b, e): (BlobID, BlobID, BlobID)
        do {
            let store = try Store(path: path)
            (a, b, e) = try store.write { tx throws in
                let a = try tx.putBlob(small)
                let b = try tx.putBlob(large)
                let e = try tx.putBlob([])
                #expect(try tx.blob(a) == small)          // readable in its own transaction
                return (a, b, e)
            }
            #expect(Set([a, b, e]).count == 3)
            try store.read { tx throws in
                #expect(try tx.blob(a) == small)
                #expect(try tx.blob(b) == large)
                #expect(try tx.blob(e) == [])
                #expect(try tx.blobLength(b) == large.count)
                #expect(try tx.blobLength(BlobID(rawValue: 999)) == nil)
                #expect(try tx.blobIDs() == [a, b, e].sorted())
                expectStoreError(.notFound) { try tx.blob(BlobID(rawValue: 999)) }
            }
            try store.write { tx throws in
                try tx.deleteBlob(a)
                expectStoreError(.notFound) { try tx.deleteBlob(BlobID(rawValue: 999)) }
                expectStoreError(.notFound) { try tx.blob(a) }
            }
            #expect(!FileManager.default.fileExists(atPath: store.blobs.filePath(a.rawValue)))
            try expectClean(store)
        }
        let store = try Store(path: path)
        try store.read { tx throws in
            expectStoreError(.notFound) { try tx.blob(a) }
            #expect(try tx.blob(b) == large)
            #expect(try tx.blobIDs() == [b, e].sorted())
        }
        // New blobs never reuse an id, even of a deleted blob.
        let c = try store.write { try $0.putBlob([3]) }
        #expect(c.rawValue > Swift.max(a.rawValue, b.rawValue, e.rawValue))
        try expectClean(store)

        // A blob whose file went missing is reported, not trapped on.
        try FileManager.default.removeItem(atPath: store.blobs.filePath(c.rawValue))
        _ = try store.read { tx in expectStoreError(.corrupt) { try tx.blob(c) } }
        #expect(try !store.verify().isClean)
    }

    @Test func compactionRemovesUnreferencedBlobFiles() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        let kept = try store.write { try $0.putBlob([1, 2, 3]) }
        // A rolled-back transaction's blob (its file is removed at once, or at the latest by compaction).
        let tx = try store.beginWrite()
        let dropped = try tx.putBlob([4, 5, 6])
        tx.rollback()
        // A file that no commit refers to, as a transaction cut short by a crash leaves it.
        let orphan = store.blobs.filePath(dropped.rawValue + 100)
        try Data([7, 8, 9]).write(to: URL(fileURLWithPath: orphan))
        // A file that is not a blob is left alone.
        let stranger = path + ".blobs/notes.txt"
        try Data("hi".utf8).write(to: URL(fileURLWithPath: stranger))

        let report = try store.compact()
        #expect(report.blobFilesRemoved >= 1)
        #expect(!FileManager.default.fileExists(atPath: orphan))
        #expect(!FileManager.default.fileExists(atPath: store.blobs.filePath(dropped.rawValue)))
        #expect(FileManager.default.fileExists(atPath: stranger))
        #expect(try store.read { try $0.blob(kept) } == [1, 2, 3])
        let files = try FileManager.default.contentsOfDirectory(atPath: path + ".blobs").filter { $0.hasSuffix(".blob") }
        #expect(files == [URL(fileURLWithPath: store.blobs.filePath(kept.rawValue)).lastPathComponent])
        try expectClean(store)
    }

    // MARK: Compaction

    @Test func compactionReclaimsSpaceAndKeepsContents() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path, options: StoreOptions(durability: .deferred))
        let c = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            _ = try tx.createIndex(named: "u", on: c, unique: true)
            _ = try tx.createIndex(named: "n", on: c, unique: false)
            return c
        }
        let (u, n) = try store.read { tx in (tx.index(named: "u", in: c)!.id, tx.index(named: "n", in: c)!.id) }
        func keys(_ row: RowID, _ round: Int) -> [IndexKey] {
            [IndexKey(u, KeyEncoding.encode(Int(row) * 1000 + round)), IndexKey(n, KeyEncoding.encode(round % 3))]
        }
        // Many small commits that rewrite the same rows: most of the file is superseded.
        for round in 0..<30 {
            try store.write { tx throws in
                for row in 1...100 as ClosedRange<RowID> {
                    try tx.put(Self.bytes("round \(round) row \(row) " + String(repeating: "x", count: 50)), row: row, in: c,
                               indexKeys: keys(row, round), previousKeys: round == 0 ? [] : keys(row, round - 1))
                }
                if round % 10 == 0 { try tx.setMetadata("round", [UInt8(round)]) }
            }
        }
        try store.write { tx in for row in 51...100 as ClosedRange<RowID> { try tx.delete(row, in: c, indexKeys: keys(row, 29)) } }
        let before = try store.read { try EngineStoreDump($0, metadataNames: ["round"]) }
        let sizeBefore = try Self.fileSize(path)
        let infoBefore = try store.info()
        #expect(infoBefore.reclaimableBytes > sizeBefore / 2)
        let sequence = try store.read { $0.sequence }

        let report = try store.compact()
        let sizeAfter = try Self.fileSize(path)
        #expect(report.bytesBefore == sizeBefore)
        #expect(report.bytesAfter == sizeAfter)
        #expect(sizeAfter < sizeBefore / 5, "compaction left \(sizeAfter) of \(sizeBefore) bytes")
        #expect(report.bytesReclaimed == sizeBefore - sizeAfter)
        #expect(report.records == 50)
        #expect(try store.read { try EngineStoreDump($0, metadataNames: ["round"]) } == before)
        #expect(try store.read { $0.sequence } == sequence)
        #expect(try store.info().reclaimableBytes < sizeAfter / 4)
        #expect(!FileManager.default.fileExists(atPath: path + ".compact"))
        try expectClean(store)

        // Compacting again changes nothing that matters; writing after a compaction works and survives a reopen.
        try store.compact()
        try store.write { tx in try tx.put(Self.bytes("after"), row: 1000, in: c, indexKeys: [IndexKey(u, KeyEncoding.encode(-1))]) }
        try store.sync()
        let after = try store.read { try EngineStoreDump($0, metadataNames: ["round"]) }
        #expect(after.counts["c"] == 51)
        try expectClean(store)
        store.close()
        withExtendedLifetime(store) {}
    }

    @Test func compactionThenReopen() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        var dump: EngineStoreDump
        do {
            let store = try Store(path: path)
            try store.write { tx throws in
                let c = try tx.createCollection(named: "c")
                let i = try tx.createIndex(named: "i", on: c, unique: false)
                for row in 1...1000 as ClosedRange<RowID> { try tx.put([UInt8(row % 256)], row: row, in: c, indexKeys: [IndexKey(i, KeyEncoding.encode(Int(row % 13)))]) }
            }
            try store.write { tx in
                let c = tx.collection(named: "c")!, i = tx.index(named: "i", in: c)!.id
                for row in 1...500 as ClosedRange<RowID> { try tx.delete(row, in: c, indexKeys: [IndexKey(i, KeyEncoding.encode(Int(row % 13)))]) }
            }
            try store.compact()
            try store.write { tx in try tx.put([1], row: 5000, in: tx.collection(named: "c")!) }
            dump = try store.read { try EngineStoreDump($0) }
        }
        let store = try Store(path: path)
        #expect(try store.read { try EngineStoreDump($0) } == dump)
        try expectClean(store)
    }

    // MARK: Opening

    @Test func readOnlyOpen() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        do {
            let store = try Store(path: path)
            try store.write { tx in try tx.put([1, 2], row: 1, in: tx.createCollection(named: "c")) }
        }
        let sizeBefore = try Self.fileSize(path)
        let store = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(try store.read { try $0.record(1, in: $0.collection(named: "c")!) } == [1, 2])
        let error = expectStoreError(.readOnly) { try store.beginWrite() }
        #expect(error?.message.contains("read-only") == true)
        expectStoreError(.readOnly) { try store.write { _ in } }
        expectStoreError(.readOnly) { try store.compact() }
        try expectClean(store)
        // Several read-only opens may share the store.
        let second = try Store(path: path, options: StoreOptions(readOnly: true))
        #expect(try second.read { try $0.count(in: $0.collection(named: "c")!) } == 1)
        #expect(try Self.fileSize(path) == sizeBefore)
    }

    @Test func missingStore() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path("absent.strata")
        let error = expectStoreError(.notFound) { try Store(path: path, options: StoreOptions(createIfMissing: false)) }
        #expect(error?.path == path)
        #expect(error?.description.contains(path) == true)
        expectStoreError(.notFound) { try Store(path: path, options: StoreOptions(readOnly: true)) }
        #expect(!FileManager.default.fileExists(atPath: path))
        // A missing directory is an I/O failure, not a trap.
        let deep = dir.path("no/such/dir/s.strata")
        do {
            _ = try Store(path: deep)
            Issue.record("opened a store in a missing directory")
        } catch let error as StoreError {
            #expect(error.code == .ioFailure || error.code == .notFound)
            #expect(error.underlying != nil || error.code == .notFound)
        }
    }

    @Test(arguments: [
        Array("hello, this is a text file and not a Strata store at all, no no no, not at all".utf8),
        Array("STRATA".utf8),                                             // shorter than a header
        [UInt8](repeating: 0, count: 4096),
        Array("SQLite format 3\0".utf8) + [UInt8](repeating: 1, count: 200),
    ])
    func notAStore(contents: [UInt8]) throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        dir.expectDamage(at: path)   // not a store, on purpose
        try Data(contents).write(to: URL(fileURLWithPath: path))
        for readOnly in [false, true] {
            let error = expectStoreError(.notAStore) { try Store(path: path, options: StoreOptions(readOnly: readOnly)) }
            #expect(error?.message.contains("not a Strata store") == true)
        }
        // The file is left exactly as it was, and the lock is released.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(contents))
        expectStoreError(.notAStore) { try Store(path: path) }
        // And without a lock file the opens made beside it; one that was there stays.
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
        #expect(FileManager.default.createFile(atPath: path + ".lock", contents: Data()))
        expectStoreError(.notAStore) { try Store(path: path) }
        #expect(FileManager.default.fileExists(atPath: path + ".lock"))
    }

    @Test func emptyFile() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        expectStoreError(.notAStore) { try Store(path: path, options: StoreOptions(readOnly: true)) }
        // Opened writable, an empty file is an interrupted creation: it becomes a store.
        let store = try Store(path: path)
        try store.write { tx in _ = try tx.createCollection(named: "c") }
        try expectClean(store)
    }

    @Test func newerFormat() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        dir.expectDamage(at: path)   // a newer format, on purpose
        do {
            let store = try Store(path: path)
            try store.write { tx in try tx.put([1], row: 1, in: tx.createCollection(named: "c")) }
        }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let header = FileHeader(version: FileHeader.currentVersion + 1, salt: 42, createdMilliseconds: 0).encode()
        bytes.replaceSubrange(0..<header.count, with: header)
        try bytes.write(to: URL(fileURLWithPath: path))
        for readOnly in [false, true] {
            let error = expectStoreError(.newerFormat) { try Store(path: path, options: StoreOptions(readOnly: readOnly)) }
            #expect(error?.message.contains("version \(FileHeader.currentVersion + 1)") == true)
            #expect(error?.message.contains("newer") == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)   // untouched
    }

    @Test func closedStore() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        let c = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            try tx.put([1], row: 1, in: c)
            return c
        }
        let reader = try store.beginRead()
        store.close()
        expectStoreError(.closed) { try store.beginRead() }
        expectStoreError(.closed) { try store.beginWrite() }
        // A transaction begun before the close keeps its snapshot readable.
        #expect(try reader.record(1, in: c) == [1])
    }

    @Test func errorsHaveUsefulMessages() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path()
        let store = try Store(path: path)
        try store.write { tx throws in
            let c = try tx.createCollection(named: "users")
            let email = try tx.createIndex(named: "email", on: c, unique: true)
            try tx.put([1], row: 1, in: c, indexKeys: [IndexKey(email, KeyEncoding.encode("a@x"))])
            let error = expectStoreError(.uniqueConstraintViolation) {
                try tx.put([2], row: 2, in: c, indexKeys: [IndexKey(email, KeyEncoding.encode("a@x"))])
            }
            #expect(error?.message.contains("\"email\"") == true)
            #expect(error?.message.contains("row 1") == true)
            #expect(error?.description.contains("[uniqueConstraintViolation]") == true)
            #expect(error?.description.contains(path) == true)

            let tooLong = expectStoreError(.keyTooLarge) {
                try tx.put([3], row: 3, in: c, indexKeys: [IndexKey(email, [UInt8](repeating: 1, count: 5000))])
            }
            #expect(tooLong?.message.contains("5000") == true)
            let other = try tx.createCollection(named: "other")
            let wrong = expectStoreError(.invalidArgument) { try tx.put([4], row: 1, in: other, indexKeys: [IndexKey(email, [1])]) }
            #expect(wrong?.message.contains("not an index of") == true)
            expectStoreError(.invalidArgument) { try tx.createIndex(named: "email", on: c, unique: false) }
        }
        // Every message says what to do, and the description carries the code and path.
        let locked = expectStoreError(.locked) { try Store(path: path) }
        #expect(locked?.message.contains("Close it") == true)
        #expect(locked?.description.contains("[locked]") == true)
        #expect(locked?.description.contains(path) == true)
        for code in [StoreError.Code.corrupt, .diskFull, .ioFailure, .notAStore] {
            #expect(!code.description.isEmpty)
        }
    }
}
