// A page of the B+tree, read in place: in the mapped file (a written page) or in the buffer
// of a node a write transaction changes (a dirty page, the same layout with room to grow).
//
//   0      u32  checksum: low 32 bits of XXH64 of bytes 4..<length (0 in a dirty page)
//   4      u16  length of the page
//   6      u8   kind: 1 leaf, 2 branch
//   7      u8   p, length of the prefix every key of the page starts with
//   8      u16  n, number of cells (at least 1)
//   10     p    the prefix
//   10+p   2n   slots: u16 offset of each cell from the page's start, in key order
//   ...         cells, anywhere after the slots
//
// Leaf cell:   varint k (suffix length), varint (value length << 2 | flags), suffix, value
// Branch cell: varint k, suffix, u64 LE child page offset
// A key is the prefix followed by its cell's suffix. In a branch, child i holds the keys in
// [key i, key i+1); key 0 is not compared (it means "lowest") and is written empty, and the
// prefix is the common prefix of keys 1..<n. Docs/FileFormat.md ("Page") gives examples.

enum PageLayout {
    static let headerSize = 10
    /// Pages are at least this long (padded with zeros).
    static let minimumSize = 16
    /// Every page and value frame starts at a multiple of this in the file (zeros before it),
    /// so that one bit per 16 bytes can say which were checked (`VerifiedPages`), and a
    /// pointer into the middle of a checked page is refused at once.
    static let alignment = 16
    static let maximumSize = 65_535
    static let kindLeaf: UInt8 = 1
    static let kindBranch: UInt8 = 2
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
    static let maximumKeyLength = 2048
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

    /// A view of a page whose structure has been checked (`PageLayout.check`), or of a node.
    @inline(__always)
    init(_ base: UnsafeRawPointer) {
        self.base = base
        isLeaf = base.load(fromByteOffset: 6, as: UInt8.self) == PageLayout.kindLeaf
        count = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
        prefixLength = Int(base.load(fromByteOffset: 7, as: UInt8.self))
    }

    var length: Int { Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) }

    @inline(__always) var prefix: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: base + PageLayout.headerSize, count: prefixLength)
    }

    @inline(__always) func slot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: PageLayout.headerSize + prefixLength + 2 * i, as: UInt16.self)))
    }

    /// Cell `i` of a leaf: its key suffix, its value and the value's flags.
    @inline(__always)
    func leafCell(_ i: Int) -> (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
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
        while low < high {
            let mid = (low + high) >> 1
            let c = compareBytes(suffix(mid), wanted)
            if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
        }
        return (low, false)
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
        // The last cell in 1..<count whose key is <= key, or 0.
        var low = 1
        var high = count
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
              Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 4, as: UInt16.self))) == length else { return false }
        let stored = UInt32(littleEndian: base.loadUnaligned(as: UInt32.self))
        guard stored == Checksum.short(UnsafeRawBufferPointer(start: base + 4, count: length - 4)) else { return false }
        return checkStructure(base, length: length, offset: offset)
    }

    /// The structural half of `check` (no checksum).
    static func checkStructure(_ base: UnsafeRawPointer, length: Int, offset: UInt64) -> Bool {
        let kind = base.load(fromByteOffset: 6, as: UInt8.self)
        guard kind == kindLeaf || kind == kindBranch else { return false }
        let p = Int(base.load(fromByteOffset: 7, as: UInt8.self))
        let n = Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))
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
}
