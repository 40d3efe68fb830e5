// Golden bytes: every structure of Docs/FileFormat.md encoded from fixed inputs and compared
// with the exact bytes the document gives (written out here as hex), then decoded back.
// A failure means the code and the document disagree: fix one of them, never just the hex.

import Foundation
import Testing
@testable import StrataEngine

/// Bytes from a hex string such as "53 54 0A"; spaces and newlines are ignored.
private func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    var bytes: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        bytes.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return bytes
}

/// The bytes as hex, 16 to a line: what a failed comparison prints.
private func dump(_ bytes: [UInt8]) -> String {
    stride(from: 0, to: bytes.count, by: 16).map { start in
        bytes[start..<min(start + 16, bytes.count)].map { String(format: "%02X", $0) }.joined(separator: " ")
    }.joined(separator: "\n")
}

/// Compares bytes as hex dumps, so that a mismatch shows where.
private func expectBytes(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(dump(actual) == dump(expected), sourceLocation: sourceLocation)
}

private let salt: UInt64 = 0x0123_4567_89AB_CDEF
private let time: UInt64 = 1_700_000_000_000

/// A page's bytes checked and read in place, as a reader reads them.
private func withPage<R>(_ bytes: [UInt8], at offset: UInt64 = 1 << 20, _ body: (PageView) throws -> R) rethrows -> R? {
    try bytes.withUnsafeBytes { raw in
        guard PageLayout.check(raw.baseAddress!, length: raw.count, offset: offset) else { return nil }
        return try body(PageView(raw.baseAddress!))
    }
}

@Suite struct GoldenBytesTests {

    // MARK: FileFormat.md, "File header"

    static let headerBytes = hex("""
        53 54 52 41 54 41 44 42 02 00 00 00 40 00 00 00
        EF CD AB 89 67 45 23 01 00 68 E5 CF 8B 01 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 55 A6 D5 F0
        """)

    @Test("File header: golden bytes")
    func fileHeader() throws {
        let header = FileHeader(salt: salt, createdMilliseconds: time)
        expectBytes(header.encode(), Self.headerBytes)
        #expect(try FileHeader.decode(Self.headerBytes).get() == header)
    }

    @Test("File header: the checks, in order")
    func fileHeaderChecks() {
        func failure(_ bytes: [UInt8]) -> FileHeader.DecodeFailure? {
            if case .failure(let box) = FileHeader.decode(bytes) { return box.failure }
            return nil
        }
        func resealed(_ bytes: [UInt8], version: UInt32) -> [UInt8] {
            var b = bytes
            b.storeLE(version, at: 8)
            b.storeLE(version >= 2 ? b.withUnsafeBytes { Checksum.short(UnsafeRawBufferPointer(rebasing: $0[0..<60])) } : CRC32C.checksum(b[0..<60]), at: 60)
            return b
        }
        var notAStore = Self.headerBytes
        notAStore[0] = UInt8(ascii: "X")
        guard case .notAStore? = failure(notAStore) else { Issue.record("bad magic"); return }
        guard case .notAStore? = failure(Array(Self.headerBytes[0..<63])) else { Issue.record("short header"); return }

        var damaged = Self.headerBytes
        damaged[40] = 1   // reserved bytes are covered by the checksum
        guard case .damaged? = failure(damaged) else { Issue.record("bad checksum"); return }
        guard case .newerVersion(3)? = failure(resealed(Self.headerBytes, version: 3)) else { Issue.record("version 3"); return }
        // Format 1 kept a CRC-32C at 60: recognised as an older store (to convert), not as damage.
        guard case .olderVersion(1)? = failure(resealed(Self.headerBytes, version: 1)) else { Issue.record("version 1"); return }

        var badSize = Self.headerBytes
        badSize[12] = 0x80
        guard case .damaged? = failure(resealed(badSize, version: 2)) else { Issue.record("header size"); return }
    }

    // MARK: FileFormat.md, "Commit record"

    static func smallCatalog() -> Catalog {
        var catalog = Catalog()
        catalog.nextCollectionID = 2
        catalog.nextIndexID = 2
        catalog.collections = [CollectionInfo(id: 1, name: "users", count: 3, nextRowID: 4, liveBytes: 180, root: 0x300)]
        catalog.indexes = [IndexInfoRecord(id: 1, collection: 1, name: "email", unique: true, root: 0x280, entries: 3, liveBytes: 90)]
        return catalog
    }

    static let commitBytes = hex("""
        53 54 52 43 4F 4D 4D 54 56 7E E2 3A A8 D2 26 13
        D7 00 00 00 01 00 00 00 05 00 00 00 00 00 00 00
        00 04 00 00 00 00 00 00 00 01 00 00 00 00 00 00
        80 01 00 00 00 00 00 00 88 77 66 55 44 33 22 11
        00 68 E5 CF 8B 01 00 00 EF CD AB 89 67 45 23 01
        02 00 00 00 02 00 00 00 01 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        01 00 00 00 01 00 00 00 01 00 00 00 03 00 00 00
        00 00 00 00 04 00 00 00 00 00 00 00 00 03 00 00
        00 00 00 00 B4 00 00 00 00 00 00 00 05 00 75 73
        65 72 73 01 00 00 00 01 00 00 00 01 80 02 00 00
        00 00 00 00 03 00 00 00 00 00 00 00 5A 00 00 00
        00 00 00 00 05 00 65 6D 61 69 6C D7 00 00 00 53
        54 52 43 4D 45 4E 44
        """)

    static func smallCommit() -> CommitRecord {
        CommitRecord(sequence: 5, offset: 0x400, previousOffset: 0x100, bodyStart: 0x180, bodyChecksum: 0x1122_3344_5566_7788,
                     flags: CommitRecord.flagBodySynced, timeMilliseconds: time, salt: salt, catalog: smallCatalog())
    }

    @Test("Commit record: golden bytes, with a small catalog")
    func commitRecord() throws {
        let record = Self.smallCommit()
        expectBytes(record.encode(), Self.commitBytes)
        #expect(record.encodedLength == 215)
        #expect(record.end == 0x400 + 215)
        #expect(CommitRecord.decode(Self.commitBytes, at: 0x400, salt: salt) == record)
    }

    @Test("Commit record: its length is the encoded length, for any catalog")
    func commitRecordLength() {
        var record = Self.smallCommit()
        #expect(record.encodedLength == record.encode().count)
        for (i, name) in ["", "a", "é", "😀 long name with spaces", String(repeating: "x", count: 300)].enumerated() {
            record.catalog.collections.append(CollectionInfo(id: UInt32(10 + i), name: name, count: 1, nextRowID: 2, liveBytes: 3, root: 0))
            #expect(record.encodedLength == record.encode().count, "after collection \(i)")
            record.catalog.indexes.append(IndexInfoRecord(id: UInt32(20 + i), collection: 10, name: name + "_ix", unique: i % 2 == 0, root: 0,
                                                          entries: 4, liveBytes: 5))
            #expect(record.encodedLength == record.encode().count, "after index \(i)")
            #expect(record.end == record.offset + UInt64(record.encode().count))
        }
        #expect(CommitRecord.decode(record.encode(), at: record.offset, salt: salt) == record)
    }

    @Test("Commit record: the validity checks")
    func commitRecordChecks() {
        let good = Self.commitBytes
        #expect(CommitRecord.decode(good, at: 0x401, salt: salt) == nil, "another offset")
        #expect(CommitRecord.decode(good, at: 0x400, salt: salt ^ 1) == nil, "another file's salt")
        for i in [0, 8, 16, 30, 100, 200, good.count - 1] {
            var damaged = good
            damaged[i] ^= 0x10
            #expect(CommitRecord.decode(damaged, at: 0x400, salt: salt) == nil, "byte \(i) flipped")
        }
        // A root at or after the record itself, with a valid checksum: still refused.
        var record = Self.smallCommit()
        record.catalog.collections[0].root = 0x400
        #expect(CommitRecord.decode(record.encode(), at: 0x400, salt: salt) == nil, "a root after the record")
        record.catalog.collections[0].root = 8
        #expect(CommitRecord.decode(record.encode(), at: 0x400, salt: salt) == nil, "a root inside the header")
    }

    @Test("Commit record: commit record 0 of a new store")
    func initialCommit() {
        let initial = CommitRecord(sequence: 0, offset: 64, previousOffset: 0, bodyStart: 64, bodyChecksum: StreamingChecksum().value,
                                   flags: CommitRecord.flagBodySynced, timeMilliseconds: time, salt: salt, catalog: Catalog())
        expectBytes(initial.encode(), hex("""
            53 54 52 43 4F 4D 4D 54 C5 EA E8 41 D1 F7 2D 52
            84 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00
            40 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            40 00 00 00 00 00 00 00 99 E9 D8 51 37 DB 46 EF
            00 68 E5 CF 8B 01 00 00 EF CD AB 89 67 45 23 01
            01 00 00 00 01 00 00 00 01 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
            00 00 00 00 00 00 00 00 84 00 00 00 53 54 52 43
            4D 45 4E 44
            """))
        #expect(Store.newStoreSize == 64 + 132)
    }

    // MARK: FileFormat.md, "Page"

    /// A slotted leaf (kind 1): what a node that keeps its page's prefix writes, and every
    /// leaf before packed leaves.
    static let leafBytes = hex("""
        B5 B5 6A 5A 23 00 01 07 02 00 00 00 00 00 00 00
        00 15 00 1B 00 01 0C 01 41 64 61 01 14 02 47 72
        61 63 65
        """)

    /// The same cells as a packed leaf (kind 3, shape 1: every suffix 1 byte).
    static let packedLeafBytes = hex("""
        D5 D5 44 9D 22 00 03 07 02 00 00 00 00 00 00 00
        00 01 01 00 18 00 1C 00 01 41 64 61 02 47 72 61
        63 65
        """)

    @Test("Page: packed leaf, golden bytes")
    func packedLeafPage() throws {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        for (row, value) in [(RowID(1), "Ada"), (RowID(2), "Grace")] {
            withUnsafeBytes(of: row.bigEndian) { k in Array(value.utf8).withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: 0) } }
        }
        var page: [UInt8] = []
        leaf.encode(into: &page)
        expectBytes(page, Self.packedLeafBytes)
        try expectAdaAndGrace(Self.packedLeafBytes)
    }

    /// A write transaction encodes page after page into one scratch array: each page must come
    /// out as its bytes alone, whether the array held a longer page before or a shorter one.
    @Test("Page: encoded into a reused array, the page's bytes and no more")
    func pageEncodedIntoAReusedArray() {
        func leaf(_ cells: Int, valueLength: Int) -> Node {
            let node = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
            for row in 1...RowID(cells) {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: row), count: valueLength)
                withUnsafeBytes(of: row.bigEndian) { k in value.withUnsafeBytes { node.appendLeafCell(key: k, value: $0, flags: 0) } }
            }
            return node
        }
        let nodes = [leaf(40, valueLength: 60), leaf(2, valueLength: 3), leaf(30, valueLength: 100), leaf(30, valueLength: 100), leaf(1, valueLength: 0)]
        var scratch: [UInt8] = []
        for node in nodes {
            var fresh: [UInt8] = []
            node.encode(into: &fresh)
            node.encode(into: &scratch)
            expectBytes(scratch, fresh)
        }
    }

    /// Packed leaves of each shape: keys, values and flags read back, a copy encodes the same.
    @Test("Page: packed leaf shapes", arguments: [
        // shape 2: every value 0 bytes (a non-unique index), suffixes of two lengths
        ([(hex("28 41 D6 01 02 03 01 07 01"), hex(""), UInt8(0)), (hex("28 41 D6 01 02 04 02 01 00 02"), hex(""), 0)], PageLayout.packedShapeFixedValue),
        // shape 0: suffixes and values of different lengths, flags in the slots
        ([(hex("04 61"), hex("01 02 03"), UInt8(2)), (hex("04 62 63"), hex("09"), 1), (hex("04 64"), hex(""), 3)], PageLayout.packedShapeVarint),
        // shape 1: one suffix length
        ([(hex("40 00 11"), hex("AC 02"), UInt8(0)), (hex("40 00 12"), hex("07"), 0)], PageLayout.packedShapeFixedSuffix),
    ])
    func packedLeafShapes(cells: [([UInt8], [UInt8], UInt8)], shape: UInt8) throws {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        for (key, value, flags) in cells {
            key.withUnsafeBytes { k in value.withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: flags) } }
        }
        var page: [UInt8] = []
        leaf.encode(into: &page)
        let read = withPage(page) { view in
            (view.isPacked, view.shape, (0..<view.count).map { i in (view.key(i), Array(view.leafCell(i).value), view.leafCell(i).flags) })
        }
        let (packed, actualShape, actual) = try #require(read)
        #expect(packed && actualShape == shape)
        #expect(actual.map(\.0) == cells.map(\.0) && actual.map(\.1) == cells.map(\.1) && actual.map(\.2) == cells.map(\.2))
        // A node copied from it (each key whole again) encodes to the same page.
        var again: [UInt8] = []
        try #require(withPage(page) { Node(copying: $0, budget: DirtyBudget(limit: .max)) } ?? nil).encode(into: &again)
        expectBytes(again, page)
        // A slot that does not follow its neighbour's cell, or a shape past 2, is refused.
        var broken = page
        let p = Int(page[7])
        broken[10 + p] = 3
        PageLayout.seal(&broken)
        #expect(withPage(broken) { _ in true } == nil)
        broken = page
        broken[10 + p + 3] &+= 1
        PageLayout.seal(&broken)
        #expect(withPage(broken) { _ in true } == nil)
    }

    @Test("Page: leaf, golden bytes")
    func leafPage() throws {
        try expectAdaAndGrace(Self.leafBytes)
    }

    private func expectAdaAndGrace(_ bytes: [UInt8]) throws {
        let read = withPage(bytes) { view in
            (view.isLeaf, view.count, view.prefixLength, (0..<view.count).map { view.key($0) }, (0..<view.count).map { Array(view.leafCell($0).value) })
        }
        let (isLeaf, count, prefix, keys, values) = try #require(read)
        #expect(isLeaf && count == 2 && prefix == 7)
        #expect(keys == [hex("00 00 00 00 00 00 00 01"), hex("00 00 00 00 00 00 00 02")])
        #expect(values == [Array("Ada".utf8), Array("Grace".utf8)])
        let found = withPage(bytes) { view in
            [hex("00 00 00 00 00 00 00 02"), hex("00 00 00 00 00 00 00 00"), hex("00 00 00 00 00 00 01 00"), hex("00")].map { k in k.withUnsafeBytes { view.search($0) } }
        }
        #expect(found?.map(\.index) == [1, 0, 2, 0])
        #expect(found?.map(\.found) == [true, false, false, false])
    }

    static let branchBytes = hex("""
        5F E7 77 33 34 00 02 07 03 00 00 00 00 00 00 00
        01 17 00 20 00 2A 00 00 00 01 00 00 00 00 00 00
        01 05 00 02 00 00 00 00 00 00 01 F0 00 03 00 00
        00 00 00 00
        """)

    @Test("Page: branch, golden bytes")
    func branchPage() throws {
        let branch = Node(isLeaf: false, budget: DirtyBudget(limit: .max))
        branch.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: 0x100)
        withUnsafeBytes(of: RowID(0x105).bigEndian) { branch.insertBranchCell(at: 1, key: $0, child: 0x200) }
        withUnsafeBytes(of: RowID(0x1F0).bigEndian) { branch.insertBranchCell(at: 2, key: $0, child: 0x300) }
        var page: [UInt8] = []
        branch.encode(into: &page)
        expectBytes(page, Self.branchBytes)
        let children = withPage(Self.branchBytes, at: 0x400) { view in
            [RowID(0), 0x104, 0x105, 0x1EF, 0x1F0, .max].map { row in withUnsafeBytes(of: row.bigEndian) { view.child(view.childIndex(for: $0)) } }
        }
        #expect(children == [0x100, 0x100, 0x200, 0x200, 0x300, 0x300])
        #expect(withPage(Self.branchBytes, at: 0x300) { _ in true } == nil, "a child at or after its parent is refused")
        var misaligned = Self.branchBytes
        misaligned[0x2C] = 0x01   // child 2 at 0x301: not a multiple of 16
        PageLayout.seal(&misaligned)
        #expect(withPage(misaligned, at: 0x400) { _ in true } == nil, "a child that does not start at a multiple of 16 is refused")
    }

    @Test("Page: a reader refuses every malformed page")
    func pageChecks() {
        func refused(_ bytes: [UInt8], _ what: String) {
            #expect(withPage(bytes) { _ in true } == nil, "\(what)")
        }
        func resealed(_ bytes: [UInt8]) -> [UInt8] { var b = bytes; PageLayout.seal(&b); return b }
        var flipped = Self.leafBytes
        flipped[26] ^= 1
        refused(flipped, "a flipped byte")
        var kind = Self.leafBytes
        kind[6] = 3
        refused(resealed(kind), "kind 3")
        var count = Self.leafBytes
        count[8] = 9
        refused(resealed(count), "more cells than fit")
        var slot = Self.leafBytes
        slot[17] = 0x40
        refused(resealed(slot), "a slot past the end")
        var value = Self.leafBytes
        value[22] = 0x7C
        refused(resealed(value), "a value past the end")
        var zero = Self.leafBytes
        zero[8] = 0; zero[9] = 0
        refused(resealed(zero), "no cells")
        refused(Array(Self.leafBytes[0..<15]), "shorter than 16 bytes")
    }

    // MARK: FileFormat.md, "Value frame", "Trees"

    @Test("Value frame: golden bytes")
    func valueFrame() {
        let frame = Array("hello".utf8).withUnsafeBytes { ValueFrame.encode($0) }
        expectBytes(frame, hex("98 46 B3 E9 0D 00 00 00 68 65 6C 6C 6F"))
        #expect(frame.withUnsafeBytes { ValueFrame.check($0) })
        var damaged = frame
        damaged[9] ^= 1
        #expect(!damaged.withUnsafeBytes { ValueFrame.check($0) })
        var location: [UInt8] = []
        ValueLocation(offset: 0x01_2345_6789, length: 42).encode(into: &location)
        expectBytes(location, hex("89 67 45 23 01 00 00 00 2A 00 00 00"))
    }

    @Test("Trees: keys and values of every kind")
    func treeKeys() {
        expectBytes(TreeKey.withRow(7) { Array($0) }, hex("00 00 00 00 00 00 00 07"))
        // A non-unique entry: the index key, then [n][row in n bytes, big-endian][n].
        expectBytes(TreeKey.entry(KeyEncoding.encode(42), row: 7), hex("10 80 00 00 00 00 00 00 2A 01 07 01"))
        expectBytes(TreeKey.entry([0xAB], row: 0), hex("AB 01 00 01"))
        expectBytes(TreeKey.entry([0xAB], row: 0x1_2345), hex("AB 03 01 23 45 03"))
        expectBytes(TreeKey.entry([], row: .max), hex("08 FF FF FF FF FF FF FF FF 08"))
        for (row, key) in [(RowID(0), [UInt8]()), (255, [1]), (256, [1, 2]), (0x1_2345, [9, 9, 9]), (.max, [])] {
            let entry = TreeKey.entry(key, row: row)
            #expect(entry.withUnsafeBytes { TreeKey.splitEntry($0) }.map { [$0.keyLength, Int(truncatingIfNeeded: $0.row)] } == [key.count, Int(truncatingIfNeeded: row)])
        }
        #expect(hex("AB 02 00 07 02").withUnsafeBytes { TreeKey.splitEntry($0) } == nil, "not the shortest form")
        #expect(hex("AB 02 07 02").withUnsafeBytes { TreeKey.splitEntry($0) } == nil, "n does not match")
        #expect(TreeKey.entry([5], row: 255).lexicographicallyPrecedes(TreeKey.entry([5], row: 256)), "byte order is row order")
        expectBytes(TreeKey.blob(16), hex("03 00 00 00 00 00 00 00 10"))
        expectBytes(TreeKey.metadata("schema"), hex("04 73 63 68 65 6D 61"))
        var row: [UInt8] = []
        Varint.append(300, to: &row)
        expectBytes(row, hex("AC 02"))
        // A row's value: the digest of its keys (flag 2) before the record.
        let digest = KeysDigest.of([IndexKey(IndexID(rawValue: 1), KeyEncoding.encode("ada"))])
        #expect(digest == 0xCCE1_A721)
        #expect(KeysDigest.of([]) == 0)
        let keys = [IndexKey(IndexID(rawValue: 1), [1]), IndexKey(IndexID(rawValue: 2), [2])]
        #expect(KeysDigest.of(keys) == KeysDigest.of(keys.reversed()), "order does not matter")
        #expect(KeysDigest.of(keys) == KeysDigest.of([keys[0]]) ^ KeysDigest.of([keys[1]]), "one key's share can be taken out")
        let value = hex("21 A7 E1 CC 41 64 61")
        let decoded = value.withUnsafeBytes { RowValue.decode($0, flags: ValueFlags.keysDigest) }
        #expect(decoded?.digest == digest)
        #expect(decoded?.inline.map(Array.init) == Array("Ada".utf8))
        // A blob's entry in the system tree: its length and the XXH64 of its file's bytes.
        var blob: [UInt8] = []
        blob.appendLE(UInt64(5))
        blob.appendLE(Checksum.hash(Array("hello".utf8)))
        expectBytes(blob, hex("05 00 00 00 00 00 00 00 A3 6D 9F 88 7D 82 C7 26"))
        let framed = hex("89 67 45 23 01 00 00 00 2A 00 00 00").withUnsafeBytes { RowValue.decode($0, flags: ValueFlags.inFrame) }
        #expect(framed?.frame == ValueLocation(offset: 0x01_2345_6789, length: 42))
        #expect(hex("89 67").withUnsafeBytes { RowValue.decode($0, flags: ValueFlags.inFrame) } == nil)
    }

    // MARK: FileFormat.md, "Lock file"

    @Test("Lock file: the published commit")
    func publishedCommit() {
        let published = PublishedCommit(salt: salt, sequence: 5, offset: 0x400, end: 0x4A0)
        let bytes = hex("""
            EF CD AB 89 67 45 23 01 05 00 00 00 00 00 00 00
            00 04 00 00 00 00 00 00 A0 04 00 00 00 00 00 00
            9F AC C7 E6 1B 99 7F ED
            """)
        expectBytes(published.encode(), bytes)
        #expect(PublishedCommit.decode(bytes) == published)
        var torn = bytes
        torn[12] = 9
        #expect(PublishedCommit.decode(torn) == nil, "a half-written record is not read")
        #expect(LockFile.publishedOffset == 8)
        #expect(LockFile.readersStart == 1 << 32)
    }

    // MARK: FileFormat.md, "Key encoding"

    struct KeyCase: Sendable, CustomStringConvertible {
        let description: String
        let encoded: [UInt8]
        let expected: String
        let decoded: [KeyComponent]
    }

    static let keyCases: [KeyCase] = [
        KeyCase(description: "nil", encoded: KeyEncoding.encode(Int?.none), expected: "00", decoded: [.null]),
        KeyCase(description: "false", encoded: KeyEncoding.encode(false), expected: "01", decoded: [.bool(false)]),
        KeyCase(description: "true", encoded: KeyEncoding.encode(true), expected: "02", decoded: [.bool(true)]),
        KeyCase(description: "Int64(0)", encoded: KeyEncoding.encode(Int64(0)), expected: "10 80 00 00 00 00 00 00 00", decoded: [.integer(0)]),
        KeyCase(description: "Int(-1)", encoded: KeyEncoding.encode(-1), expected: "10 7F FF FF FF FF FF FF FF", decoded: [.integer(-1)]),
        KeyCase(description: "Int64.min", encoded: KeyEncoding.encode(Int64.min), expected: "10 00 00 00 00 00 00 00 00", decoded: [.integer(.min)]),
        KeyCase(description: "Int64.max", encoded: KeyEncoding.encode(Int64.max), expected: "10 FF FF FF FF FF FF FF FF", decoded: [.integer(.max)]),
        KeyCase(description: "UInt8(5)", encoded: KeyEncoding.encode(UInt8(5)), expected: "10 80 00 00 00 00 00 00 05", decoded: [.integer(5)]),
        KeyCase(description: "UInt64(5)", encoded: KeyEncoding.encode(UInt64(5)), expected: "10 80 00 00 00 00 00 00 05", decoded: [.integer(5)]),
        KeyCase(description: "UInt64(1 << 63)", encoded: KeyEncoding.encode(UInt64(1) << 63), expected: "11 80 00 00 00 00 00 00 00", decoded: [.unsigned(1 << 63)]),
        KeyCase(description: "UInt64.max", encoded: KeyEncoding.encode(UInt64.max), expected: "11 FF FF FF FF FF FF FF FF", decoded: [.unsigned(.max)]),
        KeyCase(description: "1.0", encoded: KeyEncoding.encode(1.0), expected: "20 BF F0 00 00 00 00 00 00", decoded: [.double(1)]),
        KeyCase(description: "-1.0", encoded: KeyEncoding.encode(-1.0), expected: "20 40 0F FF FF FF FF FF FF", decoded: [.double(-1)]),
        KeyCase(description: "0.0", encoded: KeyEncoding.encode(0.0), expected: "20 80 00 00 00 00 00 00 00", decoded: [.double(0)]),
        KeyCase(description: "-0.0", encoded: KeyEncoding.encode(-0.0), expected: "20 80 00 00 00 00 00 00 00", decoded: [.double(0)]),
        KeyCase(description: "+infinity", encoded: KeyEncoding.encode(Double.infinity), expected: "20 FF F0 00 00 00 00 00 00", decoded: [.double(.infinity)]),
        KeyCase(description: "-infinity", encoded: KeyEncoding.encode(-Double.infinity), expected: "20 00 0F FF FF FF FF FF FF", decoded: [.double(-.infinity)]),
        KeyCase(description: "Float(1.5)", encoded: KeyEncoding.encode(Float(1.5)), expected: "20 BF F8 00 00 00 00 00 00", decoded: [.double(1.5)]),
        KeyCase(description: "Date(reference + 0)", encoded: KeyEncoding.encode(Date(timeIntervalSinceReferenceDate: 0)),
                expected: "28 80 00 00 00 00 00 00 00", decoded: [.date(Date(timeIntervalSinceReferenceDate: 0))]),
        KeyCase(description: "Date(reference - 1)", encoded: KeyEncoding.encode(Date(timeIntervalSinceReferenceDate: -1)),
                expected: "28 40 0F FF FF FF FF FF FF", decoded: [.date(Date(timeIntervalSinceReferenceDate: -1))]),
        KeyCase(description: "\"\"", encoded: KeyEncoding.encode(""), expected: "30 00", decoded: [.string("")]),
        KeyCase(description: "\"ab\"", encoded: KeyEncoding.encode("ab"), expected: "30 61 62 00", decoded: [.string("ab")]),
        KeyCase(description: "\"a\\0b\"", encoded: KeyEncoding.encode("a\u{0}b"), expected: "30 61 00 FF 62 00", decoded: [.string("a\u{0}b")]),
        KeyCase(description: "\"é\"", encoded: KeyEncoding.encode("\u{E9}"), expected: "30 C3 A9 00", decoded: [.string("\u{E9}")]),
        KeyCase(description: "Substring", encoded: KeyEncoding.encode("xab".dropFirst()), expected: "30 61 62 00", decoded: [.string("ab")]),
        KeyCase(description: "Data([0, 1])", encoded: KeyEncoding.encode(Data([0x00, 0x01])), expected: "38 00 FF 01 00", decoded: [.bytes([0, 1])]),
        KeyCase(description: "UUID", encoded: KeyEncoding.encode(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!),
                expected: "40 00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF",
                decoded: [.uuid(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!)]),
        KeyCase(description: "(\"Lisbon\", 2024)", encoded: KeyEncoding.encode("Lisbon", 2024),
                expected: "30 4C 69 73 62 6F 6E 00 10 80 00 00 00 00 00 07 E8", decoded: [.string("Lisbon"), .integer(2024)]),
        KeyCase(description: "(Int?.some(1), nil as String?)", encoded: KeyEncoding.encode(Int?.some(1), String?.none),
                expected: "10 80 00 00 00 00 00 00 01 00", decoded: [.integer(1), .null]),
    ]

    @Test("Key encoding: every tag", arguments: keyCases)
    func keyEncoding(_ c: KeyCase) {
        expectBytes(c.encoded, hex(c.expected))
        #expect(KeyComponent.decode(c.encoded) == c.decoded)
    }

    @Test("Key encoding: NaN and the string prefix")
    func keyEncodingSpecialCases() {
        let nan = KeyEncoding.encode(Double.nan)
        #expect(nan == hex("20 FF F8 00 00 00 00 00 00"))
        #expect(KeyEncoding.encode(-Double.nan) == nan, "every NaN encodes as one")
        if case .double(let d)? = KeyComponent.decode(nan)?.first { #expect(d.isNaN) } else { Issue.record("NaN did not decode") }
        #expect(KeyEncoding.encode("Lis", asPrefix: true) == hex("30 4C 69 73"))
        #expect(KeyEncoding.encode("Lis", asPrefix: false) == hex("30 4C 69 73 00"))
        #expect(KeyEncoding.encode("a\u{0}", asPrefix: true) == hex("30 61 00 FF"))
        // Rejected: unknown tag, truncated fixed-size component, unterminated string.
        #expect(KeyComponent.decode(hex("05")) == nil)
        #expect(KeyComponent.decode(hex("10 80 00")) == nil)
        #expect(KeyComponent.decode(hex("30 61 62")) == nil)
        #expect(KeyComponent.decode(hex("40 00 11")) == nil)
    }

    @Test("Key encoding: order rules")
    func keyOrder() {
        // Each list is in ascending value order; the encodings must be in strictly ascending byte order.
        let ascending: [[UInt8]] = [
            KeyEncoding.encode(Int?.none),
            KeyEncoding.encode(false), KeyEncoding.encode(true),
            KeyEncoding.encode(Int64.min), KeyEncoding.encode(-1_000), KeyEncoding.encode(-1), KeyEncoding.encode(0),
            KeyEncoding.encode(1), KeyEncoding.encode(UInt32.max), KeyEncoding.encode(Int64.max),
            KeyEncoding.encode(UInt64(Int64.max) + 1), KeyEncoding.encode(UInt64.max),
            KeyEncoding.encode(-Double.infinity), KeyEncoding.encode(-1e300), KeyEncoding.encode(-1.0),
            KeyEncoding.encode(-Double.leastNonzeroMagnitude), KeyEncoding.encode(0.0),
            KeyEncoding.encode(Double.leastNonzeroMagnitude), KeyEncoding.encode(0.5), KeyEncoding.encode(1e300),
            KeyEncoding.encode(Double.infinity), KeyEncoding.encode(Double.nan),
            KeyEncoding.encode(Date(timeIntervalSinceReferenceDate: -1)), KeyEncoding.encode(Date(timeIntervalSinceReferenceDate: 0)),
            KeyEncoding.encode(""), KeyEncoding.encode("a"), KeyEncoding.encode("a\u{0}"), KeyEncoding.encode("a\u{0}\u{0}"),
            KeyEncoding.encode("a\u{1}"), KeyEncoding.encode("ab"), KeyEncoding.encode("b"), KeyEncoding.encode("\u{E9}"),
            KeyEncoding.encode(Data()), KeyEncoding.encode(Data([0])), KeyEncoding.encode(Data([0, 0])), KeyEncoding.encode(Data([1])),
            KeyEncoding.encode(UUID(uuidString: "00000000-0000-0000-0000-000000000001")!),
            KeyEncoding.encode(UUID(uuidString: "10000000-0000-0000-0000-000000000000")!),
        ]
        for i in 1..<ascending.count {
            #expect(compareBytes(ascending[i - 1], ascending[i]) < 0, "entry \(i) does not sort after entry \(i - 1)")
        }
        // Tuples compare component by component: a shorter first string sorts first whatever follows.
        #expect(compareBytes(KeyEncoding.encode("a", 9), KeyEncoding.encode("ab", 0)) < 0)
        #expect(compareBytes(KeyEncoding.encode("a", 9), KeyEncoding.encode("a\u{0}", 0)) < 0)
        #expect(compareBytes(KeyEncoding.encode("a", 1), KeyEncoding.encode("a", 2)) < 0)
    }

    // MARK: FileFormat.md, "Checksums"

    @Test("Checksums: XXH64 test vectors")
    func xxh64() {
        #expect(Checksum.hash([UInt8]()) == 0xEF46_DB37_51D8_E999)
        #expect(Checksum.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(Checksum.hash(Array("123456789".utf8)) == 0x8CB8_41DB_40E6_AE83)
        let hundred = (0..<100).map { UInt8($0) }
        #expect(Checksum.hash(hundred) == 0x6AC1_E580_3216_6597)
        #expect(hundred.withUnsafeBytes { Checksum.short($0) } == 0x3216_6597, "pages keep the low 32 bits")
        // In pieces of every size, the same value as at once.
        for cut in [1, 7, 31, 32, 33, 64, 99] {
            var stream = StreamingChecksum()
            hundred.withUnsafeBytes { raw in
                stream.update(UnsafeRawBufferPointer(rebasing: raw[0..<cut]))
                stream.update(UnsafeRawBufferPointer(rebasing: raw[cut...]))
            }
            #expect(stream.value == 0x6AC1_E580_3216_6597, "cut at \(cut)")
        }
    }

    // MARK: FileFormat.md, "Blob files"

    @Test("Blob files: file names")
    func blobFileNames() {
        let folder = BlobFolder(path: "/data/app.store.blobs", fileSystem: DiskFileSystem(), storePath: "/data/app.store")
        #expect(folder.filePath(31) == "/data/app.store.blobs/000000000000001f.blob")
        #expect(folder.filePath(.max) == "/data/app.store.blobs/ffffffffffffffff.blob")
        #expect(BlobFolder.id(fromFileName: "000000000000001f.blob") == 31)
        #expect(BlobFolder.id(fromFileName: "1f.blob") == nil)
        #expect(BlobFolder.id(fromFileName: "000000000000001f.tmp") == nil)
    }

    // MARK: FileFormat.md, "Overview", "Trees", "The commit protocol"

    /// One small store on disk, read back byte by byte: the layout the engine really writes.
    @Test("The commit protocol: a new store and its first commit, byte by byte")
    func storeLayout() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path("golden.store")
        func fileBytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

        // A new store: header and commit record 0, 196 bytes.
        let store = try Store(path: path)
        var bytes = try fileBytes()
        #expect(bytes.count == 196)
        let header = try FileHeader.decode(Array(bytes[0..<64])).get()
        #expect(header.salt != 0)
        let initial = CommitRecord(sequence: 0, offset: 64, previousOffset: 0, bodyStart: 64, bodyChecksum: StreamingChecksum().value,
                                   flags: CommitRecord.flagBodySynced, timeMilliseconds: bytes.loadLE64(64 + 64), salt: header.salt, catalog: Catalog())
        expectBytes(Array(bytes[64...]), initial.encode())
        #expect(FileManager.default.fileExists(atPath: path + ".lock"))

        // One commit: the pages of each tree it changed (each tree's root last), then the commit record.
        var ids: (unique: IndexID, plain: IndexID, blob: BlobID)! = nil
        try store.write { tx in
            let users = try tx.createCollection(named: "users")
            let unique = try tx.createIndex(named: "email", on: users, unique: true)
            let plain = try tx.createIndex(named: "age", on: users, unique: false)
            try tx.put(Array("Ada".utf8), row: 7, in: users,
                       indexKeys: [IndexKey(unique, KeyEncoding.encode("ada")), IndexKey(plain, KeyEncoding.encode(36))])
            ids = (unique, plain, try tx.putBlob(Array("hello".utf8)))
        }
        // After a durable commit the writer writes zeros ahead (64 KiB or an eighth of the
        // file, to a 4 KiB boundary), for the next commits to overwrite; closing cuts them off.
        let written = try fileBytes()
        bytes = written.strippingZeroTail()
        #expect(written.count == (bytes.count + 65536 + 4095) / 4096 * 4096)
        #expect(written[bytes.count...].allSatisfy { $0 == 0 })
        let trailerLength = Int(bytes.loadLE32(bytes.count - 12))
        let commitOffset = UInt64(bytes.count - trailerLength)
        let commit = try #require(CommitRecord.decode(Array(bytes[Int(commitOffset)...]), at: commitOffset, salt: header.salt))
        #expect(commit.sequence == 1)
        #expect(commit.previousOffset == 64)
        #expect(commit.bodyStart == 196)
        #expect(commit.flags == 0, "a small body is committed with one sync and no flag")
        #expect(commit.bodyChecksum == Checksum.hash(Array(bytes[196..<Int(commitOffset)])))
        #expect(commit.catalog.nextBlobID == 2)
        let users = try #require(commit.catalog.collections.first)
        #expect(users.count == 1 && users.nextRowID == 8 && users.name == "users")
        #expect(commit.catalog.indexes.map(\.entries) == [1, 1])

        // Each tree is one leaf: the page at its root, with its cells.
        func leaf(_ root: UInt64) throws -> [([UInt8], [UInt8], UInt8)] {
            let length = Int(bytes.loadLE16(Int(root) + 4))
            #expect(users.liveBytes > 0)
            let page = Array(bytes[Int(root)..<(Int(root) + length)])
            return try #require(withPage(page, at: root) { v in (0..<v.count).map { (v.key($0), Array(v.leafCell($0).value), v.leafCell($0).flags) } })
        }
        let digest = KeysDigest.of([IndexKey(ids.unique, KeyEncoding.encode("ada")), IndexKey(ids.plain, KeyEncoding.encode(36))])
        var rowValue: [UInt8] = []
        rowValue.appendLE(digest)
        rowValue += Array("Ada".utf8)
        let rows = try leaf(users.root)
        #expect(rows.map(\.0) == [hex("00 00 00 00 00 00 00 07")])
        #expect(rows.map(\.1) == [rowValue])
        #expect(rows.map(\.2) == [ValueFlags.keysDigest])
        let unique = try leaf(commit.catalog.indexes[0].root)
        #expect(unique.map(\.0) == [KeyEncoding.encode("ada")] && unique.map(\.1) == [[7]])
        let plain = try leaf(commit.catalog.indexes[1].root)
        #expect(plain.map(\.0) == [KeyEncoding.encode(36) + hex("01 07 01")] && plain.map(\.1) == [[]])
        var blobValue: [UInt8] = []
        blobValue.appendLE(UInt64(5))
        blobValue.appendLE(Checksum.hash(Array("hello".utf8)))
        let system = try leaf(commit.catalog.systemRoot)
        #expect(system.map(\.0) == [TreeKey.blob(ids.blob.rawValue)] && system.map(\.1) == [blobValue])
        let roots = [users.root] + commit.catalog.indexes.map(\.root) + [commit.catalog.systemRoot]
        #expect(roots.allSatisfy { $0 >= 196 && $0 < commitOffset }, "every page lies in the body")
        #expect(roots.allSatisfy { $0 % 16 == 0 }, "every page starts at a multiple of 16")
        let blobFile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".blobs/0000000000000001.blob")))
        #expect(blobFile == Array("hello".utf8))

        // A reader in another process finds this commit in the lock file.
        let lock = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".lock")))
        #expect(PublishedCommit.decode(Array(lock[8..<48])) == PublishedCommit(salt: header.salt, sequence: 1, offset: commitOffset, end: UInt64(bytes.count)))
        store.close()
        #expect(try fileBytes() == bytes, "closing cuts off the zeros written ahead")
    }

    @Test("The commit protocol: deferred commits after an unsynced one carry flag bit 1")
    func deferredFlags() throws {
        let dir = try EngineTestDirectory()
        let path = dir.path("deferred.store")
        let store = try Store(path: path, options: StoreOptions(durability: .deferred))
        func lastCommit() throws -> CommitRecord {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let offset = bytes.count - Int(bytes.loadLE32(bytes.count - 12))
            let salt = try FileHeader.decode(Array(bytes[0..<64])).get().salt
            return try #require(CommitRecord.decode(Array(bytes[offset...]), at: UInt64(offset), salt: salt))
        }
        try store.write { tx in _ = try tx.createCollection(named: "a") }
        #expect(try lastCommit().flags == 0, "the file was synced when opened")
        try store.write { tx in _ = try tx.createCollection(named: "b") }
        #expect(try lastCommit().flags == CommitRecord.flagPreviousNotSynced)
        try store.sync()
        try store.write { tx in _ = try tx.createCollection(named: "c") }
        #expect(try lastCommit().flags == 0, "Store.sync() made the earlier commits durable")
    }
}
