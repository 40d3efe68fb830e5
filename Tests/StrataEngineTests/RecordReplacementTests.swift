// Replacing a record's bytes while keeping its index keys (what `strata migrate` does to
// records of older layouts).
import Foundation
import Testing
@testable import StrataEngine

@Suite struct RecordReplacementTests {
    @Test func aReplacedRecordKeepsItsIndexEntries() throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path())
        defer { store.close() }
        let (notes, byName, byStars) = try store.write { tx throws in
            let notes = try tx.createCollection(named: "notes")
            let byName = try tx.createIndex(named: "name", on: notes, unique: true)
            let byStars = try tx.createIndex(named: "stars", on: notes, unique: false)
            let doomed = try tx.createIndex(named: "doomed", on: notes, unique: false)
            for i in 1...50 {
                try tx.put(Array("old \(i)".utf8), row: RowID(i), in: notes,
                           indexKeys: [IndexKey(byName, KeyEncoding.encode("n\(i)")), IndexKey(byStars, KeyEncoding.encode(i % 5)),
                                       IndexKey(doomed, KeyEncoding.encode(i))])
            }
            return (notes, byName, byStars)
        }
        try store.write { tx throws in
            // A dropped index's keys stay in the frames written before; they are not reported.
            let doomed = try #require(tx.index(named: "doomed", in: notes))
            try tx.dropIndex(doomed.id)
        }
        try store.write { tx throws in
            for i in 1...50 { #expect(try tx.replaceRecord(Array("new \(i)".utf8), row: RowID(i), in: notes)) }
            #expect(try tx.replaceRecord([1], row: 999, in: notes) == false)
            #expect(try tx.contains(999, in: notes) == false)
            // A row put in this transaction (its frame not yet committed) is replaced the same way.
            try tx.put([9], row: 51, in: notes, indexKeys: [IndexKey(byName, KeyEncoding.encode("n51"))])
            #expect(try tx.replaceRecord([10], row: 51, in: notes))
            expectStoreError(.notFound) { try tx.replaceRecord([1], row: 1, in: CollectionID(rawValue: 99)) }
            // The kept keys are still the row's: an update names them (the dropped index's key is gone).
            try tx.put(Array("newer 7".utf8), row: 7, in: notes, indexKeys: [IndexKey(byName, KeyEncoding.encode("n7"))],
                       previousKeys: [IndexKey(byStars, KeyEncoding.encode(2)), IndexKey(byName, KeyEncoding.encode("n7"))])
            try tx.put(Array("new 7".utf8), row: 7, in: notes, indexKeys: [IndexKey(byName, KeyEncoding.encode("n7")), IndexKey(byStars, KeyEncoding.encode(2))],
                       previousKeys: [IndexKey(byName, KeyEncoding.encode("n7"))])
        }
        try store.read { tx throws in
            #expect(try tx.count(in: notes) == 51)
            #expect(try tx.record(7, in: notes) == Array("new 7".utf8))
            #expect(try tx.record(51, in: notes) == [10])
            #expect(try tx.lookup(KeyEncoding.encode("n7"), in: byName) == 7)
            #expect(try tx.lookup(KeyEncoding.encode("n51"), in: byName) == 51)
            #expect(try tx.countEntries(in: byStars, range: .exact(KeyEncoding.encode(2))) == 10)
            #expect(try tx.countEntries(in: byName) == 51)
        }
        #expect(try store.verify().isClean)
    }
}
