// A written leaf is packed (Page.swift); a transaction that changes it keeps it packed while
// it only loses cells (`Node.removeCell` closes them up in place, in leaves of fewer cells
// than `Node.packedEditLimit`), takes cells that fit its layout (PackedInsertTests) or has
// values replaced by as many bytes, and lays it out with its lengths at any other change. Here leaves of each packed shape (row leaves: one
// suffix length; a unique index of keys of many lengths whose rows take one or two varint
// bytes: the varint shape; a non-unique index: no values) lose rows, some down to nothing,
// then some take inserts and replacements (of the same length too) after the removals, in
// transactions with budgets small and large, with rollbacks; each round is checked against
// a model and with `verify`.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct PackedLeafTests {
    @Test(arguments: [(1, 32 << 10), (2, 16 << 20), (3, 64 << 10)] as [(UInt64, Int)])
    func leavesThatLoseCellsAgreeWithAModel(seed: UInt64, cacheSize: Int) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(cacheSize: cacheSize))
        var g = SeededGenerator(seed: seed)
        let (c, byName, byGroup) = try store.write { tx throws in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "name", on: c, unique: true), try tx.createIndex(named: "group", on: c, unique: false))
        }
        var model: [RowID: (name: String, group: Int, record: [UInt8])] = [:]
        func keys(_ row: RowID) -> [IndexKey] {
            guard let m = model[row] else { return [] }
            return [IndexKey(byName, KeyEncoding.encode(m.name)), IndexKey(byGroup, KeyEncoding.encode(m.group))]
        }
        func put(_ row: RowID, _ tx: WriteTransaction, _ g: inout SeededGenerator) throws {
            let previous = keys(row)
            let name = "n\(row)-" + String(repeating: "x", count: Int.random(in: 0..<20, using: &g))
            // Half the replacements keep the record's length (a packed leaf replaces it in place).
            let length = model[row].map { Bool.random(using: &g) ? $0.record.count : nil } ?? nil
            let record = [UInt8](repeating: UInt8.random(in: 0...255, using: &g), count: length ?? Int.random(in: 40..<220, using: &g))
            model[row] = (name, Int.random(in: 0..<9, using: &g), record)
            try tx.put(record, row: row, in: c, indexKeys: keys(row), previousKeys: previous)
        }
        try store.write { tx throws in for row in RowID(1)...1500 { try put(row, tx, &g) } }
        for round in 0..<8 {
            let saved = model
            let rollback = round % 4 == 3
            do {
                try store.write { tx throws in
                    // Removals first (the leaves are copied packed), in runs and at random.
                    let live = model.keys.sorted()
                    let start = live.isEmpty ? 0 : Int.random(in: 0..<live.count, using: &g)
                    let run = live[start..<Swift.min(live.count, start + Int.random(in: 0..<300, using: &g))]
                    for row in run where Bool.random(using: &g) || round % 2 == 0 {
                        #expect(try tx.delete(row, in: c, indexKeys: keys(row)))
                        model[row] = nil
                    }
                    for _ in 0..<200 {
                        guard let row = model.keys.randomElement(using: &g) else { break }
                        #expect(try tx.delete(row, in: c, indexKeys: keys(row)))
                        model[row] = nil
                    }
                    // Then changes among them (a packed leaf laid out again), now and then.
                    if round % 3 != 0 {
                        for _ in 0..<150 { try put(RowID.random(in: 1...1800, using: &g), tx, &g) }
                    }
                    if rollback { throw CancellationError() }
                }
            } catch is CancellationError {
                model = saved
            }
            try Self.check(store, c, byName: byName, byGroup: byGroup, model, keys, "seed \(seed) round \(round)")
        }
    }

    /// The store holds `model`'s rows in row order, its names in the unique index, its groups
    /// in the group index, and `verify` finds it clean (`keys`: each row's index keys).
    static func check(_ store: Store, _ c: CollectionID, byName: IndexID, byGroup: IndexID,
                      _ model: [RowID: (name: String, group: Int, record: [UInt8])], _ keys: @escaping (RowID) -> [IndexKey], _ when: String) throws {
        try store.read { tx throws in
            var rows: [RowID] = []
            var cursor = try tx.rows(in: c)
            while let (row, record) = try cursor.next() {
                rows.append(row)
                #expect(record == model[row]?.record, "\(when): row \(row)")
            }
            #expect(rows == model.keys.sorted(), "\(when)")
            for (row, m) in model { #expect(try tx.lookup(KeyEncoding.encode(m.name), in: byName) == row, "\(when): \(m.name)") }
            var grouped = 0
            var entries = try tx.entries(in: byGroup)
            while let (key, row) = try entries.next() {
                grouped += 1
                #expect(model[row].map { KeyEncoding.encode($0.group) == key } == true, "\(when): row \(row) in the group index")
            }
            #expect(grouped == model.count, "\(when)")
        }
        #expect(try store.verify(indexKeys: { _, row, _ in keys(row) }).isClean, "\(when)")
    }
}
