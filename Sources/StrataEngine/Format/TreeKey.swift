// How each tree keys its entries, and what their values hold (Docs/FileFormat.md, "Trees").

enum TreeKey {
    /// A row tree's key: the row id, 8 bytes big-endian, so that byte order is row order.
    @inline(__always)
    static func withRow<R>(_ row: RowID, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: row.bigEndian, body)
    }

    /// A non-unique index's key: the index key, then the row (`appendRow`).
    static func entry(_ key: [UInt8], row: RowID) -> [UInt8] {
        var k: [UInt8] = []
        k.reserveCapacity(key.count + maximumRowSuffix)
        k.append(contentsOf: key)
        appendRow(row, to: &k)
        return k
    }

    /// The longest row suffix of a non-unique index entry.
    static let maximumRowSuffix = 10

    /// Writes what `appendRow` appends at `p`; returns its length (at most `maximumRowSuffix`).
    @inline(__always)
    static func writeRow(_ row: RowID, to p: UnsafeMutableRawPointer) -> Int {
        let n = Swift.max(1, (64 - row.leadingZeroBitCount + 7) / 8)
        p.storeBytes(of: UInt8(n), as: UInt8.self)
        for i in 0..<n { p.storeBytes(of: UInt8(truncatingIfNeeded: row >> UInt64(8 * (n - 1 - i))), toByteOffset: 1 + i, as: UInt8.self) }
        p.storeBytes(of: UInt8(n), toByteOffset: n + 1, as: UInt8.self)
        return n + 2
    }

    /// Appends the row of a non-unique index entry: `[n][row, n bytes big-endian][n]`, with n
    /// (1...8) the fewest bytes that hold the row. Byte order is then (index key, row) order
    /// (a shorter row is a smaller one), and the last byte says where the index key ends.
    @inline(__always)
    static func appendRow(_ row: RowID, to k: inout [UInt8]) {
        let n = Swift.max(1, (64 - row.leadingZeroBitCount + 7) / 8)
        k.append(UInt8(n))
        var shift = 8 * (n - 1)
        while shift >= 0 {
            k.append(UInt8(truncatingIfNeeded: row >> UInt64(shift)))
            shift -= 8
        }
        k.append(UInt8(n))
    }

    /// The length of the index key at the start of a non-unique entry's key, and the row at
    /// its end; nil when the row suffix is malformed (or not the shortest form).
    @inline(__always)
    static func splitEntry(_ key: UnsafeRawBufferPointer) -> (keyLength: Int, row: RowID)? {
        guard let last = key.last, last >= 1, last <= 8, key.count >= Int(last) + 2 else { return nil }
        let n = Int(last)
        let start = key.count - n - 2
        guard key[start] == last, n == 1 || key[start + 1] != 0 else { return nil }
        var row: UInt64 = 0
        for i in 0..<n { row = row << 8 | UInt64(key[start + 1 + i]) }
        return (start, row)
    }

    static let blobTag: UInt8 = 0x03
    static let metadataTag: UInt8 = 0x04

    /// The system tree's key of a blob: `[0x03][blob id u64 BE]`.
    static func blob(_ id: UInt64) -> [UInt8] {
        var k: [UInt8] = [blobTag]
        k.appendBE(id)
        return k
    }

    /// The system tree's key of a metadata value: `[0x04][name UTF-8]`.
    static func metadata(_ name: String) -> [UInt8] {
        [metadataTag] + Array(name.utf8)
    }
}

/// The flags of a leaf cell's value (two bits, Docs/FileFormat.md, "Trees").
enum ValueFlags {
    /// The value is a 12-byte `ValueLocation` of a value frame, not the bytes themselves.
    static let inFrame: UInt8 = 1
    /// A row's value starts with the 4-byte digest of its index keys.
    static let keysDigest: UInt8 = 2
}

/// A short digest of a row's index keys, kept beside the row so that an update or delete can
/// check the previous keys it is given (`.indexKeyMismatch`). Order does not matter: the
/// XOR of each (index id, key)'s XXH64, folded to 32 bits; 0 for no keys (a row whose digest
/// is 0 keeps none). XOR makes it easy to take one key out (`dropIndex`).
enum KeysDigest {
    static func of(_ keys: [IndexKey]) -> UInt32 {
        var digest: UInt64 = 0
        for k in keys {
            let n = Swift.min(k.key.count, PageLayout.maximumKeyLength)
            // Sized to the key: a short key's scratch is on the stack (one the size of the
            // longest key was a heap allocation per row).
            withUnsafeTemporaryAllocation(byteCount: 4 + n, alignment: 8) { scratch in
                let base = scratch.baseAddress!
                base.storeBytes(of: k.index.rawValue.littleEndian, as: UInt32.self)
                k.key.withUnsafeBytes { if n > 0 { (base + 4).copyMemory(from: $0.baseAddress!, byteCount: n) } }
                digest ^= Checksum.hash(UnsafeRawBufferPointer(start: base, count: 4 + n))
            }
        }
        return UInt32(truncatingIfNeeded: digest) ^ UInt32(truncatingIfNeeded: digest >> 32)
    }
}

/// A row's value in its leaf: `[u32 keys digest, when flagged][record bytes or value location]`.
struct RowValue {
    let digest: UInt32?
    /// The record bytes (inline), or nil when they are in a value frame.
    let inline: UnsafeRawBufferPointer?
    let frame: ValueLocation?

    /// Reads a row's value; nil when it is malformed.
    @inline(__always)
    static func decode(_ value: UnsafeRawBufferPointer, flags: UInt8) -> RowValue? {
        var rest = value
        var digest: UInt32?
        if flags & ValueFlags.keysDigest != 0 {
            guard value.count >= 4 else { return nil }
            digest = value.loadLE32(0)
            rest = UnsafeRawBufferPointer(rebasing: value[4...])
        }
        if flags & ValueFlags.inFrame != 0 {
            guard let location = ValueLocation.decode(rest) else { return nil }
            return RowValue(digest: digest, inline: nil, frame: location)
        }
        return RowValue(digest: digest, inline: rest, frame: nil)
    }
}
