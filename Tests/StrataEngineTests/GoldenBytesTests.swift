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

@Suite struct GoldenBytesTests {

    // MARK: FileFormat.md, "File header"

    static let headerBytes = hex("""
        53 54 52 41 54 41 44 42 01 00 00 00 40 00 00 00
        EF CD AB 89 67 45 23 01 00 68 E5 CF 8B 01 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 27 75 FE DD
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
        var notAStore = Self.headerBytes
        notAStore[0] = UInt8(ascii: "X")
        guard case .notAStore? = failure(notAStore) else { Issue.record("bad magic"); return }
        guard case .notAStore? = failure(Array(Self.headerBytes[0..<63])) else { Issue.record("short header"); return }

        var damaged = Self.headerBytes
        damaged[40] = 1   // reserved bytes are covered by the CRC
        guard case .damaged? = failure(damaged) else { Issue.record("bad CRC"); return }

        var newer = Self.headerBytes
        newer[8] = 2
        newer.storeLE(CRC32C.checksum(newer[0..<60]), at: 60)
        guard case .newerVersion(2)? = failure(newer) else { Issue.record("version 2"); return }

        var badSize = Self.headerBytes
        badSize[12] = 0x80
        badSize.storeLE(CRC32C.checksum(badSize[0..<60]), at: 60)
        guard case .damaged? = failure(badSize) else { Issue.record("header size"); return }
    }

    // MARK: FileFormat.md, "Commit record" (and "Catalog")

    static let catalog = Catalog(
        nextCollectionID: 2, nextIndexID: 2, nextBlobID: 3, liveTreeBytes: 4096, liveOtherBytes: 0x30,
        collections: [CollectionInfo(id: 1, name: "users", count: 2, nextRowID: 3, liveBytes: 0x40)],
        indexes: [IndexInfoRecord(id: 1, collection: 1, name: "email", unique: true)])

    static let commitRecord = CommitRecord(
        sequence: 7, offset: 0x1000, previousOffset: 0x0F00, bodyStart: 0x0F10, bodyChecksum: 0xDEAD_BEEF,
        flags: CommitRecord.flagBodySynced, root: PageRef(offset: 0x0FA0, length: 0x60),
        timeMilliseconds: time, salt: salt, catalog: catalog)

    static let commitRecordBytes = hex("""
        53 54 52 43 4F 4D 4D 54 A8 A8 E9 CF BF 00 00 00
        07 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00
        00 0F 00 00 00 00 00 00 10 0F 00 00 00 00 00 00
        EF BE AD DE 01 00 00 00 A0 0F 00 00 00 00 00 00
        60 00 00 00 00 00 00 00 00 68 E5 CF 8B 01 00 00
        EF CD AB 89 67 45 23 01 02 00 00 00 02 00 00 00
        03 00 00 00 00 00 00 00 00 10 00 00 00 00 00 00
        30 00 00 00 00 00 00 00 01 00 00 00 01 00 00 00
        01 00 00 00 02 00 00 00 00 00 00 00 03 00 00 00
        00 00 00 00 40 00 00 00 00 00 00 00 05 00 75 73
        65 72 73 01 00 00 00 01 00 00 00 01 05 00 65 6D
        61 69 6C BF 00 00 00 53 54 52 43 4D 45 4E 44
        """)

    @Test("Commit record: golden bytes, with a small catalog")
    func commitRecordBytes() {
        let bytes = Self.commitRecord.encode()
        expectBytes(bytes, Self.commitRecordBytes)
        #expect(Self.commitRecord.encodedLength == 191)
        #expect(Self.commitRecord.end == 0x1000 + 191)
        #expect(CommitRecord.decode(Self.commitRecordBytes, at: 0x1000, salt: salt) == Self.commitRecord)
        #expect(CommitRecord.flagBodySynced == 1 && CommitRecord.flagPreviousNotSynced == 2)
    }

    @Test("Commit record: the catalog")
    func catalogBytes() {
        var bytes: [UInt8] = []
        Self.catalog.encode(into: &bytes)
        let expected = Array(Self.commitRecordBytes[CommitRecord.fixedSize..<(191 - CommitRecord.trailerSize)])
        #expect(bytes.count == 91)
        expectBytes(bytes, expected)
        #expect(Catalog.decode(bytes, from: 0, to: bytes.count) == Self.catalog)
        #expect(Catalog.decode(bytes + [0], from: 0, to: bytes.count + 1) == nil, "a catalog must end at the trailer")
        #expect(Catalog.decode(bytes, from: 0, to: bytes.count - 1) == nil, "a name running past the end")
    }

    @Test("Commit record: the validity checks")
    func commitRecordChecks() {
        let good = Self.commitRecordBytes
        #expect(CommitRecord.decode(good, at: 0x1001, salt: salt) == nil, "offset field must match")
        #expect(CommitRecord.decode(good, at: 0x1000, salt: salt + 1) == nil, "salt must match")
        var flipped = good
        flipped[100] ^= 1
        #expect(CommitRecord.decode(flipped, at: 0x1000, salt: salt) == nil, "CRC")
        var badEnd = good
        badEnd[good.count - 1] = 0
        #expect(CommitRecord.decode(badEnd, at: 0x1000, salt: salt) == nil, "end magic")
        #expect(CommitRecord.decode(Array(good.dropLast()), at: 0x1000, salt: salt) == nil, "length")
        var rootAfter = Self.commitRecord
        rootAfter.root = PageRef(offset: 0x1000, length: 0x60)
        #expect(CommitRecord.decode(rootAfter.encode(), at: 0x1000, salt: salt) == nil, "root must precede the record")
        var bodyAfter = Self.commitRecord
        bodyAfter.bodyStart = 0x1001
        #expect(CommitRecord.decode(bodyAfter.encode(), at: 0x1000, salt: salt) == nil, "body must precede the record")
    }

    static let initialCommitBytes = hex("""
        53 54 52 43 4F 4D 4D 54 7E F2 D9 B9 8C 00 00 00
        00 00 00 00 00 00 00 00 40 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 40 00 00 00 00 00 00 00
        00 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 68 E5 CF 8B 01 00 00
        EF CD AB 89 67 45 23 01 01 00 00 00 01 00 00 00
        01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
        8C 00 00 00 53 54 52 43 4D 45 4E 44
        """)

    @Test("Commit record: commit record 0 of a new store")
    func initialCommitRecord() {
        let record = CommitRecord(sequence: 0, offset: 64, previousOffset: 0, bodyStart: 64, bodyChecksum: 0,
                                  flags: CommitRecord.flagBodySynced, root: nil, timeMilliseconds: time,
                                  salt: salt, catalog: Catalog())
        expectBytes(record.encode(), Self.initialCommitBytes)
        #expect(CommitRecord.decode(Self.initialCommitBytes, at: 64, salt: salt) == record)
    }

    // MARK: FileFormat.md, "Page"

    static let leafBytes = hex("""
        05 92 D9 3A 46 00 00 00 01 00 02 00 0D 00 01 00
        00 00 01 00 00 00 00 00 00 00 01 0C 00 40 00 00
        00 00 00 00 00 20 00 00 00 0D 00 01 00 00 00 01
        00 00 00 00 00 00 00 02 0C 00 60 00 00 00 00 00
        00 00 20 00 00 00
        """)

    @Test("Page: leaf, golden bytes")
    func leafPage() throws {
        let leaf = Node(isLeaf: true)
        for (i, (row, offset)) in [(UInt64(1), UInt64(0x40)), (2, 0x60)].enumerated() {
            let key = TreeKey.row(1, row)
            let value = RecordLocation(offset: offset, length: 0x20).encode()
            key.withUnsafeBytes { k in value.withUnsafeBytes { leaf.insertEntry(at: i, key: k, value: $0) } }
        }
        #expect(leaf.pageSize == 70)
        expectBytes(leaf.encodePage(childRefs: []), Self.leafBytes)

        let ref = PageRef(offset: 0x1000, length: 70)
        let decoded = try #require(Node.decode(page: Self.leafBytes, at: ref))
        #expect(decoded.isLeaf && decoded.count == 2 && decoded.page == ref)
        #expect(decoded.key(0) == hex("01 00000001 0000000000000001"))
        #expect(decoded.key(1) == hex("01 00000001 0000000000000002"))
        #expect(decoded.value(0) == hex("4000000000000000 20000000"))
        #expect(decoded.value(1) == hex("6000000000000000 20000000"))
        #expect(Node.decode(page: Self.leafBytes, at: PageRef(offset: 0x1000, length: 71)) == nil, "length must match the reference")
        var damaged = Self.leafBytes
        damaged[20] ^= 0x80
        #expect(Node.decode(page: damaged, at: ref) == nil, "CRC")
    }

    static let branchBytes = hex("""
        20 C5 62 B4 35 00 00 00 02 00 02 00 00 00 0D 00
        01 00 00 00 01 00 00 00 00 00 00 00 05 00 01 00
        00 00 00 00 00 80 00 00 00 00 02 00 00 00 00 00
        00 90 00 00 00
        """)

    @Test("Page: branch, golden bytes")
    func branchPage() throws {
        let children = [PageRef(offset: 0x100, length: 0x80), PageRef(offset: 0x200, length: 0x90)]
        let branch = Node(isLeaf: false)
        branch.insertEntry(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), value: nil)
        TreeKey.row(1, 5).withUnsafeBytes { branch.insertEntry(at: 1, key: $0, value: nil) }
        branch.children = children.map { .page($0) }
        #expect(branch.pageSize == 53)
        expectBytes(branch.encodePage(childRefs: children), Self.branchBytes)

        let ref = PageRef(offset: 0x1000, length: 53)
        let decoded = try #require(Node.decode(page: Self.branchBytes, at: ref))
        #expect(!decoded.isLeaf && decoded.count == 2)
        #expect(decoded.key(0).isEmpty)
        #expect(decoded.key(1) == TreeKey.row(1, 5))
        let refs = decoded.children.map { child -> PageRef? in if case .page(let r) = child { r } else { nil } }
        #expect(refs == children)
        // Child i holds [key i, key i+1): row 4 is in child 0, row 5 and above in child 1.
        #expect(TreeKey.row(1, 4).withUnsafeBytes { decoded.childIndex(for: $0) } == 0)
        #expect(TreeKey.row(1, 5).withUnsafeBytes { decoded.childIndex(for: $0) } == 1)
        #expect(TreeKey.row(2, 0).withUnsafeBytes { decoded.childIndex(for: $0) } == 1)
        #expect(Node.decode(page: Self.branchBytes, at: PageRef(offset: 0x200, length: 53)) == nil,
                "a child at or after its parent is damage")
    }

    // MARK: FileFormat.md, "Tree keys"

    @Test("Tree keys: every kind of key")
    func treeKeys() {
        #expect(TreeKey.row(1, 2) == hex("01 00 00 00 01 00 00 00 00 00 00 00 02"))
        #expect(TreeKey.rowPrefix(1) == hex("01 00 00 00 01"))
        #expect(TreeKey.row(0x0102_0304, 0x0506_0708_090A_0B0C) == hex("01 01 02 03 04 05 06 07 08 09 0A 0B 0C"))
        #expect(TreeKey.indexEntry(2, KeyEncoding.encode(42), row: nil) == hex("02 00 00 00 02 10 80 00 00 00 00 00 00 2A"))
        #expect(TreeKey.indexEntry(2, KeyEncoding.encode(42), row: 7)
                == hex("02 00 00 00 02 10 80 00 00 00 00 00 00 2A 00 00 00 00 00 00 00 07"))
        #expect(TreeKey.indexPrefix(2) == hex("02 00 00 00 02"))
        #expect(TreeKey.blob(16) == hex("03 00 00 00 00 00 00 00 10"))
        #expect(TreeKey.metadata("schema") == hex("04 73 63 68 65 6D 61"))
    }

    @Test("Tree keys: record location")
    func recordLocation() {
        let location = RecordLocation(offset: 0x01_2345_6789, length: 42)
        let bytes = hex("89 67 45 23 01 00 00 00 2A 00 00 00")
        #expect(location.encode() == bytes)
        #expect(bytes.withUnsafeBytes { RecordLocation.decode($0) } == location)
        #expect(bytes.dropLast().withUnsafeBytes { RecordLocation.decode($0) } == nil)
    }

    // MARK: FileFormat.md, "Record frame"

    static let recordFrameBytes = hex("""
        05 9E 68 E4 18 00 00 00 01 01 01 00 00 00 05 00
        30 61 64 61 00 41 64 61
        """)

    @Test("Record frame: a record with an index key")
    func recordFrame() throws {
        let key = IndexKey(IndexID(rawValue: 1), KeyEncoding.encode("ada"))
        let frame = Array("Ada".utf8).withUnsafeBytes {
            RecordFrame.encode(kind: RecordFrame.kindRecord, indexKeys: [key], payload: $0)
        }
        expectBytes(frame, Self.recordFrameBytes)
        try Self.recordFrameBytes.withUnsafeBytes { raw in
            let payload = try #require(RecordFrame.check(raw))
            #expect(payload == 21)
            #expect(Array(raw[payload...]) == Array("Ada".utf8))
            #expect(RecordFrame.indexKeys(raw) == [key])
        }
        var damaged = Self.recordFrameBytes
        damaged[22] ^= 1
        #expect(damaged.withUnsafeBytes { RecordFrame.check($0) } == nil, "CRC")
        #expect(damaged.withUnsafeBytes { RecordFrame.check($0, verifyChecksum: false) } == 21)
        #expect(Self.recordFrameBytes.dropLast().withUnsafeBytes { RecordFrame.check($0) } == nil, "length")
    }

    @Test("Record frame: metadata value")
    func metadataFrame() {
        let frame = [UInt8]([1, 2]).withUnsafeBytes {
            RecordFrame.encode(kind: RecordFrame.kindMetadata, indexKeys: [], payload: $0)
        }
        let expected = hex("3C FF F0 A2 0C 00 00 00 02 00 01 02")
        expectBytes(frame, expected)
        #expect(expected.withUnsafeBytes { RecordFrame.check($0) } == 10)
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

    @Test("Checksums: CRC-32C test vectors")
    func crc32c() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        let whole = Array("123456789".utf8)
        let chained = whole[0..<4].withUnsafeBytes { a in
            whole[4...].withUnsafeBytes { b in CRC32C.update(CRC32C.update(0, a), b) }
        }
        #expect(chained == 0xE306_9283, "update can be fed back in")
        var stored: [UInt8] = []
        stored.appendLE(CRC32C.checksum(whole))
        #expect(stored == hex("83 92 06 E3"), "stored little-endian")
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

    // MARK: FileFormat.md, "Overview", "Tree keys", "The commit protocol", "Recovery"

    /// One small store on disk, read back byte by byte: the layout the engine really writes.
    @Test("The commit protocol: a new store and its first commit, byte by byte")
    func storeLayout() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("golden.store").path
        func fileBytes() throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

        // A new store: header and commit record 0, 204 bytes.
        let store = try Store(path: path)
        var bytes = try fileBytes()
        #expect(bytes.count == 204)
        let header = try FileHeader.decode(Array(bytes[0..<64])).get()
        #expect(header.salt != 0)
        let initial = CommitRecord(sequence: 0, offset: 64, previousOffset: 0, bodyStart: 64, bodyChecksum: 0,
                                   flags: CommitRecord.flagBodySynced, root: nil,
                                   timeMilliseconds: bytes.loadLE64(64 + 72), salt: header.salt, catalog: Catalog())
        expectBytes(Array(bytes[64...]), initial.encode())

        // One commit: one record frame, then one leaf page, then the commit record.
        var ids: (unique: IndexID, plain: IndexID, blob: BlobID)! = nil
        try store.write { tx in
            let users = try tx.createCollection(named: "users")
            let unique = try tx.createIndex(named: "email", on: users, unique: true)
            let plain = try tx.createIndex(named: "age", on: users, unique: false)
            try tx.put(Array("Ada".utf8), row: 7, in: users,
                       indexKeys: [IndexKey(unique, KeyEncoding.encode("ada")), IndexKey(plain, KeyEncoding.encode(36))])
            ids = (unique, plain, try tx.putBlob(Array("hello".utf8)))
        }
        bytes = try fileBytes()
        let frameKeys = [IndexKey(ids.unique, KeyEncoding.encode("ada")), IndexKey(ids.plain, KeyEncoding.encode(36))]
        let expectedFrame = Array("Ada".utf8).withUnsafeBytes {
            RecordFrame.encode(kind: RecordFrame.kindRecord, indexKeys: frameKeys, payload: $0)
        }
        expectBytes(Array(bytes[204..<(204 + expectedFrame.count)]), expectedFrame)

        let trailerLength = Int(bytes.loadLE32(bytes.count - 12))
        let commitOffset = UInt64(bytes.count - trailerLength)
        let commit = try #require(CommitRecord.decode(Array(bytes[Int(commitOffset)...]), at: commitOffset, salt: header.salt))
        #expect(commit.sequence == 1)
        #expect(commit.previousOffset == 64)
        #expect(commit.bodyStart == 204)
        #expect(commit.flags == 0, "a small body is committed with one sync and no flag")
        #expect(commit.bodyChecksum == CRC32C.checksum(bytes[204..<Int(commitOffset)]))
        let root = try #require(commit.root)
        #expect(root.offset == 204 + UInt64(expectedFrame.count), "the page follows the frame")
        #expect(root.offset + UInt64(root.length) == commitOffset, "the root is the last thing of the body")
        #expect(commit.catalog.collections == [CollectionInfo(id: 1, name: "users", count: 1, nextRowID: 8,
                                                              liveBytes: UInt64(expectedFrame.count))])
        #expect(commit.catalog.nextBlobID == 2)

        // The leaf: the entries of every kind, in key order, with their values.
        let leaf = try #require(Node.decode(page: Array(bytes[Int(root.offset)..<Int(commitOffset)]), at: root))
        #expect(leaf.isLeaf)
        let entries = (0..<leaf.count).map { (leaf.key($0), leaf.value($0)) }
        let expected: [([UInt8], [UInt8])] = [
            (TreeKey.row(1, 7), RecordLocation(offset: 204, length: UInt32(expectedFrame.count)).encode()),
            (TreeKey.indexEntry(ids.unique.rawValue, KeyEncoding.encode("ada"), row: nil), hex("07 00 00 00 00 00 00 00")),
            (TreeKey.indexEntry(ids.plain.rawValue, KeyEncoding.encode(36), row: 7), []),
            (TreeKey.blob(1), hex("05 00 00 00 00 00 00 00 4C BB 71 9A")),
        ]
        #expect(entries.map(\.0) == expected.map(\.0))
        #expect(entries.map(\.1) == expected.map(\.1))
        let blobFile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".blobs/0000000000000001.blob")))
        #expect(blobFile == Array("hello".utf8))
    }

    @Test("The commit protocol: deferred commits after an unsynced one carry flag bit 1")
    func deferredFlags() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("deferred.store").path
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
