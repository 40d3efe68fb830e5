// What a written page must satisfy before it is read through `PageView` (its layout:
// Page.swift): its checksum, and every length and offset inside it.

extension PageLayout {
    /// Checks a written page's checksum and structure: every length and offset inside it,
    /// children written before it. `offset` is where it lies in the file. After this, reading
    /// it through `PageView` stays inside its bytes.
    static func check(_ base: UnsafeRawPointer, length: Int, offset: UInt64) -> Bool {
        guard length >= minimumSize, length <= maximumSize,
              Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: lengthOffset, as: UInt16.self))) == length else { return false }
        let stored = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: checksumOffset, as: UInt32.self))
        guard stored == checksum(base, length: length) else { return false }
        return checkStructure(base, length: length, offset: offset)
    }

    /// The structural half of `check` (no checksum).
    static func checkStructure(_ base: UnsafeRawPointer, length: Int, offset: UInt64) -> Bool {
        let kind = base.load(fromByteOffset: kindOffset, as: UInt8.self)
        if kind == kindPackedLeaf { return checkPacked(base, length: length) }
        guard kind == kindLeaf || kind == kindBranch else { return false }
        let p = Int(base.load(fromByteOffset: prefixLengthOffset, as: UInt8.self))
        let n = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: countOffset, as: UInt16.self)))
        let cellsStart = headerSize + p + 2 * n
        guard n >= 1, cellsStart <= length else { return false }
        for i in 0..<n {
            var position = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: headerSize + p + 2 * i, as: UInt16.self)))
            guard position >= cellsStart, position < length,
                  let k = Varint.readChecked(base, &position, end: length), p + k <= maximumKeyLength + 16 else { return false }
            if kind == kindLeaf {
                guard let info = Varint.readChecked(base, &position, end: length) else { return false }
                guard k + (info >> 2) <= length - position else { return false }
            } else {
                guard k + childReferenceSize <= length - position else { return false }
                let child = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: position + k, as: UInt64.self))
                // Children are written before their parent: a pointer forward is damage (and
                // would allow a cycle).
                guard child >= UInt64(FileHeader.size), child < offset, child % UInt64(alignment) == 0 else { return false }
            }
        }
        return true
    }

    /// `checkStructure` of a packed leaf: its shape, cells back to back from the slots to the
    /// page's end, each holding its suffix (and varint) and its value.
    private static func checkPacked(_ base: UnsafeRawPointer, length: Int) -> Bool {
        let p = Int(base.load(fromByteOffset: prefixLengthOffset, as: UInt8.self))
        let n = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: countOffset, as: UInt16.self)))
        let slotsStart = headerSize + p + packedExtraHeader
        guard length <= packedMaximumSize, n >= 1, slotsStart + 2 * n <= length else { return false }
        let shape = base.load(fromByteOffset: headerSize + p, as: UInt8.self)
        let w = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: headerSize + p + 1, as: UInt16.self)))
        guard shape <= packedShapeFixedValue, shape != packedShapeVarint || w == 0 else { return false }
        var start = slotsStart + 2 * n
        for i in 0..<n {
            guard Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slotsStart + 2 * i, as: UInt16.self))) & packedMaximumSize == start else { return false }
            let end = i + 1 < n ? Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slotsStart + 2 * i + 2, as: UInt16.self))) & packedMaximumSize : length
            // (A slot may point past the page: the next cell's start bounds this one.)
            guard end >= start, end <= length else { return false }
            // The suffix's length, and the bytes before the value (varint and suffix).
            var k = w
            var used = w
            if shape == packedShapeVarint {
                var position = start
                guard let varint = Varint.readChecked(base, &position, end: end) else { return false }
                k = varint
                used = position - start + varint
            } else if shape == packedShapeFixedValue {
                k = end - start - w
                used = k
            }
            guard k >= 0, used <= end - start, p + k <= maximumKeyLength + 16 else { return false }
            start = end
        }
        return true
    }
}
