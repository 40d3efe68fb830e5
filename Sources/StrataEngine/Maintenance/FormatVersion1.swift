// Reading a store of format version 1 (Strata before issue 15), only to convert it
// (`Store.upgrade(path:)`). Version 1 kept one tree of decoded-size pages whose keys were
// tagged by kind (rows, index entries, blobs, metadata), records in checksummed frames that
// carried the row's index keys, and CRC-32C checksums. Docs/FileFormat.md, "Format version 1",
// summarises it.

enum FormatVersion1 {
    struct Commit {
        let sequence: UInt64
        let offset: UInt64
        let end: UInt64
        let root: (offset: UInt64, length: UInt32)?
        let catalog: Catalog
        let nextBlobID: UInt64
    }

    static let commitFixedSize = 88
    static let trailerSize = 12

    /// The last intact commit of a version-1 file (the same search as version 2's recovery).
    static func lastCommit(io: any FileHandleIO, size: UInt64, salt: UInt64) throws -> Commit? {
        var end = size
        let magic = CommitRecord.endMagic
        let floor = UInt64(FileHeader.size)
        if let c = try candidate(endingAt: end, io: io, salt: salt) { return c }
        while end > floor {
            let start = end > floor + 65536 ? end - 65536 : floor
            let bytes = try io.read(count: Int(Swift.min(size, end + 7) - start), at: start)
            var i = bytes.count - magic.count
            while i >= 0 {
                if bytes[i] == magic[0], Array(bytes[i..<(i + magic.count)]) == magic,
                   let c = try candidate(endingAt: start + UInt64(i + magic.count), io: io, salt: salt) {
                    return c
                }
                i -= 1
            }
            end = start
        }
        return nil
    }

    private static func candidate(endingAt end: UInt64, io: any FileHandleIO, salt: UInt64) throws -> Commit? {
        guard end >= UInt64(FileHeader.size + commitFixedSize + trailerSize) else { return nil }
        let trailer = try io.read(count: trailerSize, at: end - UInt64(trailerSize))
        guard trailer.count == trailerSize, Array(trailer[4...]) == CommitRecord.endMagic else { return nil }
        let length = UInt64(trailer.loadLE32(0))
        guard length >= UInt64(commitFixedSize + trailerSize), length <= UInt64(CommitRecord.maximumSize), end - UInt64(FileHeader.size) >= length else { return nil }
        return try decode(io.read(count: Int(length), at: end - length), at: end - length, salt: salt, io: io)
    }

    private static func decode(_ b: [UInt8], at offset: UInt64, salt: UInt64, io: any FileHandleIO) throws -> Commit? {
        guard b.count >= commitFixedSize + trailerSize, Array(b[0..<8]) == CommitRecord.magic else { return nil }
        let length = Int(b.loadLE32(12))
        guard length == b.count, b.loadLE32(length - 12) == UInt32(length),
              b.loadLE32(8) == CRC32C.checksum(b[12...]), b.loadLE64(24) == offset, b.loadLE64(80) == salt else { return nil }
        let flags = b.loadLE32(52)
        let bodyStart = b.loadLE64(40)
        guard bodyStart >= UInt64(FileHeader.size), bodyStart <= offset else { return nil }
        if flags & 1 == 0 {
            // Not synced before its record: the body must match its checksum.
            guard offset - bodyStart <= 16 << 20 else { return nil }
            let body = try io.read(count: Int(offset - bodyStart), at: bodyStart)
            guard body.count == Int(offset - bodyStart), CRC32C.checksum(body) == b.loadLE32(48) else { return nil }
        }
        if flags & 2 != 0 {
            // Written after unsynced commits: the one before must be whole too.
            let previous = b.loadLE64(32)
            let head = try io.read(count: 16, at: previous)
            guard head.count == 16, let earlier = try decode(io.read(count: Int(head.loadLE32(12)), at: previous), at: previous, salt: salt, io: io),
                  earlier.end == bodyStart else { return nil }
        }
        guard let catalog = decodeCatalog(b, from: commitFixedSize, to: length - trailerSize) else { return nil }
        let rootOffset = b.loadLE64(56)
        let root = rootOffset == 0 ? nil : (offset: rootOffset, length: b.loadLE32(64))
        if let root, root.offset >= offset { return nil }
        return Commit(sequence: b.loadLE64(16), offset: offset, end: offset + UInt64(length), root: root, catalog: catalog, nextBlobID: catalog.nextBlobID)
    }

    /// The catalog of format 1: ids, counters and names (format 2 adds roots and sizes).
    static func decodeCatalog(_ b: [UInt8], from start: Int, to end: Int) -> Catalog? {
        var r = ByteReader(bytes: b, position: start, end: end)
        var c = Catalog()
        guard let ncid = r.u32(), let niid = r.u32(), let nbid = r.u64(), r.u64() != nil, r.u64() != nil,
              let nc = r.u32(), let ni = r.u32(), Int(nc) <= (end - start) / 30, Int(ni) <= (end - start) / 11 else { return nil }
        c.nextCollectionID = ncid; c.nextIndexID = niid; c.nextBlobID = nbid
        for _ in 0..<nc {
            guard let id = r.u32(), let count = r.u64(), let next = r.u64(), r.u64() != nil, let name = r.name() else { return nil }
            c.collections.append(CollectionInfo(id: id, name: name, count: count, nextRowID: next, liveBytes: 0))
        }
        for _ in 0..<ni {
            guard let id = r.u32(), let coll = r.u32(), let flags = r.u8(), let name = r.name() else { return nil }
            c.indexes.append(IndexInfoRecord(id: id, collection: coll, name: name, unique: flags & 1 != 0))
        }
        guard r.position == end else { return nil }
        return c
    }

    /// Calls `visit` with every entry of a version-1 tree, in key order.
    static func walk(io: any FileHandleIO, root: (offset: UInt64, length: UInt32), limit: UInt64, path: String,
                     depth: Int = 0, _ visit: ([UInt8], [UInt8]) throws -> Void) throws {
        guard depth < 64, root.length >= 12, root.length <= 65536, root.offset >= UInt64(FileHeader.size),
              root.offset <= limit, UInt64(root.length) <= limit - root.offset else {
            throw StoreError.corrupt("a format-1 page pointer (\(root.length) bytes at \(root.offset)) points outside the file", path: path, offset: root.offset)
        }
        let page = try io.read(count: Int(root.length), at: root.offset)
        guard page.count == Int(root.length), page.loadLE32(4) == root.length, page.loadLE32(0) == CRC32C.checksum(page[4...]),
              page[8] == 1 || page[8] == 2 else {
            throw StoreError.corrupt("the format-1 page at byte \(root.offset) fails its checksum or is malformed", path: path, offset: root.offset)
        }
        let isLeaf = page[8] == 1
        let count = Int(page.loadLE16(10))
        let entriesEnd = isLeaf ? page.count : page.count - count * 12
        guard entriesEnd >= 12 else { throw StoreError.corrupt("a malformed format-1 page", path: path, offset: root.offset) }
        var p = 12
        for i in 0..<count {
            guard p + 2 <= entriesEnd else { throw StoreError.corrupt("a malformed format-1 page", path: path, offset: root.offset) }
            let k = Int(page.loadLE16(p))
            guard p + 2 + k <= entriesEnd else { throw StoreError.corrupt("a malformed format-1 page", path: path, offset: root.offset) }
            let key = Array(page[(p + 2)..<(p + 2 + k)])
            p += 2 + k
            if isLeaf {
                guard p + 2 <= entriesEnd, p + 2 + Int(page.loadLE16(p)) <= entriesEnd else {
                    throw StoreError.corrupt("a malformed format-1 page", path: path, offset: root.offset)
                }
                let v = Int(page.loadLE16(p))
                try visit(key, Array(page[(p + 2)..<(p + 2 + v)]))
                p += 2 + v
            } else {
                let ref = entriesEnd + i * 12
                let child = (offset: page.loadLE64(ref), length: page.loadLE32(ref + 8))
                guard child.offset < root.offset else { throw StoreError.corrupt("a format-1 page points forward", path: path, offset: root.offset) }
                try walk(io: io, root: child, limit: limit, path: path, depth: depth + 1, visit)
            }
        }
    }

    /// A version-1 record frame: `[u32 crc][u32 length][u8 kind][u8 key count]` then per key
    /// `[u32 index][u16 length][key]`, then the payload. Returns the keys and the payload.
    static func frame(io: any FileHandleIO, location: [UInt8], limit: UInt64, path: String) throws -> (keys: [IndexKey], payload: [UInt8]) {
        guard location.count == 12 else { throw StoreError.corrupt("a malformed format-1 record location", path: path, offset: nil) }
        let offset = location.loadLE64(0), length = Int(location.loadLE32(8))
        guard length >= 10, offset >= UInt64(FileHeader.size), offset <= limit, UInt64(length) <= limit - offset else {
            throw StoreError.corrupt("a format-1 record pointer points outside the file", path: path, offset: offset)
        }
        let raw = try io.read(count: length, at: offset)
        guard raw.count == length, Int(raw.loadLE32(4)) == length, raw.loadLE32(0) == CRC32C.checksum(raw[4...]) else {
            throw StoreError.corrupt("the format-1 record at byte \(offset) fails its checksum", path: path, offset: offset)
        }
        var keys: [IndexKey] = []
        var p = 10
        for _ in 0..<Int(raw[9]) {
            guard p + 6 <= raw.count, p + 6 + Int(raw.loadLE16(p + 4)) <= raw.count else {
                throw StoreError.corrupt("a malformed format-1 record at byte \(offset)", path: path, offset: offset)
            }
            let n = Int(raw.loadLE16(p + 4))
            keys.append(IndexKey(IndexID(rawValue: raw.loadLE32(p)), Array(raw[(p + 6)..<(p + 6 + n)])))
            p += 6 + n
        }
        return (keys, Array(raw[p...]))
    }
}
