// Reading a page where it lies (its layout: Page.swift).

/// A checked page (or a dirty node's buffer), read where it lies.
struct PageView {
    let base: UnsafeRawPointer
    let isLeaf: Bool
    let count: Int
    let prefixLength: Int
    /// A packed leaf (kind 3), its shape and `w`.
    let isPacked: Bool
    let shape: UInt8
    let width: Int
    /// Where the slots start.
    let slotsStart: Int

    /// A view of a page whose structure has been checked (`PageLayout.check`), or of a node.
    @inline(__always)
    init(_ base: UnsafeRawPointer) {
        self.base = base
        let kind = base.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)
        isLeaf = kind != PageLayout.kindBranch
        count = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.countOffset, as: UInt16.self)))
        let p = Int(base.load(fromByteOffset: PageLayout.prefixLengthOffset, as: UInt8.self))
        prefixLength = p
        isPacked = kind == PageLayout.kindPackedLeaf
        if isPacked {
            shape = base.load(fromByteOffset: PageLayout.headerSize + p, as: UInt8.self)
            width = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.headerSize + p + 1, as: UInt16.self)))
            slotsStart = PageLayout.headerSize + p + PageLayout.packedExtraHeader
        } else {
            shape = 0
            width = 0
            slotsStart = PageLayout.headerSize + p
        }
    }

    var length: Int { Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.lengthOffset, as: UInt16.self))) }

    /// About the bytes a node copied from this page takes (`Node.encodedSize`): its length
    /// with the prefix put back into every key, and a packed leaf's lengths written out.
    var nodeSizeEstimate: Int { length + (prefixLength + (isPacked ? 3 : 0)) * count }

    @inline(__always) var prefix: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + PageLayout.headerSize, count: prefixLength)
    }

    @inline(__always) private func rawSlot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slotsStart &+ 2 &* i, as: UInt16.self)))
    }

    /// The offset of cell `i` from the page's start.
    @inline(__always) func slot(_ i: Int) -> Int {
        isPacked ? rawSlot(i) & PageLayout.packedMaximumSize : rawSlot(i)
    }

    /// Cell `i` of a packed leaf: where its suffix starts and ends, where its value ends.
    @inline(__always)
    private func packedCell(_ i: Int) -> (start: Int, suffixEnd: Int, end: Int, flags: UInt8) {
        let raw = rawSlot(i)
        var start = raw & PageLayout.packedMaximumSize
        let end = i + 1 < count ? rawSlot(i + 1) & PageLayout.packedMaximumSize : length
        let suffixEnd: Int
        switch shape {
        case PageLayout.packedShapeFixedSuffix: suffixEnd = start + width
        case PageLayout.packedShapeFixedValue: suffixEnd = end - width
        default:
            let k = Varint.read(base, &start)
            suffixEnd = start + k
        }
        return (start, suffixEnd, end, UInt8(truncatingIfNeeded: raw >> 14))
    }

    /// Cell `i` of a packed leaf whose suffixes are all `width` bytes: where it starts (its
    /// suffix), where it ends (its value), and its value's flags. The page's check bounded both.
    @inline(__always)
    func fixedSuffixCell(_ i: Int) -> (start: Int, end: Int, flags: UInt8) {
        let raw = rawSlot(i)
        let end = i &+ 1 < count ? rawSlot(i &+ 1) & PageLayout.packedMaximumSize : length
        return (raw & PageLayout.packedMaximumSize, end, UInt8(truncatingIfNeeded: raw >> 14))
    }

    /// Cell `i` of a leaf: its key suffix, its value and the value's flags.
    @inline(__always)
    func leafCell(_ i: Int) -> (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        if isPacked {
            let c = packedCell(i)
            return (UnsafeRawBufferPointer(start: base + c.start, count: c.suffixEnd - c.start),
                    UnsafeRawBufferPointer(start: base + c.suffixEnd, count: c.end - c.suffixEnd), c.flags)
        }
        var p = slot(i)
        let k = Varint.read(base, &p)
        let info = Varint.read(base, &p)
        let suffix = UnsafeRawBufferPointer(start: base + p, count: k)
        return (suffix, UnsafeRawBufferPointer(start: base + p + k, count: info >> 2), UInt8(info & 3))
    }

    /// Cell `i` of a branch: its key suffix and its child's page offset.
    @inline(__always)
    func branchCell(_ i: Int) -> (suffix: UnsafeRawBufferPointer, child: UInt64) {
        var p = slot(i)
        let k = Varint.read(base, &p)
        return (UnsafeRawBufferPointer(start: base + p, count: k), UInt64(littleEndian: base.loadUnaligned(fromByteOffset: p + k, as: UInt64.self)))
    }

    @inline(__always)
    func suffix(_ i: Int) -> UnsafeRawBufferPointer {
        if isPacked {
            // Every suffix `w` bytes (row leaves, unique indexes): no other slot to read.
            if shape == PageLayout.packedShapeFixedSuffix {
                return UnsafeRawBufferPointer(start: base + (rawSlot(i) & PageLayout.packedMaximumSize), count: width)
            }
            let c = packedCell(i)
            return UnsafeRawBufferPointer(start: base + c.start, count: c.suffixEnd - c.start)
        }
        var p = slot(i)
        let k = Varint.read(base, &p)
        if isLeaf { _ = Varint.read(base, &p) }
        return UnsafeRawBufferPointer(start: base + p, count: k)
    }

    /// Appends the whole key of cell `i` (prefix and suffix) to `key`.
    /// (As typed buffers, so that the appends are copies of memory, not byte-by-byte loops.)
    @inline(__always)
    func appendKey(_ i: Int, to key: inout [UInt8]) {
        if prefixLength > 0 { key.append(contentsOf: prefix.assumingMemoryBound(to: UInt8.self)) }
        key.append(contentsOf: suffix(i).assumingMemoryBound(to: UInt8.self))
    }

    func key(_ i: Int) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(prefixLength + 16)
        appendKey(i, to: &key)
        return key
    }

    /// How `key` compares with the prefix: -1 below every key of the page, 1 above every key,
    /// 0 when it starts with the prefix (then compare its suffix, `key[prefixLength...]`).
    @inline(__always)
    func compareWithPrefix(_ key: UnsafeRawBufferPointer) -> Int {
        guard prefixLength > 0 else { return 0 }
        let n = Swift.min(key.count, prefixLength)
        let c = compareBytes(UnsafeRawBufferPointer(rebasing: key[0..<n]), UnsafeRawBufferPointer(start: base + PageLayout.headerSize, count: n))
        if c != 0 { return c }
        return key.count < prefixLength ? -1 : 0
    }

    /// In a leaf: the first cell whose key is >= `key`, and whether it is equal.
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        switch compareWithPrefix(key) {
        case -1: return (0, false)
        case 1: return (count, false)
        default: break
        }
        let wanted = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
        var low = 0
        var high = count
        // Dense keys (row ids, which a table hands out one after another): the key `d` above
        // the first cell's is at cell `d` when no key between them is missing, and never
        // after it. One probe there finds it or narrows the search; a binary search over a
        // row leaf touched a cache line per probe, nearly all of a point fetch's misses.
        if count > 4, let d = Self.denseDistance(suffix(0), wanted), d < count {
            let c = compareBytes(suffix(d), wanted)
            if c == 0 { return (d, true) }
            if c > 0 { high = d } else { low = d + 1 }
        }
        return binarySearch(wanted, low, high)
    }

    /// `search(_:)` for a key known to lie above every cell before `start` (the next key of a
    /// run in ascending order, after the previous one's cell): probes cells `start`,
    /// `start + 1`, `start + 3`, ... until one is not below the key, then searches between
    /// the last two probes. A run's next key is usually a few cells on.
    @inline(__always)
    func search(_ key: UnsafeRawBufferPointer, from start: Int) -> (index: Int, found: Bool) {
        switch compareWithPrefix(key) {
        case -1: return (0, false)
        case 1: return (count, false)
        default: break
        }
        let wanted = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
        var low = Swift.min(Swift.max(start, 0), count)
        var high = count
        var step = 1
        while low < high {
            let probe = Swift.min(low + step - 1, high - 1)
            let c = compareBytes(suffix(probe), wanted)
            if c == 0 { return (probe, true) }
            if c > 0 { high = probe; break }
            low = probe + 1
            step <<= 1
        }
        return binarySearch(wanted, low, high)
    }

    /// The first of cells `low..<high` whose suffix is >= `wanted`, and whether it is equal
    /// (every cell before `low` is below it, every cell from `high` on above it).
    @inline(__always)
    private func binarySearch(_ wanted: UnsafeRawBufferPointer, _ low: Int, _ high: Int) -> (index: Int, found: Bool) {
        if isPacked && shape == PageLayout.packedShapeFixedSuffix { return fixedSuffixSearch(wanted, low, high) }
        var low = low, high = high
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(suffix(mid), wanted)
            if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// `binarySearch` in a packed leaf whose suffixes are all `width` bytes (row leaves, unique
    /// indexes): each probe reads its slot and compares in place, where the general one asks
    /// the page's shape at every probe (a unique index's lookup, W3: about 50 instructions a
    /// probe, 7 probes a leaf).
    private func fixedSuffixSearch(_ wanted: UnsafeRawBufferPointer, _ low: Int, _ high: Int) -> (index: Int, found: Bool) {
        var low = low, high = high
        let w = width, slots = base + slotsStart
        while low < high {
            let mid = (low &+ high) >> 1
            let offset = Int(UInt16(littleEndian: slots.loadUnaligned(fromByteOffset: 2 &* mid, as: UInt16.self))) & PageLayout.packedMaximumSize
            let c = compareBytes(UnsafeRawBufferPointer(start: base + offset, count: w), wanted)
            if c < 0 { low = mid &+ 1 } else if c > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
    }

    /// Where `wanted` would be among cells `first...last` if keys were spread evenly between
    /// theirs (by their first 8 bytes); nil when it is not strictly between them.
    @inline(__always)
    private func interpolated(_ wanted: UnsafeRawBufferPointer, from first: Int, to last: Int) -> Int? {
        let a = Self.leadingBytes(suffix(first)), b = Self.leadingBytes(suffix(last)), w = Self.leadingBytes(wanted)
        guard a < w, w < b else { return nil }
        let g = first + Int(Double(w - a) / Double(b - a) * Double(last - first))
        return Swift.min(Swift.max(g, first), last)
    }

    /// The first 8 bytes of `bytes` as a big-endian integer (zeros after a shorter one): keys
    /// in this order compare as their bytes do, up to their first 8.
    @inline(__always)
    static func leadingBytes(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        if bytes.count >= 8 { return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)) }
        guard let p = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return tailWord(p, bytes.count)
    }

    /// `b - a` for two suffixes of the same length (1 to 8 bytes) read as big-endian
    /// integers, when `b >= a`; nil otherwise.
    @inline(__always)
    static func denseDistance(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int? {
        let n = a.count
        guard n == b.count, n > 0, n <= 8 else { return nil }
        var x: UInt64 = 0, y: UInt64 = 0
        for i in 0..<n {
            x = x << 8 | UInt64(a[i])
            y = y << 8 | UInt64(b[i])
        }
        guard y >= x, y - x < UInt64(Int.max) else { return nil }
        return Int(y - x)
    }

    /// In a branch: the child whose range holds `key`.
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        switch compareWithPrefix(key) {
        case -1: return 0
        case 1: return count - 1
        default: break
        }
        let wanted = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
        // The last cell in 1..<count whose key is <= key, or 0. (Cells 1..<low are <= key,
        // cells high..<count above it.)
        var low = 1
        var high = count
        // Keys spread evenly (row ids, random UUIDs): where the key falls between the first and
        // last separators says nearly which child holds it. Two probes there and beside it
        // narrow the search to the child, or at least to a side; a binary search over a page
        // of a few hundred separators touched a cache line for each of its first probes.
        if count > 8, let g = interpolated(wanted, from: 1, to: count - 1) {
            if compareBytes(suffix(g), wanted) <= 0 {
                low = g + 1
                if low < high, compareBytes(suffix(low), wanted) > 0 { high = low }
            } else {
                high = g
                if g - 1 >= low, compareBytes(suffix(g - 1), wanted) <= 0 { low = g }
            }
        }
        while low < high {
            let mid = (low + high) >> 1
            if compareBytes(suffix(mid), wanted) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }

    @inline(__always) func child(_ i: Int) -> UInt64 { branchCell(i).child }
}
