// The fixed structures of the file: header, commit record, catalog, record frame.
// Docs/FileFormat.md describes each byte; the golden-bytes tests pin them.

/// The 64-byte header at offset 0 (Docs/FileFormat.md, "File header").
struct FileHeader: Equatable {
    static let magic: [UInt8] = Array("STRATADB".utf8)
    static let size = 64
    static let currentVersion: UInt32 = 1

    var version: UInt32 = FileHeader.currentVersion
    var salt: UInt64
    var createdMilliseconds: UInt64

    func encode() -> [UInt8] {
        var b = FileHeader.magic
        b.appendLE(version)
        b.appendLE(UInt32(FileHeader.size))
        b.appendLE(salt)
        b.appendLE(createdMilliseconds)
        b.append(contentsOf: [UInt8](repeating: 0, count: 60 - b.count))
        b.appendLE(CRC32C.checksum(b))
        return b
    }

    enum DecodeFailure { case notAStore, newerVersion(UInt32), damaged }

    static func decode(_ b: [UInt8]) -> Result<FileHeader, DecodeFailureBox> {
        guard b.count >= size, Array(b[0..<8]) == magic else { return .failure(.init(.notAStore)) }
        guard b.loadLE32(60) == CRC32C.checksum(b[0..<60]) else { return .failure(.init(.damaged)) }
        let version = b.loadLE32(8)
        guard version <= currentVersion else { return .failure(.init(.newerVersion(version))) }
        guard version >= 1, b.loadLE32(12) == UInt32(size) else { return .failure(.init(.damaged)) }
        return .success(FileHeader(version: version, salt: b.loadLE64(16), createdMilliseconds: b.loadLE64(24)))
    }

    struct DecodeFailureBox: Error { let failure: DecodeFailure; init(_ f: DecodeFailure) { failure = f } }
}

/// One collection's entry in the catalog.
struct CollectionInfo: Equatable, Sendable {
    var id: UInt32
    var name: String
    var count: UInt64
    var nextRowID: UInt64
    /// Bytes of the live records (frames included).
    var liveBytes: UInt64
}

/// One index's entry in the catalog.
struct IndexInfoRecord: Equatable, Sendable {
    var id: UInt32
    var collection: UInt32
    var name: String
    var unique: Bool
}

/// Names, counts and id counters; written inside every commit record.
struct Catalog: Equatable, Sendable {
    var nextCollectionID: UInt32 = 1
    var nextIndexID: UInt32 = 1
    var nextBlobID: UInt64 = 1
    /// Bytes of the pages reachable from the root.
    var liveTreeBytes: UInt64 = 0
    /// Bytes of live metadata values and blob-table bookkeeping.
    var liveOtherBytes: UInt64 = 0
    var collections: [CollectionInfo] = []
    var indexes: [IndexInfoRecord] = []

    func collection(named name: String) -> CollectionInfo? { collections.first { $0.name == name } }
    func collectionPosition(_ id: UInt32) -> Int? { collections.firstIndex { $0.id == id } }
    func index(_ id: UInt32) -> IndexInfoRecord? { indexes.first { $0.id == id } }

    func encode(into b: inout [UInt8]) {
        b.appendLE(nextCollectionID)
        b.appendLE(nextIndexID)
        b.appendLE(nextBlobID)
        b.appendLE(liveTreeBytes)
        b.appendLE(liveOtherBytes)
        b.appendLE(UInt32(collections.count))
        b.appendLE(UInt32(indexes.count))
        for c in collections {
            b.appendLE(c.id)
            b.appendLE(c.count)
            b.appendLE(c.nextRowID)
            b.appendLE(c.liveBytes)
            Catalog.appendName(c.name, to: &b)
        }
        for i in indexes {
            b.appendLE(i.id)
            b.appendLE(i.collection)
            b.append(i.unique ? 1 : 0)
            Catalog.appendName(i.name, to: &b)
        }
    }

    static func appendName(_ name: String, to b: inout [UInt8]) {
        let utf8 = Array(name.utf8)
        b.appendLE(UInt16(utf8.count))
        b.append(contentsOf: utf8)
    }

    static func decode(_ b: [UInt8], from start: Int, to end: Int) -> Catalog? {
        var r = ByteReader(bytes: b, position: start, end: end)
        var c = Catalog()
        guard let ncid = r.u32(), let niid = r.u32(), let nbid = r.u64(), let tree = r.u64(), let other = r.u64(),
              let nc = r.u32(), let ni = r.u32() else { return nil }
        c.nextCollectionID = ncid; c.nextIndexID = niid; c.nextBlobID = nbid
        c.liveTreeBytes = tree; c.liveOtherBytes = other
        // Counts and sizes past Int.max cannot be real (and would trap where they become an Int).
        let largest = UInt64(Int.max)
        guard tree <= largest, other <= largest else { return nil }
        guard Int(nc) <= (end - start) / 30, Int(ni) <= (end - start) / 11 else { return nil }
        for _ in 0..<nc {
            guard let id = r.u32(), let count = r.u64(), let next = r.u64(), let live = r.u64(), let name = r.name(),
                  count <= largest, live <= largest else { return nil }
            c.collections.append(CollectionInfo(id: id, name: name, count: count, nextRowID: next, liveBytes: live))
        }
        for _ in 0..<ni {
            guard let id = r.u32(), let coll = r.u32(), let flags = r.u8(), let name = r.name() else { return nil }
            c.indexes.append(IndexInfoRecord(id: id, collection: coll, name: name, unique: flags & 1 != 0))
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
    static let fixedSize = 88
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
    var bodyChecksum: UInt32
    var flags: UInt32
    var root: PageRef?
    var timeMilliseconds: UInt64
    var salt: UInt64
    var catalog: Catalog

    /// The offset just past this record: where the next commit's body starts.
    var end: UInt64 { offset + UInt64(encodedLength) }
    var encodedLength: Int { encode().count }

    func encode() -> [UInt8] {
        var b = CommitRecord.magic
        b.appendLE(UInt32(0))            // checksum, filled below
        b.appendLE(UInt32(0))            // length, filled below
        b.appendLE(sequence)
        b.appendLE(offset)
        b.appendLE(previousOffset)
        b.appendLE(bodyStart)
        b.appendLE(bodyChecksum)
        b.appendLE(flags)
        b.appendLE(root?.offset ?? 0)
        b.appendLE(root?.length ?? 0)
        b.appendLE(UInt32(0))
        b.appendLE(timeMilliseconds)
        b.appendLE(salt)
        catalog.encode(into: &b)
        let length = UInt32(b.count + CommitRecord.trailerSize)
        b.appendLE(length)
        b.append(contentsOf: CommitRecord.endMagic)
        b.storeLE(length, at: 12)
        let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        b.storeLE(crc, at: 8)
        return b
    }

    /// Decodes a whole commit record; nil unless every check passes.
    static func decode(_ b: [UInt8], at offset: UInt64, salt: UInt64) -> CommitRecord? {
        guard b.count >= fixedSize + trailerSize, Array(b[0..<8]) == magic else { return nil }
        let length = Int(b.loadLE32(12))
        guard length == b.count, Array(b[(length - 8)...]) == endMagic, b.loadLE32(length - 12) == UInt32(length) else { return nil }
        let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        guard crc == b.loadLE32(8) else { return nil }
        guard b.loadLE64(24) == offset, b.loadLE64(80) == salt else { return nil }
        guard let catalog = Catalog.decode(b, from: fixedSize, to: length - trailerSize) else { return nil }
        let rootOffset = b.loadLE64(56)
        let rootLength = b.loadLE32(64)
        let root: PageRef? = rootOffset == 0 ? nil : PageRef(offset: rootOffset, length: rootLength)
        let record = CommitRecord(
            sequence: b.loadLE64(16), offset: offset, previousOffset: b.loadLE64(32), bodyStart: b.loadLE64(40),
            bodyChecksum: b.loadLE32(48), flags: b.loadLE32(52), root: root,
            timeMilliseconds: b.loadLE64(72), salt: salt, catalog: catalog)
        guard record.bodyStart <= offset, record.previousOffset < offset || (record.previousOffset == 0) else { return nil }
        if let root, root.offset >= offset { return nil }
        return record
    }
}

/// A record as stored: a checksummed frame with the index keys it owns, then the payload.
///
/// `[u32 crc32c][u32 length][u8 kind][u8 key count]` then per key `[u32 index id][u16 length][bytes]`,
/// then the payload. The engine keeps the index keys so that it can remove a row's old index
/// entries on update and delete without help from above.
enum RecordFrame {
    static let headerSize = 10
    static let kindRecord: UInt8 = 1
    static let kindMetadata: UInt8 = 2
    static let maximumLength = 1 << 30

    static func encode(kind: UInt8, indexKeys: [IndexKey], payload: UnsafeRawBufferPointer) -> [UInt8] {
        var size = headerSize + payload.count
        for k in indexKeys { size += 6 + k.key.count }
        var b: [UInt8] = []
        b.reserveCapacity(size)
        b.appendLE(UInt32(0))
        b.appendLE(UInt32(size))
        b.append(kind)
        b.append(UInt8(indexKeys.count))
        for k in indexKeys {
            b.appendLE(k.index.rawValue)
            b.appendLE(UInt16(k.key.count))
            b.append(contentsOf: k.key)
        }
        b.append(contentsOf: payload)
        let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        b.storeLE(crc, at: 0)
        return b
    }

    /// Checks a frame; returns where the payload starts, or nil if the frame is damaged.
    static func check(_ raw: UnsafeRawBufferPointer, verifyChecksum: Bool = true) -> Int? {
        guard raw.count >= headerSize, Int(raw.loadLE32(4)) == raw.count else { return nil }
        if verifyChecksum {
            guard raw.loadLE32(0) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4...])) else { return nil }
        }
        var p = headerSize
        let n = Int(raw[9])
        for _ in 0..<n {
            guard p + 6 <= raw.count else { return nil }
            p += 6 + Int(raw.loadLE16(p + 4))
        }
        return p <= raw.count ? p : nil
    }

    /// The index keys stored in a checked frame.
    static func indexKeys(_ raw: UnsafeRawBufferPointer) -> [IndexKey] {
        var keys: [IndexKey] = []
        var p = headerSize
        let n = Int(raw[9])
        for _ in 0..<n {
            let id = raw.loadLE32(p)
            let len = Int(raw.loadLE16(p + 4))
            keys.append(IndexKey(IndexID(rawValue: id), Array(raw[(p + 6)..<(p + 6 + len)])))
            p += 6 + len
        }
        return keys
    }
}
