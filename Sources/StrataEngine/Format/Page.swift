// A page of the B+tree, read in place: in the mapped file (a written page) or in the buffer
// of a node a write transaction changes (a dirty page, the same layout with room to grow).
//
//   0      u32  checksum: low 32 bits of XXH64 of bytes 4..<length (0 in a dirty page)
//   4      u16  length of the page
//   6      u8   kind: 1 leaf, 2 branch, 3 packed leaf
//   7      u8   p, length of the prefix every key of the page starts with
//   8      u16  n, number of cells (at least 1)
//   10     p    the prefix
//   10+p   2n   slots: u16 offset of each cell from the page's start, in key order
//   ...         cells, anywhere after the slots
//
// Leaf cell:   varint k (suffix length), varint (value length << 2 | flags), suffix, value
// Packed leaf: after the prefix, u8 shape and u16 w; each slot's low 14 bits are its cell's
//              offset, its top 2 bits the value's flags; cells lie back to back in slot order,
//              the last one ending at the page's length, so a cell's length says where it ends.
//              Shape 0: varint k, suffix, value; shape 1: every suffix is w bytes; shape 2:
//              every value is w bytes (then the suffix is the rest). A compacted index or row
//              leaf then spends 2 bytes a cell on its slot and nothing else.
// Branch cell: varint k, suffix, u64 LE child page offset
// A key is the prefix followed by its cell's suffix. In a branch, child i holds the keys in
// [key i, key i+1); key 0 is not compared (it means "lowest") and is written empty, and the
// prefix is the common prefix of keys 1..<n. Docs/FileFormat.md ("Page") gives examples.

enum PageLayout {
    static let headerSize = 10
    /// Where each header field lies (the table above): `PageHeaderWriter` writes them,
    /// `PageView` reads them.
    static let checksumOffset = 0
    static let lengthOffset = 4
    static let kindOffset = 6
    static let prefixLengthOffset = 7
    static let countOffset = 8
    /// Pages are at least this long (padded with zeros).
    static let minimumSize = 16
    /// Every page and value frame starts at a multiple of this in the file (zeros before it),
    /// so that one bit per 16 bytes can say which were checked (`VerifiedPages`), and a
    /// pointer into the middle of a checked page is refused at once.
    static let alignment = 16
    static let maximumSize = 65_535
    static let kindLeaf: UInt8 = 1
    static let kindBranch: UInt8 = 2
    static let kindPackedLeaf: UInt8 = 3
    /// A packed leaf's shape, u8 at `headerSize + p`, then its u16 `w`.
    static let packedShapeVarint: UInt8 = 0
    static let packedShapeFixedSuffix: UInt8 = 1
    static let packedShapeFixedValue: UInt8 = 2
    static let packedExtraHeader = 3
    /// A packed leaf's slots keep offsets in 14 bits: it is at most this long.
    static let packedMaximumSize = 0x3FFF
    /// A node splits when its page would pass this size: rows and the system tree.
    static let targetSize = 4096
    /// The same for index trees: their cells are small, and a commit that adds a row rewrites
    /// one leaf of each index, so smaller leaves mean fewer bytes per commit (and, with as
    /// many levels at a million entries, no more page reads per lookup).
    static let indexTargetSize = 2048

    static func targetSize(of tree: TreeID) -> Int {
        if case .index = tree { return indexTargetSize }
        return targetSize
    }
    static let childReferenceSize = 8
    /// The most bytes a leaf keeps a value in; longer values go to value frames.
    static let inlineValueLimit = 1024
    /// The longest tree key a writer makes: an index key and its row suffix.
    static let maximumKeyLength = 2048
    /// The longest index key `put` takes: with a non-unique entry's row suffix it is at most
    /// `maximumKeyLength`. (Index keys of any length have a stored form this long at most,
    /// `KeyEncoding.storedForm`.)
    static let maximumIndexKeyLength = maximumKeyLength - TreeKey.maximumRowSuffix
}

extension PageLayout {
    /// The checksum of a page of `length` bytes at `base`: what its first 4 bytes hold once it
    /// is written (the low 32 bits of XXH64 of the bytes after them).
    @inline(__always)
    static func checksum(_ base: UnsafeRawPointer, length: Int) -> UInt32 {
        Checksum.short(UnsafeRawBufferPointer(start: base + 4, count: length - 4))
    }

    /// A page of `length` bytes, written where it will lie: `write` sets every byte after the
    /// checksum (its header through `PageHeaderWriter`), then the checksum is stamped.
    @inline(__always)
    static func makePage(length: Int, _ write: (UnsafeMutableRawPointer) -> Void) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: length) { raw, initialized in
            // (Never nil: a page has at least `minimumSize` bytes.)
            guard let start = raw.baseAddress else { return }
            let base = UnsafeMutableRawPointer(start)
            write(base)
            PageHeaderWriter(base).stampChecksum(length: length)
            initialized = length
        }
    }

    /// Pads a page to the minimum size and sets its length and checksum.
    static func seal(_ page: inout [UInt8]) {
        if page.count < minimumSize { page.append(contentsOf: repeatElement(0, count: minimumSize - page.count)) }
        let length = page.count
        page.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            let header = PageHeaderWriter(base)
            header.setLength(length)
            header.stampChecksum(length: length)
        }
    }
}

/// Writes the header fields of a page, or of a node's buffer (the same layout), by name: with
/// `PageView`, which reads them, the one place that knows their offsets and widths. A page's
/// checksum is set here only (`stampChecksum`).
struct PageHeaderWriter {
    let base: UnsafeMutableRawPointer

    @inline(__always) init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// A fresh header: every field 0 (a dirty page's checksum is 0, and it has no cells and no
    /// prefix yet), then its kind.
    @inline(__always) func start(kind: UInt8) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.headerSize)
        setKind(kind)
    }

    /// The page's length in bytes (at most `PageLayout.maximumSize`).
    @inline(__always) func setLength(_ length: Int) {
        base.storeBytes(of: UInt16(length).littleEndian, toByteOffset: PageLayout.lengthOffset, as: UInt16.self)
    }

    /// `PageLayout.kindLeaf`, `kindBranch` or `kindPackedLeaf`.
    @inline(__always) func setKind(_ kind: UInt8) {
        base.storeBytes(of: kind, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
    }

    /// The length of the prefix every key of the page starts with (at most 255).
    @inline(__always) func setPrefixLength(_ length: Int) {
        base.storeBytes(of: UInt8(length), toByteOffset: PageLayout.prefixLengthOffset, as: UInt8.self)
    }

    /// The number of cells.
    @inline(__always) func setCount(_ count: Int) {
        base.storeBytes(of: UInt16(count).littleEndian, toByteOffset: PageLayout.countOffset, as: UInt16.self)
    }

    /// A checksum of 0: a page copied into a node, whose bytes will change, is dirty.
    @inline(__always) func clearChecksum() {
        base.storeBytes(of: UInt32(0), toByteOffset: PageLayout.checksumOffset, as: UInt32.self)
    }

    /// Sets the checksum of the page's `length` bytes, once every other byte is written.
    @inline(__always) func stampChecksum(length: Int) {
        let sum = PageLayout.checksum(UnsafeRawPointer(base), length: length)
        base.storeBytes(of: sum.littleEndian, toByteOffset: PageLayout.checksumOffset, as: UInt32.self)
    }
}

/// Unsigned LEB128 varints (7 bits a byte, low first), as cells use them.
enum Varint {
    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always)
    static func write(_ value: UInt64, to p: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n += 1
        }
        p.storeBytes(of: UInt8(v), toByteOffset: n, as: UInt8.self)
        return n + 1
    }

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 { bytes.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }

    /// Reads a varint that is known to be well formed (a checked page).
    @inline(__always)
    static func read(_ p: UnsafeRawPointer, _ position: inout Int) -> Int {
        let first = p.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        if first < 0x80 { return Int(first) }
        var value = Int(first & 0x7F)
        var shift = 7
        while true {
            let byte = p.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// Reads a varint before `end`, of at most `maximumBytes`; nil when it does not fit.
    static func readChecked(_ p: UnsafeRawPointer, _ position: inout Int, end: Int, maximumBytes: Int = 5) -> Int? {
        var value = 0
        var shift = 0
        for _ in 0..<maximumBytes {
            guard position < end else { return nil }
            let byte = p.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// Reads a varint of up to 64 bits from bytes; nil when malformed.
    static func decode(_ raw: UnsafeRawBufferPointer) -> (value: UInt64, size: Int)? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for (i, byte) in raw.enumerated() {
            guard i < 10 else { return nil }
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, i + 1) }
            shift += 7
        }
        return nil
    }
}

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
        Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slotsStart + 2 * i, as: UInt16.self)))
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
        var low = low, high = high
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(suffix(mid), wanted)
            if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
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
        var x: UInt64 = 0
        for i in 0..<bytes.count { x |= UInt64(bytes[i]) << (56 - 8 * i) }
        return x
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
