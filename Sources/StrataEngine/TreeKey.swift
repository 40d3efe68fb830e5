// How each kind of entry is keyed in the one B-tree (Docs/FileFormat.md, "Tree keys").

enum TreeKey {
    static let rowTag: UInt8 = 0x01
    static let indexTag: UInt8 = 0x02
    static let blobTag: UInt8 = 0x03
    static let metadataTag: UInt8 = 0x04

    /// `[0x01][collection u32 BE][row u64 BE]`, value: record location.
    static func row(_ collection: UInt32, _ row: RowID) -> [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(13)
        k.append(rowTag)
        k.appendBE(collection)
        k.appendBE(row)
        return k
    }

    static func rowPrefix(_ collection: UInt32) -> [UInt8] {
        var k: [UInt8] = [rowTag]
        k.appendBE(collection)
        return k
    }

    /// `[0x02][index u32 BE][key]`, plus `[row u64 BE]` for a non-unique index.
    static func indexEntry(_ index: UInt32, _ key: [UInt8], row: RowID?) -> [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(13 + key.count)
        k.append(indexTag)
        k.appendBE(index)
        k.append(contentsOf: key)
        if let row { k.appendBE(row) }
        return k
    }

    static func indexPrefix(_ index: UInt32) -> [UInt8] {
        var k: [UInt8] = [indexTag]
        k.appendBE(index)
        return k
    }

    /// `[0x03][blob u64 BE]`, value: `[u64 length][u32 crc32c]`.
    static func blob(_ id: UInt64) -> [UInt8] {
        var k: [UInt8] = [blobTag]
        k.appendBE(id)
        return k
    }

    /// `[0x04][name UTF-8]`, value: location of a metadata frame.
    static func metadata(_ name: String) -> [UInt8] {
        [metadataTag] + Array(name.utf8)
    }
}

/// Where a record frame lives: `[u64 offset][u32 length]` little-endian in the leaf.
struct RecordLocation: Hashable {
    var offset: UInt64
    var length: UInt32

    static let encodedSize = 12

    func encode() -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(12)
        b.appendLE(offset)
        b.appendLE(length)
        return b
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> RecordLocation? {
        guard raw.count == encodedSize else { return nil }
        return RecordLocation(offset: raw.loadLE64(0), length: raw.loadLE32(8))
    }
}
