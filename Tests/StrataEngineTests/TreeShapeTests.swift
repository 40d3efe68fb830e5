// Trees changed in every way a page can be: keys with long shared prefixes inserted inside a
// page's range and past either end (a copied page keeps its prefix until a key without it
// comes), splits, merges and emptied pages, with a budget small enough that pages are written
// out and copied again many times within one transaction. Checked against a sorted model.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct TreeShapeTests {
    /// The seeds of a test: all of them where every node is checked after every edit (CI's
    /// internal-checks run, `STRATA_INTERNAL_CHECKS=1`), the first one elsewhere. The run without
    /// the checks covers the same code with less asserted, and this suite was a sixth of its CPU
    /// (34 s of 240 in a debug build), run again under the checks.
    static func seeds(_ all: [UInt64]) -> [UInt64] { Node.checksAfterEveryEdit ? all : [all[0]] }

    @Test(arguments: seeds([1, 2, 3])) func indexEntriesAgreeWithAModel(seed: UInt64) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 32 << 10))
        var g = SeededGenerator(seed: seed)
        let (c, index) = try store.write { tx in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "k", on: c, unique: false))
        }
        var keys: [RowID: String] = [:]
        func key(_ row: RowID) -> String {
            // Long shared prefixes, a few families, and now and then a key that sorts past the others.
            let family = ["aaaaaaaaaaaaaaaaaaaaaaaa/", "aaaaaaaaaaaaaaab/", "zzzz/", ""][Int(row % 4)]
            return family + String(repeating: "x", count: Int(row % 7)) + "\(Int.random(in: 0..<1000, using: &g))"
        }
        for round in 0..<6 {
            try store.write { tx in
                for _ in 0..<1500 {
                    let row = RowID.random(in: 1...1200, using: &g)
                    let previous = keys[row].map { [IndexKey(index, KeyEncoding.encode($0))] } ?? []
                    if keys[row] != nil && Bool.random(using: &g) && round % 2 == 1 {
                        try tx.delete(row, in: c, indexKeys: previous)
                        keys[row] = nil
                    } else {
                        let k = key(row)
                        try tx.put([UInt8](repeating: UInt8(row & 0xFF), count: Int(row % 300)), row: row, in: c,
                                   indexKeys: [IndexKey(index, KeyEncoding.encode(k))], previousKeys: previous)
                        keys[row] = k
                    }
                }
                // Read back inside the transaction too (its own pages, written out or not).
                #expect(try tx.countEntries(in: index) == keys.count)
            }
            try store.read { tx in
                var entries: [([UInt8], RowID)] = []
                var cursor = try tx.entries(in: index)
                while let e = try cursor.next() { entries.append((e.key, e.row)) }
                let expected = keys.map { (KeyEncoding.encode($0.value), $0.key) }.sorted { a, b in
                    return compareBytes(a.0, b.0) != 0 ? compareBytes(a.0, b.0) < 0 : a.1 < b.1
                }
                #expect(entries.map(\.0) == expected.map(\.0), "round \(round)")
                #expect(entries.map(\.1) == expected.map(\.1), "round \(round)")
                var rows: [RowID] = []
                var rowCursor = try tx.rows(in: c)
                while let (row, record) = try rowCursor.next() {
                    rows.append(row)
                    #expect(record == [UInt8](repeating: UInt8(row & 0xFF), count: Int(row % 300)))
                }
                #expect(rows == keys.keys.sorted())
            }
            let keysOf: RecordIndexKeys = { _, row, _ in keys[row].map { [IndexKey(index, KeyEncoding.encode($0))] } }
            #expect(try store.verify(indexKeys: keysOf).isClean)
            if round == 3 { try store.compact() }
        }
    }
}

extension TreeShapeTests {
    /// Keys in runs, as a tree meets them most (new rows in ascending order, a transaction's
    /// index entries sorted at commit), which insert through the path of the last insert
    /// (`MutableTree`'s finger): ascending and descending runs, runs that grow values in place,
    /// random keys between them, and removals, with splits at every level and a budget small
    /// enough that pages are written out within the transaction. Checked against a model.
    @Test(arguments: seeds([1, 2, 3])) func keysInRunsAgreeWithAModel(seed: UInt64) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 48 << 10))
        var g = SeededGenerator(seed: seed)
        let (c, index) = try store.write { tx in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "k", on: c, unique: false))
        }
        var records: [RowID: [UInt8]] = [:]
        var keys: [RowID: String] = [:]
        func key(_ row: RowID) -> String {
            let family = ["aaaaaaaaaaaaaaaaaaaa/", "aaaaaaaaaaaab/", "m/"][Int(row / 700 % 3)]
            return family + String(format: "%08d", Int(row))
        }
        for round in 0..<8 {
            try store.write { tx in
                for run in 0..<6 {
                    let start = RowID.random(in: 1...20_000, using: &g)
                    let length = Int.random(in: 50...900, using: &g)
                    let pattern = (round + run) % 4
                    for step in 0..<length {
                        let row: RowID
                        switch pattern {
                        case 0: row = start + RowID(step)
                        case 1: row = start + RowID(length - step)
                        case 2: row = start + RowID(step % 40) // the same rows again, values growing
                        default: row = RowID.random(in: 1...20_000, using: &g)
                        }
                        let previous = keys[row].map { [IndexKey(index, KeyEncoding.encode($0))] } ?? []
                        if pattern == 3 && step % 5 == 0, keys[row] != nil {
                            try tx.delete(row, in: c, indexKeys: previous)
                            keys[row] = nil
                            records[row] = nil
                            continue
                        }
                        let size = pattern == 2 ? (records[row]?.count ?? 0) + Int.random(in: 1...60, using: &g) : Int.random(in: 0...400, using: &g)
                        let record = [UInt8](repeating: UInt8(truncatingIfNeeded: row &+ UInt64(size)), count: Swift.min(size, 3000))
                        let k = key(row)
                        try tx.put(record, row: row, in: c, indexKeys: [IndexKey(index, KeyEncoding.encode(k))], previousKeys: previous)
                        keys[row] = k
                        records[row] = record
                    }
                }
                #expect(try tx.countEntries(in: index) == keys.count)
            }
            try store.read { tx in
                var rows: [RowID] = []
                var cursor = try tx.rows(in: c)
                while let (row, record) = try cursor.next() {
                    rows.append(row)
                    #expect(record == records[row], "round \(round), row \(row)")
                }
                #expect(rows == records.keys.sorted(), "round \(round)")
                var entries: [RowID] = []
                var entryCursor = try tx.entries(in: index)
                while let e = try entryCursor.next() { entries.append(e.row) }
                // Each key encoded once (not in every comparison of the sort).
                let expected = keys.map { (row: $0.key, encoded: KeyEncoding.encode($0.value)) }.sorted { a, b in
                    let order = compareBytes(a.encoded, b.encoded)
                    return order != 0 ? order < 0 : a.row < b.row
                }
                #expect(entries == expected.map(\.row), "round \(round)")
                for row in records.keys.shuffled(using: &g).prefix(200) { #expect(try tx.record(row, in: c) == records[row]) }
            }
            let keysOf: RecordIndexKeys = { _, row, _ in keys[row].map { [IndexKey(index, KeyEncoding.encode($0))] } }
            #expect(try store.verify(indexKeys: keysOf).isClean)
        }
    }
}

extension TreeShapeTests {
    /// Removals and lookups through the path of the last change (`MutableTree`'s finger): rows
    /// deleted in ascending and descending runs (each read inside the transaction just before,
    /// as a save reads a row's keys), rows never written looked up and deleted inside the
    /// remembered leaf's range, runs long enough to empty leaves and merge neighbours at every
    /// level, inserts between them, and a budget small enough that pages are written out and
    /// copied again. Checked against a model, and with `verify`.
    @Test(arguments: seeds([1, 2, 3, 4])) func removalsInRunsAgreeWithAModel(seed: UInt64) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 48 << 10))
        var g = SeededGenerator(seed: seed)
        let (c, index) = try store.write { tx in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "k", on: c, unique: true))
        }
        var records: [RowID: [UInt8]] = [:]
        func key(_ row: RowID) -> [IndexKey] { [IndexKey(index, KeyEncoding.encode("key/\(row * 7919 % 100_003)"))] }
        // Every other row, so that the rows between are missing inside every leaf's range.
        try store.write { tx in
            for row in stride(from: RowID(2), through: 12_000, by: 2) {
                let record = [UInt8](repeating: UInt8(truncatingIfNeeded: row), count: Int(row % 90) + 10)
                try tx.put(record, row: row, in: c, indexKeys: key(row))
                records[row] = record
            }
        }
        for round in 0..<8 {
            try store.write { tx in
                for run in 0..<5 {
                    let start = RowID.random(in: 1...12_000, using: &g)
                    let length = Int.random(in: 20...1500, using: &g)
                    let descending = (round + run) % 2 == 1
                    for step in 0..<length {
                        let row = descending ? start &- RowID(step) : start + RowID(step)
                        guard row >= 1, row <= 12_000 else { continue }
                        let stored = try tx.record(row, in: c)
                        #expect(stored == records[row], "round \(round), row \(row)")
                        let every = run == 4 ? 3 : 1
                        if step % every != 0 { continue }
                        #expect(try tx.delete(row, in: c, indexKeys: stored == nil ? [] : key(row)) == (stored != nil))
                        records[row] = nil
                        #expect(try tx.record(row, in: c) == nil)
                    }
                    // New rows between the runs, some inside the ranges just emptied.
                    for _ in 0..<200 {
                        let row = RowID.random(in: 1...12_000, using: &g)
                        let record = [UInt8](repeating: UInt8(truncatingIfNeeded: row &+ 1), count: Int.random(in: 1...300, using: &g))
                        try tx.put(record, row: row, in: c, indexKeys: key(row), previousKeys: records[row] == nil ? [] : key(row))
                        records[row] = record
                    }
                }
                #expect(try tx.count(in: c) == records.count)
            }
            try store.read { tx in
                var rows: [RowID] = []
                var cursor = try tx.rows(in: c)
                while let (row, record) = try cursor.next() {
                    rows.append(row)
                    #expect(record == records[row], "round \(round), row \(row)")
                }
                #expect(rows == records.keys.sorted(), "round \(round)")
                #expect(try tx.countEntries(in: index) == records.count)
            }
            let keysOf: RecordIndexKeys = { _, row, _ in records[row] == nil ? nil : key(row) }
            #expect(try store.verify(indexKeys: keysOf).isClean)
        }
    }
}
