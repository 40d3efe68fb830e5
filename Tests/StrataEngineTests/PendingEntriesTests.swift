// Held-back index entries are applied in one order: by key (and, in a non-unique index, by
// row), then in the order they came. `sorted()` radix-sorts by the keys' first 8 bytes and
// finishes runs of equal first bytes by comparison; checked here against a plain comparison
// sort of every operation, on keys that share long prefixes, are prefixes of each other, end
// in zeros, repeat, or differ only past byte 8.
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct PendingEntriesTests {
    @Test(arguments: [(1, 10), (2, 63), (3, 64), (4, 700), (5, 5000)] as [(UInt64, Int)])
    func sortedAgreesWithAComparisonSort(seed: UInt64, count: Int) {
        var g = SeededGenerator(seed: seed)
        for unique in [true, false] {
            let entries = PendingEntries(unique: unique)
            var added: [(key: [UInt8], row: RowID, kind: UInt8)] = []
            for _ in 0..<count {
                let key = Self.key(&g)
                let row = RowID.random(in: 1...50, using: &g)
                let kind = Bool.random(using: &g) ? PendingEntries.insert : PendingEntries.remove
                key.withUnsafeBytes { entries.add(kind, key: $0, row: row) }
                added.append((key, row, kind))
            }
            // The reference: every operation compared whole, ties in the order they came.
            let expected = added.indices.sorted { a, b in
                let (x, y) = (added[a], added[b])
                if x.key != y.key { return x.key.lexicographicallyPrecedes(y.key) }
                if !unique && x.row != y.row { return x.row < y.row }
                return a < b
            }
            let got = entries.sorted().map { offset in
                (entries.withKey(at: offset) { Array($0) }, entries.row(at: offset), entries.kind(at: offset))
            }
            #expect(got.count == expected.count)
            for (g, e) in zip(got, expected) {
                #expect(g.0 == added[e].key && g.1 == added[e].row && g.2 == added[e].kind, "seed \(seed), unique \(unique)")
            }
        }
    }

    /// A unique entry held back in the transaction for another row fails a removal that names
    /// it (the check and the record are one probe of the held-back table): a damaged index
    /// lost row 1's entry, so row 2 could take the key, and row 1's deletion must not take it out.
    @Test func aRemovalOfAKeyHeldBackForAnotherRowFails() throws {
        let dir = try EngineTestDirectory()
        dir.expectDamage(at: dir.path())   // an index entry is removed behind the engine's back, on purpose
        let store = try Store(path: dir.path(), options: StoreOptions())
        let key = KeyEncoding.encode("ada@example.com")
        let (c, index) = try store.write { tx throws in
            let c = try tx.createCollection(named: "people")
            let index = try tx.createIndex(named: "email", on: c, unique: true)
            try tx.put(Array("Ada".utf8), row: 1, in: c, indexKeys: [IndexKey(index, key)])
            return (c, index)
        }
        try store.write { tx throws in _ = try key.withUnsafeBytes { try tx.tree(.index(index.rawValue)).remove($0) } }
        let error = expectStoreError(.corrupt) {
            try store.write { tx throws in
                try tx.put(Array("Grace".utf8), row: 2, in: c, indexKeys: [IndexKey(index, key)])
                try tx.delete(1, in: c, indexKeys: [IndexKey(index, key)])
            }
        }
        #expect(error?.message.contains("has no entry for row 1") == true)
        try store.read { tx throws in
            #expect(try tx.record(1, in: c) == Array("Ada".utf8))
            #expect(try tx.record(2, in: c) == nil)
        }
        // Held back for the same row, the removal goes through.
        try store.write { tx throws in
            try tx.put(Array("Grace".utf8), row: 2, in: c, indexKeys: [IndexKey(index, key)])
            #expect(try tx.delete(2, in: c, indexKeys: [IndexKey(index, key)]))
        }
        try store.read { tx throws in #expect(try tx.record(2, in: c) == nil) }
    }

    /// Held-back entries are applied with their row written in place (`TreeKey.writeRow`): the
    /// same bytes `appendRow` appends, which readers of the index parse.
    @Test func aRowWrittenInPlaceIsTheRowAppended() {
        var g = SeededGenerator(seed: 9)
        var rows: [RowID] = [0, 1, 255, 256, 65_535, 65_536, RowID.max - 1, RowID.max]
        for shift in 0..<64 { rows.append(RowID(1) << RowID(shift)); rows.append(g.next() >> RowID(shift)) }
        for row in rows {
            var appended: [UInt8] = []
            TreeKey.appendRow(row, to: &appended)
            let written = withUnsafeTemporaryAllocation(byteCount: TreeKey.maximumRowSuffix, alignment: 8) { buffer in
                Array(UnsafeRawBufferPointer(start: buffer.baseAddress!, count: TreeKey.writeRow(row, to: buffer.baseAddress!)))
            }
            #expect(written == appended, "row \(row)")
        }
    }

    private static func key(_ g: inout SeededGenerator) -> [UInt8] {
        let family: [UInt8] = [[], [7, 7, 7, 7, 7, 7, 7, 7, 7, 7], [7, 7, 7], [0, 0], [255, 1]][Int.random(in: 0..<5, using: &g)]
        let tail = (0..<Int.random(in: 0...12, using: &g)).map { _ in UInt8.random(in: 0...3, using: &g) * 85 }
        return family + tail
    }
}
