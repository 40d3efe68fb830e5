// Trees changed in every way a page can be: keys with long shared prefixes inserted inside a
// page's range and past either end (a copied page keeps its prefix until a key without it
// comes), splits, merges and emptied pages, with a budget small enough that pages are written
// out and copied again many times within one transaction. Checked against a sorted model.
import Foundation
import Testing
@testable import StrataEngine

@Suite struct TreeShapeTests {
    @Test(arguments: [1, 2, 3] as [UInt64]) func indexEntriesAgreeWithAModel(seed: UInt64) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 32 << 10))
        var g = EngineSeededGenerator(seed: seed)
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
