// Index keys of any length (Docs/FileFormat.md, "Long index keys"): a key longer than 2016
// bytes is held in its long form (prefix, FF, 16 bytes of SHA-256), pinned here byte for byte;
// forms keep the keys' order up to their first 2016 bytes; and indexes full of 2033-byte forms
// (unique and not, with and without a shared prefix) stay shallow, answer lookups and ranges,
// verify clean and survive compaction.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct LongKeyEngineTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func sha256KnownAnswers() {
        let cases: [([UInt8], String)] = [
            ([], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            (Array("abc".utf8), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (Array("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8),
             "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
            // The padding's edges: 55 bytes fit one block with the length, 56 need two; 64 is one whole block.
            ([UInt8](repeating: 0x61, count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            ([UInt8](repeating: 0x61, count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            ([UInt8](repeating: 0x61, count: 64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            ((0..<1024).map { UInt8(truncatingIfNeeded: $0) }, "785b0751fc2c53dc14a4ce3d800e69ef9ce1009eb327ccf458afe09c242c26c9"),
        ]
        for (input, expected) in cases { #expect(Self.hex(SHA256.digest(input)) == expected, "\(input.count) bytes") }
    }

    /// The long form, byte by byte: `"a" × 3000` encodes to 3002 bytes (`30`, 3000 × `61`, `00`);
    /// its form is those bytes up to 2016 (`30` and 2015 × `61`), `FF`, and the first 16 bytes of
    /// the SHA-256 of all 3002. A key of 2016 bytes is its own form.
    @Test func longFormGoldenBytes() {
        let key = KeyEncoding.encode(String(repeating: "a", count: 3000))
        #expect(key.count == 3002)
        let form = KeyEncoding.storedForm(key)
        #expect(form.count == 2033 && form.count == KeyEncoding.longFormLength)
        #expect(form[0] == 0x30 && form[1..<2016].allSatisfy { $0 == 0x61 })
        #expect(form[2016] == 0xFF)
        #expect(Self.hex(Array(form[2017...])) == "feead8bc69815cb27625c076949023dd")
        #expect(KeyEncoding.isLongForm(form) && !KeyEncoding.isLongForm(Array(key.prefix(2016))))

        let exact = KeyEncoding.encode(String(repeating: "b", count: 2014))
        #expect(exact.count == 2016 && KeyEncoding.storedForm(exact) == exact)
        var same = exact
        KeyEncoding.makeStoredForm(&same)
        #expect(same == exact)
        var long = key
        KeyEncoding.makeStoredForm(&long)
        #expect(long == form)
        // The engine takes every form (and refuses longer raw keys).
        #expect(form.count <= PageLayout.maximumIndexKeyLength)
    }

    /// Forms compare as their keys do unless both are long and share their first 2016 bytes;
    /// with a row suffix appended (a non-unique index's entry) as well.
    @Test func formsKeepTheOrderOfTheirKeys() {
        var random = SeededGenerator(seed: 27)
        let stem = String(repeating: "s", count: 2000)
        var keys: [[UInt8]] = []
        for _ in 0..<60 {
            let length = [5, 1990, 2010, 2014, 2015, 2016, 2020, 2500, 4000][Int.random(in: 0..<9, using: &random)]
            let alphabet = Array("ab\u{0}c".unicodeScalars)
            let tail = String(String.UnicodeScalarView((0..<Swift.max(0, length - stem.count)).map { _ in alphabet[Int.random(in: 0..<4, using: &random)] }))
            keys.append(KeyEncoding.encode(Bool.random(using: &random) ? stem + tail : tail + stem))
        }
        // The exact prefix of a long key, as a key of its own: it sorts before the long one.
        keys.append(Array(keys.first { $0.count > 2016 }!.prefix(2016)))
        func sign(_ a: [UInt8], _ b: [UInt8]) -> Int { a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1) }
        let forms = keys.map(KeyEncoding.storedForm)
        var compared = 0
        for (a, fa) in zip(keys, forms) {
            for (b, fb) in zip(keys, forms) {
                let tie = a.count > 2016 && b.count > 2016 && a.prefix(2016) == b.prefix(2016)
                if a == b { #expect(fa == fb); continue }
                #expect(fa != fb)
                guard !tie else { continue }
                compared += 1
                #expect(sign(fa, fb) == sign(a, b))
                #expect(sign(TreeKey.entry(fa, row: 7), TreeKey.entry(fb, row: 300)) == sign(a, b))
            }
        }
        #expect(compared > 500)
    }

    /// Long forms in unique and non-unique indexes, 200 of them, with distinct prefixes
    /// and with one 2016-byte prefix for all: each found again, ranges and prefixes answer,
    /// the trees stay shallow, and verify is clean before and after deletions and compaction.
    @Test(arguments: [false, true])
    func indexesOfLongForms(sharedPrefix: Bool) throws {
        let dir = try EngineTestDirectory()
        let store = try Store(path: dir.path(), options: StoreOptions(durability: .deferred))
        var random = SeededGenerator(seed: sharedPrefix ? 1 : 2)
        let stem = String(repeating: "x", count: 2100)
        var values: [String] = []
        for i in 0..<200 {
            let tail = String((0..<24).map { _ in "abcdefgh".randomElement(using: &random)! })
            values.append(sharedPrefix ? stem + tail + "\(i)" : tail + "\(i)" + stem)
        }
        let forms = values.map { KeyEncoding.storedForm(KeyEncoding.encode($0)) }
        var ids: (c: CollectionID, u: IndexID, n: IndexID)!
        try store.write { tx throws in
            let c = try tx.createCollection(named: "pages")
            ids = (c, try tx.createIndex(named: "url", on: c, unique: true), try tx.createIndex(named: "byURL", on: c, unique: false))
            for (i, form) in forms.enumerated() {
                try tx.put([UInt8(i & 0xFF)], row: RowID(i + 1), in: c, indexKeys: [IndexKey(ids.u, form), IndexKey(ids.n, form)])
            }
            // A second row with the same long key: refused by the unique index, taken by the other.
            let again = expectStoreError(.uniqueConstraintViolation) {
                try tx.put([0], row: 1000, in: c, indexKeys: [IndexKey(ids.u, forms[3])])
            }
            #expect(again?.conflict?.existingRow == 4)
            try tx.put([0], row: 1000, in: c, indexKeys: [IndexKey(ids.n, forms[3])])
        }
        try store.read { tx throws in
            for (i, form) in forms.enumerated() {
                #expect(try tx.lookup(form, in: ids.u) == RowID(i + 1))
                var rows: [RowID] = []
                var cursor = try tx.entries(in: ids.n, range: .exact(form))
                while let entry = try cursor.next() { rows.append(entry.row) }
                #expect(rows == (i == 3 ? [4, 1000] : [RowID(i + 1)]))
            }
            // Index order is form order; a prefix of the values finds them all.
            var walked: [[UInt8]] = []
            var cursor = try tx.entries(in: ids.u)
            while let entry = try cursor.next() { walked.append(entry.key) }
            #expect(walked == forms.sorted { $0.lexicographicallyPrecedes($1) })
            let prefix = KeyEncoding.storedPrefix(KeyEncoding.encode(sharedPrefix ? stem : String(values[0].prefix(26)), asPrefix: true))
            #expect(try tx.countEntries(in: ids.u, range: KeyRange(prefix: prefix)) == (sharedPrefix ? 200 : 1))
            // A long bound's stored range holds every key it should (and, sharing its prefix, more).
            let bound = KeyEncoding.encode(values[10])
            let range = KeyEncoding.storedRange(KeyRange(lower: bound, lowerInclusive: true, upper: bound, upperInclusive: true))
            var inRange: [RowID] = []
            cursor = try tx.entries(in: ids.u, range: range)
            while let entry = try cursor.next() { inRange.append(entry.row) }
            #expect(inRange.contains(11))
        }
        #expect(try store.verify().isClean)
        try store.write { tx throws in
            for i in stride(from: 0, to: forms.count, by: 2) {
                #expect(try tx.delete(RowID(i + 1), in: ids.c, indexKeys: [IndexKey(ids.u, forms[i]), IndexKey(ids.n, forms[i])]))
            }
        }
        #expect(try store.verify().isClean)
        try store.compact()
        #expect(try store.verify().isClean)
        try store.read { tx throws in
            for (i, form) in forms.enumerated() { #expect(try tx.lookup(form, in: ids.u) == (i % 2 == 0 ? nil : RowID(i + 1))) }
            #expect(try tx.countEntries(in: ids.n) == 101)
        }
        // Refilled after compaction (whose pages are packed and full): inserts split them again.
        try store.write { tx throws in
            for i in stride(from: 0, to: forms.count, by: 2) {
                try tx.put([1], row: RowID(i + 1), in: ids.c, indexKeys: [IndexKey(ids.u, forms[i]), IndexKey(ids.n, forms[i])])
            }
        }
        #expect(try store.verify().isClean)
        try store.read { tx throws in #expect(try tx.countEntries(in: ids.u) == 200) }
    }
}
