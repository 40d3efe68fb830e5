// Updating and deleting a row names the index keys it was stored with (the engine does not
// keep them with the record): the right keys move its entries, wrong ones are refused with
// `.indexKeyMismatch` and change nothing; `verify(indexKeys:)` checks every row against the
// keys its record should have.
import Foundation
import Testing
@testable import StrataEngine

@Suite struct PreviousKeysTests {
    struct Fixture {
        let store: Store
        let people: CollectionID
        let email: IndexID
        let age: IndexID

        func keys(_ mail: String, _ years: Int) -> [IndexKey] {
            [IndexKey(email, KeyEncoding.encode(mail)), IndexKey(age, KeyEncoding.encode(years))]
        }
    }

    func fixture(_ dir: EngineTestDirectory) throws -> Fixture {
        let store = try Store(path: dir.path())
        let (people, email, age) = try store.write { tx throws in
            let people = try tx.createCollection(named: "people")
            return (people, try tx.createIndex(named: "email", on: people, unique: true),
                    try tx.createIndex(named: "age", on: people, unique: false))
        }
        let f = Fixture(store: store, people: people, email: email, age: age)
        try store.write { tx throws in
            try tx.put(Array("Ada".utf8), row: 1, in: people, indexKeys: f.keys("ada@example.com", 36))
            try tx.put(Array("Alan".utf8), row: 2, in: people, indexKeys: f.keys("alan@example.com", 41))
        }
        return f
    }

    @Test func anUpdateWithTheStoredKeysMovesTheEntries() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        try f.store.write { tx throws in
            // Any order, and a key given twice, is the same set.
            let previous = [f.keys("ada@example.com", 36)[1], f.keys("ada@example.com", 36)[0], f.keys("ada@example.com", 36)[1]]
            try tx.put(Array("Ada L.".utf8), row: 1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 37), previousKeys: previous)
        }
        try f.store.read { tx throws in
            #expect(try tx.lookup(KeyEncoding.encode("ada@example.com"), in: f.email) == nil)
            #expect(try tx.lookup(KeyEncoding.encode("ada@lovelace.org"), in: f.email) == 1)
            #expect(try tx.countEntries(in: f.age, range: .exact(KeyEncoding.encode(36))) == 0)
            #expect(try tx.countEntries(in: f.age, range: .exact(KeyEncoding.encode(37))) == 1)
        }
        try f.store.write { tx throws in
            #expect(try tx.delete(1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 37)))
            #expect(try tx.delete(1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 37)) == false)
        }
        try f.store.read { tx throws in
            #expect(try tx.countEntries(in: f.email) == 1)
            #expect(try tx.countEntries(in: f.age) == 1)
        }
        try expectClean(f.store)
    }

    @Test func wrongPreviousKeysAreRefusedAndChangeNothing() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        let before = try f.store.read { try EngineStoreDump($0) }
        try f.store.write { tx throws in
            let wrong: [[IndexKey]] = [
                [],                                                              // none (the plain put of a new row)
                [f.keys("ada@example.com", 36)[0]],                              // one missing
                f.keys("ada@example.com", 35),                                   // one different
                f.keys("ada@example.com", 36) + [IndexKey(f.age, KeyEncoding.encode(1))],  // one too many
            ]
            for previous in wrong {
                let error = expectStoreError(.indexKeyMismatch) {
                    try tx.put([1], row: 1, in: f.people, indexKeys: f.keys("x@example.com", 1), previousKeys: previous)
                }
                #expect(error?.message.contains("row 1") == true)
                expectStoreError(.indexKeyMismatch) { try tx.delete(1, in: f.people, indexKeys: previous) }
            }
            // A new row has no previous keys.
            expectStoreError(.indexKeyMismatch) {
                try tx.put([3], row: 3, in: f.people, indexKeys: [], previousKeys: f.keys("ada@example.com", 36))
            }
            #expect(try EngineStoreDump(tx) == before)
        }
        #expect(try f.store.read { try EngineStoreDump($0) } == before)
        try expectClean(f.store)
    }

    @Test func verifyChecksEveryRowAgainstTheKeysItsRecordShouldHave() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        let right: RecordIndexKeys = { collection, row, record in
            #expect(collection == f.people)
            switch String(decoding: record, as: UTF8.self) {
            case "Ada": return f.keys("ada@example.com", 36)
            case "Alan": return f.keys("alan@example.com", 41)
            default: return nil
            }
        }
        #expect(try f.store.verify(indexKeys: right).isClean)
        let wrong: RecordIndexKeys = { _, row, _ in row == 2 ? f.keys("alan@example.com", 40) : f.keys("ada@example.com", 36) }
        let report = try f.store.verify(indexKeys: wrong)
        #expect(!report.isClean)
        #expect(report.problems.allSatisfy { $0.message.contains("row 2") || $0.message.contains("index") }, "\(report)")
        struct Unreadable: Error {}
        let failing: RecordIndexKeys = { _, _, _ in throw Unreadable() }
        #expect(try f.store.verify(indexKeys: failing).problems.count == 2)
        // Nil: the caller cannot tell, so the row is not judged.
        #expect(try f.store.verify(indexKeys: { _, _, _ in nil }).isClean)
    }
}

extension PreviousKeysTests {
    /// A unique entry that a removal takes out is checked against the row when it is applied
    /// (`removeEntry` does not look it up): an entry that names another row (a damaged index)
    /// fails the transaction with `.corrupt` and nothing of it is saved; entries held back in
    /// the same transaction are checked at once.
    @Test func aUniqueEntryNamingAnotherRowFailsTheRemoval() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        // Damage: the email index says ada@example.com is row 2's.
        try f.store.write { tx throws in
            var two: [UInt8] = []
            Varint.append(2, to: &two)
            try KeyEncoding.encode("ada@example.com").withUnsafeBytes { key in
                try two.withUnsafeBytes { try tx.tree(.index(f.email.rawValue)).insert(key, $0) }
            }
        }
        for deleting in [true, false] {
            let error = expectStoreError(.corrupt) {
                try f.store.write { tx throws in
                    if deleting {
                        #expect(try tx.delete(1, in: f.people, indexKeys: f.keys("ada@example.com", 36)))
                    } else {
                        try tx.put(Array("Ada".utf8), row: 1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 36),
                                   previousKeys: f.keys("ada@example.com", 36))
                    }
                }
            }
            #expect(error?.message.contains("has no entry for row 1") == true)
            try f.store.read { tx throws in
                #expect(try tx.record(1, in: f.people) == Array("Ada".utf8))
                #expect(try tx.lookup(KeyEncoding.encode("ada@example.com"), in: f.email) == 2)
                #expect(try tx.lookup(KeyEncoding.encode("ada@lovelace.org"), in: f.email) == nil)
            }
        }
        // Held back in this transaction: checked against the transaction's own entries.
        try f.store.write { tx throws in
            try tx.put(Array("Grace".utf8), row: 3, in: f.people, indexKeys: f.keys("grace@example.com", 45))
            #expect(try tx.delete(3, in: f.people, indexKeys: f.keys("grace@example.com", 45)))
            try tx.put(Array("Grace".utf8), row: 3, in: f.people, indexKeys: f.keys("grace@example.com", 45))
        }
        try f.store.read { tx throws in
            #expect(try tx.lookup(KeyEncoding.encode("grace@example.com"), in: f.email) == 3)
            #expect(try tx.record(3, in: f.people) == Array("Grace".utf8))
        }
    }
}

extension PreviousKeysTests {
    /// `delete(_:in:indexKeysOf:)` reads the record where it removes the row: the keys it
    /// computes are checked like given ones, a missing row is false, and a wrong key or a
    /// throwing computation deletes nothing. Long records (in frames of their own, written in
    /// this transaction or before) are read as well as short ones.
    @Test func aDeletionComputesTheKeysFromTheRecordItRemoves() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        struct Refused: Error {}
        let long = [UInt8](repeating: 7, count: PageLayout.inlineValueLimit + 100)
        try f.store.write { tx throws in
            try tx.put(long, row: 3, in: f.people, indexKeys: f.keys("grace@example.com", 45))
        }
        try f.store.write { tx throws in
            try tx.put(long + [8], row: 4, in: f.people, indexKeys: f.keys("edsger@example.com", 72))
            var seen: [[UInt8]] = []
            #expect(try tx.delete(9, in: f.people) { _ in Issue.record("no row 9"); return [] } == false)
            // A wrong key, and a computation that throws: nothing is deleted.
            expectStoreError(.indexKeyMismatch) {
                try tx.delete(1, in: f.people) { _ in f.keys("ada@example.com", 37) }
            }
            #expect(throws: Refused.self) { try tx.delete(2, in: f.people) { _ in throw Refused() } }
            #expect(try tx.record(1, in: f.people) == Array("Ada".utf8))
            #expect(try tx.record(2, in: f.people) == Array("Alan".utf8))
            let byRecord: [[UInt8]: [IndexKey]] = [Array("Ada".utf8): f.keys("ada@example.com", 36), long: f.keys("grace@example.com", 45),
                                                   long + [8]: f.keys("edsger@example.com", 72)]
            for row in [1, 3, 4] as [RowID] {
                #expect(try tx.delete(row, in: f.people) { record in
                    seen.append(Array(record))
                    return byRecord[Array(record)] ?? []
                })
                #expect(try tx.record(row, in: f.people) == nil)
            }
            #expect(seen == [Array("Ada".utf8), long, long + [8]])
        }
        try f.store.read { tx throws in
            #expect(try tx.count(in: f.people) == 1)
            #expect(try tx.record(2, in: f.people) == Array("Alan".utf8))
            #expect(try tx.countEntries(in: f.email) == 1)
            #expect(try tx.countEntries(in: f.age) == 1)
            #expect(try tx.lookup(KeyEncoding.encode("alan@example.com"), in: f.email) == 2)
        }
        try expectClean(f.store)
    }
}

extension PreviousKeysTests {
    /// `putUnlessConflicting(_:row:in:indexKeys:previousKeysOf:)` reads the stored record where
    /// it replaces it: the keys it computes move the entries (checked like given ones); a row
    /// that is not stored is new (the computation is not asked); a conflict, a wrong key or a
    /// throwing computation changes nothing.
    @Test func aPutComputesThePreviousKeysFromTheRecordItReplaces() throws {
        let dir = try EngineTestDirectory()
        let f = try fixture(dir)
        struct Refused: Error {}
        let long = [UInt8](repeating: 5, count: PageLayout.inlineValueLimit + 10)
        try f.store.write { tx throws in
            try long.withUnsafeBytes { new in
                var seen: [[UInt8]] = []
                // Ada's row, read where it is replaced.
                #expect(try tx.putUnlessConflicting(new, row: 1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 37)) { old in
                    seen.append(Array(old))
                    return f.keys("ada@example.com", 36)
                } == nil)
                // Twice: the record read is the one this transaction wrote (a frame of its own).
                #expect(try tx.putUnlessConflicting(new, row: 1, in: f.people, indexKeys: f.keys("ada@lovelace.org", 37)) { old in
                    seen.append(Array(old))
                    return f.keys("ada@lovelace.org", 37)
                } == nil)
                #expect(seen == [Array("Ada".utf8), long])
                // A new row: nothing to read.
                #expect(try tx.putUnlessConflicting(new, row: 5, in: f.people, indexKeys: f.keys("grace@example.com", 45)) { _ in
                    Issue.record("row 5 is not stored")
                    return []
                } == nil)
                // Alan's row taking Ada's address: the conflict, and nothing changed.
                let conflict = try tx.putUnlessConflicting(new, row: 2, in: f.people, indexKeys: f.keys("ada@lovelace.org", 41)) { _ in
                    f.keys("alan@example.com", 41)
                }
                #expect(conflict?.existingRow == 1)
                expectStoreError(.indexKeyMismatch) {
                    try tx.putUnlessConflicting(new, row: 2, in: f.people, indexKeys: f.keys("alan@turing.org", 41)) { _ in f.keys("alan@example.com", 40) }
                }
                #expect(throws: Refused.self) {
                    try tx.putUnlessConflicting(new, row: 2, in: f.people, indexKeys: f.keys("alan@turing.org", 41)) { _ in throw Refused() }
                }
            }
        }
        try f.store.read { tx throws in
            #expect(try tx.record(1, in: f.people) == long)
            #expect(try tx.record(2, in: f.people) == Array("Alan".utf8))
            #expect(try tx.record(5, in: f.people) == long)
            #expect(try tx.lookup(KeyEncoding.encode("ada@lovelace.org"), in: f.email) == 1)
            #expect(try tx.lookup(KeyEncoding.encode("ada@example.com"), in: f.email) == nil)
            #expect(try tx.lookup(KeyEncoding.encode("alan@example.com"), in: f.email) == 2)
            #expect(try tx.countEntries(in: f.age, range: .exact(KeyEncoding.encode(37))) == 1)
            #expect(try tx.countEntries(in: f.age, range: .exact(KeyEncoding.encode(36))) == 0)
        }
        try expectClean(f.store)
    }
}
