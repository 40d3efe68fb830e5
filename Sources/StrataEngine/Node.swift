// A B-tree node (a "page" once written): entries packed back to back in one byte array.
//
// Leaf entry:   [u16 key length][key][u16 value length][value]
// Branch entry: [u16 key length][key]          (entry 0's key is empty and means "lowest")
// A branch has one child per entry: child i holds the keys in [key i, key i+1).
// Docs/FileFormat.md ("Page") gives the on-disk layout.

/// Where a written page lives in the file.
struct PageRef: Hashable, Sendable {
    var offset: UInt64
    var length: UInt32
}

/// A branch's child: a page on disk, or a node changed in the current write transaction.
enum Child {
    case page(PageRef)
    case node(Node)
}

final class Node: @unchecked Sendable {
    // Clean nodes (decoded from a page) are shared between threads and never mutated:
    // a write transaction copies a node before changing it.
    let isLeaf: Bool
    var data: [UInt8]
    var starts: [Int32]
    var children: [Child]
    /// Where this node was read from, or nil for a node changed in a write transaction.
    var page: PageRef?

    static let headerSize = 12
    static let childRefSize = 12
    /// A node splits when its page would pass this size.
    static let targetPageSize = 4096
    /// The largest page a reader accepts (a node holds at least two maximal entries).
    static let maximumPageSize = 64 * 1024
    static let maximumKeyLength = 2048
    static let maximumValueLength = 255

    static let kindLeaf: UInt8 = 1
    static let kindBranch: UInt8 = 2

    init(isLeaf: Bool, data: [UInt8] = [], starts: [Int32] = [], children: [Child] = [], page: PageRef? = nil) {
        self.isLeaf = isLeaf
        self.data = data
        self.starts = starts
        self.children = children
        self.page = page
    }

    /// A changeable copy of this node.
    func copy() -> Node {
        Node(isLeaf: isLeaf, data: data, starts: starts, children: children, page: nil)
    }

    var count: Int { starts.count }

    /// The size of this node written as a page.
    var pageSize: Int { Node.headerSize + data.count + (isLeaf ? 0 : children.count * Node.childRefSize) }

    @inline(__always) func end(of i: Int) -> Int { i + 1 < starts.count ? Int(starts[i + 1]) : data.count }

    /// Calls `body` with the key bytes of entry `i`.
    @inline(__always)
    func withKey<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try data.withUnsafeBytes { raw in
            let s = Int(starts[i])
            let n = Int(raw.loadLE16(s))
            return try body(UnsafeRawBufferPointer(rebasing: raw[(s + 2)..<(s + 2 + n)]))
        }
    }

    func key(_ i: Int) -> [UInt8] { withKey(i) { Array($0) } }

    /// Calls `body` with the value bytes of leaf entry `i`.
    @inline(__always)
    func withValue<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try data.withUnsafeBytes { raw in
            let s = Int(starts[i])
            let k = Int(raw.loadLE16(s))
            let v = s + 2 + k
            let n = Int(raw.loadLE16(v))
            return try body(UnsafeRawBufferPointer(rebasing: raw[(v + 2)..<(v + 2 + n)]))
        }
    }

    func value(_ i: Int) -> [UInt8] { withValue(i) { Array($0) } }

    /// Binary search. Returns the index of the first entry whose key is >= `key`, and whether it is equal.
    func search(_ key: UnsafeRawBufferPointer) -> (index: Int, found: Bool) {
        // Local copies: one access to each property instead of one per probe.
        let starts = self.starts
        let data = self.data
        var low = 0
        var high = starts.count
        return data.withUnsafeBytes { raw in
            while low < high {
                let mid = (low + high) >> 1
                let s = Int(starts[mid])
                let n = Int(raw.loadLE16(s))
                let c = compareBytes(UnsafeRawBufferPointer(rebasing: raw[(s + 2)..<(s + 2 + n)]), key)
                if c < 0 { low = mid + 1 } else if c > 0 { high = mid } else { return (mid, true) }
            }
            return (low, false)
        }
    }

    /// For a branch: the child whose range holds `key`.
    func childIndex(for key: UnsafeRawBufferPointer) -> Int {
        let (i, found) = search(key)
        if found { return i }
        return Swift.max(0, i - 1)
    }

    // MARK: Changing a node (only nodes of a write transaction)

    func insertEntry(at i: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer?) {
        let size = 2 + key.count + (value.map { 2 + $0.count } ?? 0)
        let position = i < starts.count ? Int(starts[i]) : data.count
        let oldCount = data.count
        // Grow, move the tail up, and write the entry in place (no temporary arrays).
        data.append(contentsOf: repeatElement(0, count: size))
        data.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            if position < oldCount {
                (base + position + size).copyMemory(from: base + position, byteCount: oldCount - position)
            }
            var p = base + position
            p.storeBytes(of: UInt16(key.count).littleEndian, as: UInt16.self)
            p += 2
            if let k = key.baseAddress, key.count > 0 { p.copyMemory(from: k, byteCount: key.count) }
            p += key.count
            if let value {
                p.storeBytes(of: UInt16(value.count).littleEndian, as: UInt16.self)
                p += 2
                if let v = value.baseAddress, value.count > 0 { p.copyMemory(from: v, byteCount: value.count) }
            }
        }
        starts.insert(Int32(position), at: i)
        let delta = Int32(size)
        starts.withUnsafeMutableBufferPointer { s in
            var j = i + 1
            while j < s.count { s[j] += delta; j += 1 }
        }
    }

    func removeEntry(at i: Int) {
        let s = Int(starts[i])
        let e = end(of: i)
        let size = e - s
        let oldCount = data.count
        data.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress, e < oldCount else { return }
            (base + s).copyMemory(from: base + e, byteCount: oldCount - e)
        }
        data.removeLast(size)
        starts.remove(at: i)
        let delta = Int32(size)
        starts.withUnsafeMutableBufferPointer { st in
            var j = i
            while j < st.count { st[j] -= delta; j += 1 }
        }
        if !isLeaf { children.remove(at: i) }
    }

    func replaceValue(at i: Int, with value: UnsafeRawBufferPointer) {
        let s = Int(starts[i])
        let k = Int(data.loadLE16(s))
        let v = s + 2 + k
        if Int(data.loadLE16(v)) == value.count {
            // Same size: overwrite in place.
            data.withUnsafeMutableBytes { raw in
                if let src = value.baseAddress, let base = raw.baseAddress, value.count > 0 {
                    (base + v + 2).copyMemory(from: src, byteCount: value.count)
                }
            }
            return
        }
        let key = withKey(i) { Array($0) }
        removeEntry(at: i)
        key.withUnsafeBytes { insertEntry(at: i, key: $0, value: value) }
    }

    /// Moves the upper half of the entries into a new node; returns it with its first key.
    func splitOff() -> (separator: [UInt8], right: Node) {
        // Split by bytes, not by count, so that both halves fit in a page.
        let half = data.count / 2
        var cut = 1
        while cut < starts.count - 1 && Int(starts[cut]) < half { cut += 1 }
        let base = Int(starts[cut])
        let right = Node(isLeaf: isLeaf)
        right.data = Array(data[base...])
        right.starts = starts[cut...].map { $0 - Int32(base) }
        let separator = key(cut)
        if !isLeaf {
            right.children = Array(children[cut...])
            children.removeSubrange(cut...)
        }
        data.removeSubrange(base...)
        starts.removeSubrange(cut...)
        if !isLeaf {
            // The new branch's first key means "lowest": store it empty.
            right.data.withUnsafeBytes { raw in
                let n = Int(raw.loadLE16(0))
                if n > 0 {
                    right.data.removeSubrange(2..<(2 + n))
                    right.data[0] = 0; right.data[1] = 0
                    for j in 1..<right.starts.count { right.starts[j] -= Int32(n) }
                }
            }
        }
        return (separator, right)
    }

    // MARK: Pages

    /// Encodes the node as a page. Every branch child must already be written.
    func encodePage(childRefs: [PageRef]) -> [UInt8] {
        var page: [UInt8] = []
        page.reserveCapacity(pageSize)
        page.appendLE(UInt32(0))                // checksum, filled below
        page.appendLE(UInt32(0))                // length, filled below
        page.append(isLeaf ? Node.kindLeaf : Node.kindBranch)
        page.append(0)
        page.appendLE(UInt16(starts.count))
        page.append(contentsOf: data)
        if !isLeaf {
            for ref in childRefs {
                page.appendLE(ref.offset)
                page.appendLE(ref.length)
            }
        }
        page.storeLE(UInt32(page.count), at: 4)
        let crc = page.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        page.storeLE(crc, at: 0)
        return page
    }

    /// Decodes and checks a page. Returns nil (never traps) when the bytes are not a valid page.
    static func decode(page bytes: [UInt8], at ref: PageRef) -> Node? {
        guard bytes.count >= headerSize, bytes.count == Int(ref.length) else { return nil }
        return bytes.withUnsafeBytes { raw -> Node? in
            guard raw.loadLE32(4) == UInt32(bytes.count) else { return nil }
            guard raw.loadLE32(0) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4...])) else { return nil }
            let kind = raw[8]
            guard kind == kindLeaf || kind == kindBranch else { return nil }
            let isLeaf = kind == kindLeaf
            let count = Int(raw.loadLE16(10))
            let entriesEnd = isLeaf ? raw.count : raw.count - count * childRefSize
            guard entriesEnd >= headerSize else { return nil }
            var starts: [Int32] = []
            starts.reserveCapacity(count)
            var p = headerSize
            for _ in 0..<count {
                guard p + 2 <= entriesEnd else { return nil }
                starts.append(Int32(p - headerSize))
                let k = Int(raw.loadLE16(p))
                p += 2 + k
                if isLeaf {
                    guard p + 2 <= entriesEnd else { return nil }
                    let v = Int(raw.loadLE16(p))
                    p += 2 + v
                }
                guard p <= entriesEnd else { return nil }
            }
            guard p == entriesEnd else { return nil }
            var children: [Child] = []
            if !isLeaf {
                guard count > 0 else { return nil }
                children.reserveCapacity(count)
                for i in 0..<count {
                    let base = entriesEnd + i * childRefSize
                    let child = PageRef(offset: raw.loadLE64(base), length: raw.loadLE32(base + 8))
                    // Children are written before their parent: a pointer forward is damage.
                    guard child.offset < ref.offset else { return nil }
                    children.append(.page(child))
                }
            }
            let data = Array(raw[headerSize..<entriesEnd])
            return Node(isLeaf: isLeaf, data: data, starts: starts, children: children, page: ref)
        }
    }
}
