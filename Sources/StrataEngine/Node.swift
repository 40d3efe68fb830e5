// A node that a write transaction changes: a page in memory, in the page layout (Page.swift)
// with the prefix left empty and room to grow between the slots and the cells. Reads use
// `PageView` on it exactly as on a written page; `encode` writes it as a compact page with its
// keys' common prefix taken out.
//
// Cells are added at the low end of the cell area, which grows down from the end of the
// buffer; a removed or replaced cell's bytes stay as garbage until the node runs out of room
// and compacts.

/// The bytes of the nodes a write transaction holds, so that it can write them out when
/// they pass its budget.
final class DirtyBudget {
    var bytes = 0
    let limit: Int
    init(limit: Int) { self.limit = limit }
    var isExceeded: Bool { bytes > limit }
}

final class Node {
    let isLeaf: Bool
    private(set) var buffer: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0
    /// The lowest byte of the cell area.
    private var cellsStart: Int
    private var garbage = 0
    /// The size of the page this node would encode to, before prefix compression.
    private(set) var encodedSize = PageLayout.headerSize
    /// For a branch: child i when it is changed in this transaction; nil when it is the
    /// written page named in cell i.
    var children: [Node?] = []
    private let budget: DirtyBudget

    static let initialCapacity = 8192

    init(isLeaf: Bool, budget: DirtyBudget, capacity: Int = Node.initialCapacity) {
        self.isLeaf = isLeaf
        self.budget = budget
        self.capacity = capacity
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        cellsStart = capacity
        buffer.storeBytes(of: UInt32(0), as: UInt32.self)
        buffer.storeBytes(of: UInt16(0), toByteOffset: 4, as: UInt16.self)
        buffer.storeBytes(of: isLeaf ? PageLayout.kindLeaf : PageLayout.kindBranch, toByteOffset: 6, as: UInt8.self)
        buffer.storeBytes(of: UInt8(0), toByteOffset: 7, as: UInt8.self)
        setCount(0)
        budget.bytes += capacity
    }

    /// The most bytes a copied page may take once its prefix is put back into every key.
    static let largestCopy = 32 * 1024

    /// A changeable copy of a written page (its prefix put back into every key); nil when
    /// that would not fit a node (a page no writer makes).
    convenience init?(copying page: PageView, budget: DirtyBudget) {
        let expanded = page.length + page.prefixLength * page.count
        guard expanded <= Node.largestCopy else { return nil }
        self.init(isLeaf: page.isLeaf, budget: budget, capacity: Swift.max(Node.initialCapacity, 2 * expanded))
        let prefix = page.prefix
        withUnsafeTemporaryAllocation(byteCount: PageLayout.maximumKeyLength + 64, alignment: 8) { scratch in
            for i in 0..<page.count {
                if isLeaf {
                    let cell = page.leafCell(i)
                    let key = Node.join(prefix, cell.suffix, into: scratch)
                    appendLeafCell(key: key, value: cell.value, flags: cell.flags)
                } else {
                    let cell = page.branchCell(i)
                    let key = i == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : Node.join(prefix, cell.suffix, into: scratch)
                    insertBranchCell(at: count, key: key, child: cell.child)
                }
            }
        }
    }

    deinit {
        budget.bytes -= capacity
        buffer.deallocate()
    }

    private static func join(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, into scratch: UnsafeMutableRawBufferPointer) -> UnsafeRawBufferPointer {
        let base = scratch.baseAddress!
        if a.count > 0 { base.copyMemory(from: a.baseAddress!, byteCount: a.count) }
        if b.count > 0 { (base + a.count).copyMemory(from: b.baseAddress!, byteCount: b.count) }
        return UnsafeRawBufferPointer(start: base, count: a.count + b.count)
    }

    @inline(__always) var view: PageView { PageView(UnsafeRawPointer(buffer)) }

    private func setCount(_ n: Int) {
        count = n
        buffer.storeBytes(of: UInt16(n).littleEndian, toByteOffset: 8, as: UInt16.self)
    }

    private var slotsEnd: Int { PageLayout.headerSize + 2 * count }

    @inline(__always) private func slot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: PageLayout.headerSize + 2 * i, as: UInt16.self)))
    }

    @inline(__always) private func setSlot(_ i: Int, _ position: Int) {
        buffer.storeBytes(of: UInt16(position).littleEndian, toByteOffset: PageLayout.headerSize + 2 * i, as: UInt16.self)
    }

    /// The size of cell `i` in bytes.
    private func cellSize(_ i: Int) -> Int {
        var p = slot(i)
        let start = p
        let k = Varint.read(buffer, &p)
        if isLeaf {
            let info = Varint.read(buffer, &p)
            return p - start + k + (info >> 2)
        }
        return p - start + k + PageLayout.childReferenceSize
    }

    static func leafCellSize(key: Int, value: Int) -> Int {
        Varint.size(UInt64(key)) + Varint.size(UInt64(value) << 2) + key + value
    }

    static func branchCellSize(key: Int) -> Int { Varint.size(UInt64(key)) + key + PageLayout.childReferenceSize }

    /// Makes room for one more slot and a cell of `size` bytes.
    private func reserve(_ size: Int) {
        if cellsStart - slotsEnd >= size + 2 { return }
        if garbage > 0 { compact() }
        if cellsStart - slotsEnd >= size + 2 { return }
        var newCapacity = capacity * 2
        while newCapacity - (capacity - cellsStart) - slotsEnd < size + 2 { newCapacity *= 2 }
        resize(to: Swift.min(newCapacity, 1 << 16))
    }

    private func resize(to newCapacity: Int) {
        let used = capacity - cellsStart
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        fresh.copyMemory(from: buffer, byteCount: slotsEnd)
        (fresh + newCapacity - used).copyMemory(from: buffer + cellsStart, byteCount: used)
        let shift = newCapacity - capacity
        buffer.deallocate()
        buffer = fresh
        budget.bytes += newCapacity - capacity
        capacity = newCapacity
        cellsStart += shift
        for i in 0..<count { setSlot(i, slot(i) + shift) }
    }

    /// Packs the cells at the end of the buffer, dropping garbage.
    private func compact() {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { scratch.deallocate() }
        var end = capacity
        for i in 0..<count {
            let size = cellSize(i)
            end -= size
            (scratch + end).copyMemory(from: buffer + slot(i), byteCount: size)
            setSlot(i, end)
        }
        (buffer + end).copyMemory(from: scratch + end, byteCount: capacity - end)
        cellsStart = end
        garbage = 0
    }

    private func openSlot(at i: Int) {
        let at = PageLayout.headerSize + 2 * i
        if i < count { (buffer + at + 2).copyMemory(from: buffer + at, byteCount: 2 * (count - i)) }
        setCount(count + 1)
    }

    private func closeSlot(at i: Int) {
        let at = PageLayout.headerSize + 2 * i
        if i + 1 < count { (buffer + at).copyMemory(from: buffer + at + 2, byteCount: 2 * (count - i - 1)) }
        setCount(count - 1)
    }

    // MARK: Changing

    /// Inserts a leaf cell at position `i`.
    func insertLeafCell(at i: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        let size = Node.leafCellSize(key: key.count, value: value.count)
        reserve(size)
        cellsStart -= size
        var p = cellsStart
        p += Varint.write(UInt64(key.count), to: buffer + p)
        p += Varint.write(UInt64(value.count) << 2 | UInt64(flags & 3), to: buffer + p)
        if key.count > 0 { (buffer + p).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        p += key.count
        if value.count > 0 { (buffer + p).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        openSlot(at: i)
        setSlot(i, cellsStart)
        encodedSize += size + 2
    }

    func appendLeafCell(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        insertLeafCell(at: count, key: key, value: value, flags: flags)
    }

    /// Inserts a branch cell at position `i` for the written page `child`.
    func insertBranchCell(at i: Int, key: UnsafeRawBufferPointer, child: UInt64, node: Node? = nil) {
        let size = Node.branchCellSize(key: key.count)
        reserve(size)
        cellsStart -= size
        var p = cellsStart
        p += Varint.write(UInt64(key.count), to: buffer + p)
        if key.count > 0 { (buffer + p).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        p += key.count
        (buffer + p).storeBytes(of: child.littleEndian, as: UInt64.self)
        openSlot(at: i)
        setSlot(i, cellsStart)
        children.insert(node, at: i)
        encodedSize += size + 2
    }

    func removeCell(at i: Int) {
        let size = cellSize(i)
        garbage += size
        encodedSize -= size + 2
        closeSlot(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    /// Replaces the value of leaf cell `i`, keeping its key.
    func replaceValue(at i: Int, with value: UnsafeRawBufferPointer, flags: UInt8) {
        withUnsafeTemporaryAllocation(byteCount: PageLayout.maximumKeyLength + 64, alignment: 8) { scratch in
            let key = view.leafCell(i).suffix
            let copy = UnsafeRawBufferPointer(start: scratch.baseAddress!, count: key.count)
            if key.count > 0 { scratch.baseAddress!.copyMemory(from: key.baseAddress!, byteCount: key.count) }
            removeCell(at: i)
            insertLeafCell(at: i, key: copy, value: value, flags: flags)
        }
    }

    /// Sets the page that branch cell `i` points to (once its child has been written).
    func setChild(_ i: Int, to offset: UInt64) {
        var p = slot(i)
        let k = Varint.read(buffer, &p)
        (buffer + p + k).storeBytes(of: offset.littleEndian, as: UInt64.self)
        children[i] = nil
    }

    /// Replaces branch cell i's key (keeping its child).
    func replaceBranchKey(at i: Int, with key: UnsafeRawBufferPointer) {
        let (child, node) = (view.child(i), children[i])
        removeCell(at: i)
        insertBranchCell(at: i, key: key, child: child, node: node)
    }

    // MARK: Splitting and merging

    /// Moves the upper half of the cells (by bytes) into a new node; returns it with its first key.
    func splitOff() -> (separator: [UInt8], right: Node) {
        var cut = 1
        var bytes = PageLayout.headerSize
        let half = encodedSize / 2
        while cut < count - 1 {
            bytes += cellSize(cut - 1) + 2
            if bytes >= half { break }
            cut += 1
        }
        let right = Node(isLeaf: isLeaf, budget: budget)
        let separator = view.key(cut)
        for i in cut..<count {
            if isLeaf {
                let cell = view.leafCell(i)
                right.appendLeafCell(key: cell.suffix, value: cell.value, flags: cell.flags)
            } else {
                let cell = view.branchCell(i)
                // The right node's first key means "lowest": kept empty.
                right.insertBranchCell(at: right.count, key: i == cut ? UnsafeRawBufferPointer(start: nil, count: 0) : cell.suffix,
                                       child: cell.child, node: children[i])
            }
        }
        while count > cut { removeCell(at: count - 1) }
        return (separator, right)
    }

    /// Appends the cells of `right`, its right neighbour. For branches, `separator` is the
    /// parent's key for `right`, which becomes the key of right's first child.
    func absorb(_ right: Node, separator: UnsafeRawBufferPointer) {
        for i in 0..<right.count {
            if isLeaf {
                let cell = right.view.leafCell(i)
                appendLeafCell(key: cell.suffix, value: cell.value, flags: cell.flags)
            } else {
                let cell = right.view.branchCell(i)
                insertBranchCell(at: count, key: i == 0 ? separator : cell.suffix, child: cell.child, node: right.children[i])
            }
        }
    }

    // MARK: Writing

    /// The length of the common prefix of every key that a page of this node compares. (In
    /// key order that is the first key's with the last; every key is compared all the same, so
    /// that a node copied from a damaged page whose keys are out of order encodes safely.)
    private func commonPrefixLength() -> Int {
        let first = isLeaf ? 0 : 1
        guard count > first else { return 0 }
        let a = view.suffix(first)
        var n = Swift.min(a.count, 255)
        for i in (first + 1)..<Swift.max(first + 1, count) where n > 0 {
            let b = view.suffix(i)
            var m = 0
            let limit = Swift.min(n, b.count)
            while m < limit && a[m] == b[m] { m += 1 }
            n = m
        }
        return n
    }

    /// The page this node encodes to, with its keys' common prefix taken out and its checksum
    /// set; every child must be written (`children` all nil).
    func encode(into page: inout [UInt8]) {
        let p = commonPrefixLength()
        let source = view
        let first = isLeaf ? 0 : 1
        page.removeAll(keepingCapacity: true)
        page.append(contentsOf: repeatElement(0, count: PageLayout.headerSize + p + 2 * count))
        page[6] = isLeaf ? PageLayout.kindLeaf : PageLayout.kindBranch
        page[7] = UInt8(p)
        page.storeLE16(UInt16(count), at: 8)
        if p > 0 { page.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: PageLayout.headerSize).copyMemory(from: source.suffix(first).baseAddress!, byteCount: p) } }
        for i in 0..<count {
            page.storeLE16(UInt16(page.count), at: PageLayout.headerSize + p + 2 * i)
            if isLeaf {
                let cell = source.leafCell(i)
                let suffix = UnsafeRawBufferPointer(rebasing: cell.suffix[p...])
                Varint.append(UInt64(suffix.count), to: &page)
                Varint.append(UInt64(cell.value.count) << 2 | UInt64(cell.flags), to: &page)
                page.append(contentsOf: suffix)
                page.append(contentsOf: cell.value)
            } else {
                let cell = source.branchCell(i)
                let suffix = i == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : UnsafeRawBufferPointer(rebasing: cell.suffix[p...])
                Varint.append(UInt64(suffix.count), to: &page)
                page.append(contentsOf: suffix)
                page.appendLE(cell.child)
            }
        }
        PageLayout.seal(&page)
    }
}

extension PageLayout {
    /// Pads a page to the minimum size and sets its length and checksum.
    static func seal(_ page: inout [UInt8]) {
        if page.count < minimumSize { page.append(contentsOf: repeatElement(0, count: minimumSize - page.count)) }
        page.storeLE16(UInt16(page.count), at: 4)
        let sum = page.withUnsafeBytes { Checksum.short(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        page.storeLE(sum, at: 0)
    }
}
