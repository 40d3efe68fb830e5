// A transaction's held-back index removals are applied in key order (WriteTransaction.apply):
// the next key of such a run is searched for in the leaf of the last removal from the cell
// that removal left in its place on (`MutableTree.removeAscending`, `PageView.search(_:from:)`),
// and a deletion removes the row cell it found to read it without searching for it again
// (`MutableTree.removeFound`). Both only narrow where a key is looked for, so every key must
// be found, and every absent one missed, exactly as a search from the first cell does.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct AscendingRemovalTests {
    /// Keys of several shapes, sorted: dense row ids, sparse big-endian integers, random
    /// 16-byte keys, strings of many lengths with a common prefix.
    static func keySets() -> [(String, [[UInt8]])] {
        var g = SeededGenerator(seed: 11)
        let dense = (1...120).map { withUnsafeBytes(of: UInt64($0).bigEndian) { Array($0) } }
        let sparse = (0..<120).map { _ in UInt64.random(in: 0...1_000_000, using: &g) }
        let random = (0..<100).map { _ in (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) } }
        let strings = (0..<90).map { i in Array("customer-\(i * 7)-".utf8) + [UInt8](repeating: 0x61, count: i % 13) }
        return [("dense", dense),
                ("sparse", Set(sparse).map { withUnsafeBytes(of: $0.bigEndian) { Array($0) } }),
                ("random", Set(random).map { $0 }), ("strings", Set(strings).map { $0 })]
            .map { ($0.0, $0.1.sorted { $0.lexicographicallyPrecedes($1) }) }
    }

    /// Every key held, and the keys just beside each (absent), searched for from every start at
    /// or before where it is: the same answer as a search from the first cell, in a node and in
    /// its written (packed) page.
    @Test func aSearchFromAStartAgreesWithAWholeSearch() throws {
        for (name, keys) in Self.keySets() {
            let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
            for key in keys { key.withUnsafeBytes { k in [UInt8(1)].withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: 0) } } }
            var probes: [[UInt8]] = [[], [0], [0xFF, 0xFF]]
            for key in keys {
                probes.append(key)
                probes.append(key + [0])
                if let last = key.last, last > 0 { probes.append(Array(key.dropLast()) + [last - 1]) }
            }
            var page: [UInt8] = []
            leaf.encode(into: &page)
            func check(_ view: PageView, _ what: String) {
                for probe in probes {
                    probe.withUnsafeBytes { k in
                        let whole = view.search(k)
                        for start in 0...whole.index {
                            let from = view.search(k, from: start)
                            #expect(from.index == whole.index && from.found == whole.found, "\(name), \(what): start \(start) of \(whole.index)")
                        }
                    }
                }
            }
            check(leaf.view, "node")
            try page.withUnsafeBytes { raw in
                try #require(PageLayout.check(raw.baseAddress!, length: raw.count, offset: 1 << 20))
                check(PageView(raw.baseAddress!), "page")
            }
        }
    }

    /// Rows with a unique and a non-unique index lose subsets of every kind in one
    /// transaction each (every other row, a random quarter, runs, nearly all), some with new
    /// rows put among the removals (an insert breaks a run); deleting through the record finds
    /// each row once. The index entries and the rows left agree with a model after each commit,
    /// and `verify` finds nothing wrong.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func removalsInKeyOrderLeaveWhatAModelSays(seed: UInt64) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: 64 << 10))
        var g = SeededGenerator(seed: seed)
        let (c, byName, byGroup) = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "name", on: c, unique: true), try tx.createIndex(named: "group", on: c, unique: false))
        }
        var model: [RowID: (name: [UInt8], group: Int)] = [:]
        func record(_ row: RowID) -> [UInt8] {
            guard let m = model[row] else { return [] }
            return withUnsafeBytes(of: UInt64(m.group).bigEndian) { Array($0) } + m.name
        }
        func keys(ofRecord r: UnsafeRawBufferPointer) -> [IndexKey] {
            let group = Int(UInt64(bigEndian: r.loadUnaligned(as: UInt64.self)))
            return [IndexKey(byName, KeyEncoding.encode(String(decoding: r[8...], as: UTF8.self))), IndexKey(byGroup, KeyEncoding.encode(group))]
        }
        var next: RowID = 1
        func put(_ tx: WriteTransaction, _ g: inout SeededGenerator) throws {
            let row = next
            next += 1
            let name = (0..<Int.random(in: 4...24, using: &g)).map { _ in UInt8.random(in: 0x61...0x7A, using: &g) } + Array("\(row)".utf8)
            model[row] = (name, Int.random(in: 0..<40, using: &g))
            try record(row).withUnsafeBytes { r in try tx.put(r, row: row, in: c, indexKeys: keys(ofRecord: r)) }
        }
        try store.write { tx throws in for _ in 0..<3000 { try put(tx, &g) } }
        for round in 0..<6 {
            let live = model.keys.sorted()
            let doomed: [RowID]
            switch round {
            case 0: doomed = live.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
            case 1: doomed = live.filter { _ in Int.random(in: 0..<4, using: &g) == 0 }
            case 2: doomed = Array(live[100..<700])
            case 3: doomed = live.filter { _ in Int.random(in: 0..<3, using: &g) == 0 }
            case 4: doomed = Array(live.dropLast(3))
            default: doomed = live
            }
            try store.write { tx throws in
                for (i, row) in doomed.shuffled(using: &g).enumerated() {
                    #expect(try tx.delete(row, in: c, indexKeysOf: { keys(ofRecord: $0) }))
                    model[row] = nil
                    if round % 2 == 1 && i % 5 == 0 { try put(tx, &g) }
                }
                #expect(try !tx.delete(doomed.first ?? 1, in: c, indexKeysOf: { keys(ofRecord: $0) }))
            }
            try store.read { tx throws in
                var rows: [RowID] = []
                var cursor = try tx.rows(in: c)
                while let (row, r) = try cursor.next() {
                    rows.append(row)
                    #expect(r == record(row), "seed \(seed) round \(round) row \(row)")
                }
                #expect(rows == model.keys.sorted(), "seed \(seed) round \(round)")
                var named: [RowID] = []
                var entries = try tx.entries(in: byName)
                while let (key, row) = try entries.next() {
                    named.append(row)
                    #expect(key == KeyEncoding.encode(String(decoding: model[row]?.name ?? [], as: UTF8.self)), "seed \(seed) round \(round) row \(row)")
                }
                #expect(named.sorted() == model.keys.sorted(), "seed \(seed) round \(round)")
                var grouped: [RowID] = []
                var byGroups = try tx.entries(in: byGroup)
                while let (key, row) = try byGroups.next() {
                    grouped.append(row)
                    #expect(key == KeyEncoding.encode(model[row]?.group ?? -1), "seed \(seed) round \(round) row \(row)")
                }
                #expect(grouped.sorted() == model.keys.sorted(), "seed \(seed) round \(round)")
                for (row, m) in model where row % 7 == 0 {
                    #expect(try tx.lookup(KeyEncoding.encode(String(decoding: m.name, as: UTF8.self)), in: byName) == row)
                }
            }
            let report = try store.verify()
            #expect(report.problems.isEmpty, "seed \(seed) round \(round): \(report.problems)")
        }
    }
}
