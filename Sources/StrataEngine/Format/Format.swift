// The fixed structures of the file: header, commit record, catalog.
// Docs/FileFormat.md describes each byte; the golden-bytes tests pin them.

/// The 64-byte header at offset 0 (Docs/FileFormat.md, "File header").
struct FileHeader: Equatable {
    static let magic: [UInt8] = Array("STRATADB".utf8)
    static let size = 64
    static let currentVersion: UInt32 = 2

    var version: UInt32 = FileHeader.currentVersion
    var salt: UInt64
    var createdMilliseconds: UInt64

    /// Format 1 kept the CRC-32C of bytes 0..<60 at 60; format 2 the low 32 bits of their XXH64.
    func encode() -> [UInt8] {
        var b = FileHeader.magic
        b.appendLE(version)
        b.appendLE(UInt32(FileHeader.size))
        b.appendLE(salt)
        b.appendLE(createdMilliseconds)
        b.append(contentsOf: [UInt8](repeating: 0, count: 60 - b.count))
        b.appendLE(version >= 2 ? b.withUnsafeBytes { Checksum.short($0) } : CRC32C.checksum(b))
        return b
    }

    enum DecodeFailure { case notAStore, newerVersion(UInt32), olderVersion(UInt32), damaged }

    static func decode(_ b: [UInt8]) -> Result<FileHeader, DecodeFailureBox> {
        guard b.count >= size, Array(b[0..<8]) == magic else { return .failure(.init(.notAStore)) }
        let version = b.loadLE32(8)
        let stored = b.loadLE32(60)
        let matches = version >= 2 ? stored == b.withUnsafeBytes { Checksum.short(UnsafeRawBufferPointer(rebasing: $0[0..<60])) }
                                   : stored == CRC32C.checksum(b[0..<60])
        guard matches else { return .failure(.init(.damaged)) }
        guard version <= currentVersion else { return .failure(.init(.newerVersion(version))) }
        guard version >= 1, b.loadLE32(12) == UInt32(size) else { return .failure(.init(.damaged)) }
        let header = FileHeader(version: version, salt: b.loadLE64(16), createdMilliseconds: b.loadLE64(24))
        guard version == currentVersion else { return .failure(.init(.olderVersion(version), header)) }
        return .success(header)
    }

    struct DecodeFailureBox: Error {
        let failure: DecodeFailure
        /// The header itself, for an older version (which `FormatUpgrade` reads).
        let header: FileHeader?
        init(_ f: DecodeFailure, _ header: FileHeader? = nil) { failure = f; self.header = header }
    }
}

/// One collection's entry in the catalog: its rows are a tree of their own.
struct CollectionInfo: Equatable, Sendable {
    var id: UInt32
    var name: String
    var count: UInt64
    var nextRowID: UInt64
    /// Bytes of the row tree's pages and of its value frames.
    var liveBytes: UInt64
    /// The row tree's root page, 0 when the collection is empty.
    var root: UInt64 = 0
}

/// One index's entry in the catalog: its entries are a tree of their own.
struct IndexInfoRecord: Equatable, Sendable {
    var id: UInt32
    var collection: UInt32
    var name: String
    var unique: Bool
    /// The index tree's root page, 0 when the index is empty.
    var root: UInt64 = 0
    var entries: UInt64 = 0
    /// Bytes of the index tree's pages.
    var liveBytes: UInt64 = 0
}

/// Names, counts, tree roots and id counters; written inside every commit record.
struct Catalog: Equatable, Sendable {
    var nextCollectionID: UInt32 = 1
    var nextIndexID: UInt32 = 1
    var nextBlobID: UInt64 = 1
    /// The system tree (blobs and metadata): its root page (0 when empty) and live bytes.
    var systemRoot: UInt64 = 0
    var systemBytes: UInt64 = 0
    var collections: [CollectionInfo] = []
    var indexes: [IndexInfoRecord] = []

    /// The id of the collection named `name`. (Read in place: an optional entry, copied out and
    /// destroyed, went through metadata the runtime made on a fresh process's first open, W8.)
    func collectionID(named name: String) -> CollectionID? {
        for i in collections.indices where collections[i].name == name { return CollectionID(rawValue: collections[i].id) }
        return nil
    }
    func collectionPosition(_ id: UInt32) -> Int? { collections.firstIndex { $0.id == id } }
    func index(_ id: UInt32) -> IndexInfoRecord? { indexes.first { $0.id == id } }
    func indexPosition(_ id: UInt32) -> Int? { indexes.firstIndex { $0.id == id } }

    /// Bytes of every live page and value frame.
    var liveBytes: UInt64 {
        func add(_ a: UInt64, _ b: UInt64) -> UInt64 { let (s, o) = a.addingReportingOverflow(b); return o ? .max : s }
        let c = collections.reduce(systemBytes) { add($0, $1.liveBytes) }
        return indexes.reduce(c) { add($0, $1.liveBytes) }
    }

    static let fixedSize = 40

    func encode(into b: inout [UInt8]) {
        b.appendLE(nextCollectionID)
        b.appendLE(nextIndexID)
        b.appendLE(nextBlobID)
        b.appendLE(systemRoot)
        b.appendLE(systemBytes)
        b.appendLE(UInt32(collections.count))
        b.appendLE(UInt32(indexes.count))
        for c in collections {
            b.appendLE(c.id)
            b.appendLE(c.count)
            b.appendLE(c.nextRowID)
            b.appendLE(c.root)
            b.appendLE(c.liveBytes)
            Catalog.appendName(c.name, to: &b)
        }
        for i in indexes {
            b.appendLE(i.id)
            b.appendLE(i.collection)
            b.append(i.unique ? 1 : 0)
            b.appendLE(i.root)
            b.appendLE(i.entries)
            b.appendLE(i.liveBytes)
            Catalog.appendName(i.name, to: &b)
        }
    }

    static func appendName(_ name: String, to b: inout [UInt8]) {
        b.appendLE(UInt16(truncatingIfNeeded: name.utf8.count))
        b.append(contentsOf: name.utf8)
    }

    /// How many bytes `encode` writes (exactly: each entry's fixed fields and its name).
    var encodedSize: Int {
        Catalog.fixedSize + collections.reduce(0) { $0 + Catalog.collectionEntryMinimum + $1.name.utf8.count }
            + indexes.reduce(0) { $0 + Catalog.indexEntryMinimum + $1.name.utf8.count }
    }

    static let collectionEntryMinimum = 38
    static let indexEntryMinimum = 35

    static func decode(_ b: [UInt8], from start: Int, to end: Int) -> Catalog? {
        var r = ByteReader(bytes: b, position: start, end: end)
        var c = Catalog()
        guard let ncid = r.u32(), let niid = r.u32(), let nbid = r.u64(), let sroot = r.u64(), let sbytes = r.u64(),
              let nc = r.u32(), let ni = r.u32() else { return nil }
        c.nextCollectionID = ncid; c.nextIndexID = niid; c.nextBlobID = nbid
        c.systemRoot = sroot; c.systemBytes = sbytes
        // Counts and sizes past Int.max cannot be real (and would trap where they become an Int).
        let largest = UInt64(Int.max)
        guard sbytes <= largest else { return nil }
        guard Int(nc) <= (end - start) / collectionEntryMinimum, Int(ni) <= (end - start) / indexEntryMinimum else { return nil }
        for _ in 0..<nc {
            guard let id = r.u32(), let count = r.u64(), let next = r.u64(), let root = r.u64(), let live = r.u64(), let name = r.name(),
                  count <= largest, live <= largest else { return nil }
            c.collections.append(CollectionInfo(id: id, name: name, count: count, nextRowID: next, liveBytes: live, root: root))
        }
        for _ in 0..<ni {
            guard let id = r.u32(), let coll = r.u32(), let flags = r.u8(), let root = r.u64(), let entries = r.u64(), let live = r.u64(),
                  let name = r.name(), entries <= largest, live <= largest else { return nil }
            c.indexes.append(IndexInfoRecord(id: id, collection: coll, name: name, unique: flags & 1 != 0, root: root, entries: entries, liveBytes: live))
        }
        guard r.position == end else { return nil }
        return c
    }
}

/// A bounds-checked little-endian reader: every read returns nil past the end.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    let end: Int

    mutating func u8() -> UInt8? {
        guard position + 1 <= end else { return nil }
        defer { position += 1 }
        return bytes[position]
    }
    mutating func u16() -> UInt16? {
        guard position + 2 <= end else { return nil }
        defer { position += 2 }
        return bytes.loadLE16(position)
    }
    mutating func u32() -> UInt32? {
        guard position + 4 <= end else { return nil }
        defer { position += 4 }
        return bytes.loadLE32(position)
    }
    mutating func u64() -> UInt64? {
        guard position + 8 <= end else { return nil }
        defer { position += 8 }
        return bytes.loadLE64(position)
    }
    mutating func name() -> String? {
        guard let n = u16(), position + Int(n) <= end else { return nil }
        defer { position += Int(n) }
        return String(decoding: bytes[position..<position + Int(n)], as: UTF8.self)
    }
}

/// The record that ends every commit (Docs/FileFormat.md, "Commit record").
struct CommitRecord: Equatable {
    static let magic: [UInt8] = Array("STRCOMMT".utf8)
    static let endMagic: [UInt8] = Array("STRCMEND".utf8)
    static let fixedSize = 80
    static let trailerSize = 12
    static let maximumSize = 16 * 1024 * 1024

    /// Flag: the body was synced before this record was written, so opening need not check it.
    static let flagBodySynced: UInt32 = 1
    /// Flag: earlier commits were not synced when this record was written (deferred
    /// durability), so opening checks them too, back to one that was.
    static let flagPreviousNotSynced: UInt32 = 2

    var sequence: UInt64
    var offset: UInt64
    var previousOffset: UInt64
    var bodyStart: UInt64
    var bodyChecksum: UInt64
    var flags: UInt32
    var timeMilliseconds: UInt64
    var salt: UInt64
    var catalog: Catalog

    /// The offset just past this record: where the next commit's body starts.
    var end: UInt64 { offset + UInt64(encodedLength) }
    /// Its length in the file, without encoding it (recovery and opening ask for `end` several
    /// times: encoding the record each time was 3% of a fresh process's open, W8).
    var encodedLength: Int { CommitRecord.fixedSize + catalog.encodedSize + CommitRecord.trailerSize }

    func encode() -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(CommitRecord.fixedSize + catalog.encodedSize + CommitRecord.trailerSize)
        b.append(contentsOf: CommitRecord.magic)
        b.appendLE(UInt64(0))            // checksum, filled below
        b.appendLE(UInt32(0))            // length, filled below
        b.appendLE(flags)
        b.appendLE(sequence)
        b.appendLE(offset)
        b.appendLE(previousOffset)
        b.appendLE(bodyStart)
        b.appendLE(bodyChecksum)
        b.appendLE(timeMilliseconds)
        b.appendLE(salt)
        catalog.encode(into: &b)
        let length = UInt32(b.count + CommitRecord.trailerSize)
        b.appendLE(length)
        b.append(contentsOf: CommitRecord.endMagic)
        b.storeLE(length, at: 16)
        let sum = b.withUnsafeBytes { Checksum.hash(UnsafeRawBufferPointer(rebasing: $0[16...])) }
        b.withUnsafeMutableBytes { $0.storeBytes(of: sum.littleEndian, toByteOffset: 8, as: UInt64.self) }
        return b
    }

    /// Decodes a whole commit record; nil unless every check passes.
    static func decode(_ b: [UInt8], at offset: UInt64, salt: UInt64) -> CommitRecord? {
        guard b.count >= fixedSize + Catalog.fixedSize + trailerSize, Array(b[0..<8]) == magic else { return nil }
        let length = Int(b.loadLE32(16))
        guard length == b.count, Array(b[(length - 8)...]) == endMagic, b.loadLE32(length - 12) == UInt32(length) else { return nil }
        let sum = b.withUnsafeBytes { Checksum.hash(UnsafeRawBufferPointer(rebasing: $0[16...])) }
        guard sum == b.loadLE64(8) else { return nil }
        guard b.loadLE64(32) == offset, b.loadLE64(72) == salt else { return nil }
        guard let catalog = Catalog.decode(b, from: fixedSize, to: length - trailerSize) else { return nil }
        let record = CommitRecord(
            sequence: b.loadLE64(24), offset: offset, previousOffset: b.loadLE64(40), bodyStart: b.loadLE64(48),
            bodyChecksum: b.loadLE64(56), flags: b.loadLE32(20), timeMilliseconds: b.loadLE64(64), salt: salt, catalog: catalog)
        guard record.bodyStart <= offset, record.previousOffset < offset || (record.previousOffset == 0) else { return nil }
        // Every tree's root was written before this record. (Checked in place: a list of the
        // roots made an array of a type a fresh process's open used nowhere else, about 11k
        // instructions of its first open, W8.)
        func writtenBefore(_ root: UInt64) -> Bool { root == 0 || (root >= UInt64(FileHeader.size) && root < offset) }
        guard writtenBefore(catalog.systemRoot), catalog.collections.allSatisfy({ writtenBefore($0.root) }),
              catalog.indexes.allSatisfy({ writtenBefore($0.root) }) else { return nil }
        return record
    }
}
