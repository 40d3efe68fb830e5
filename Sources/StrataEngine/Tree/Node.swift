// A node that a write transaction changes: a page in memory, in the page layout (Page.swift)
// with room to grow between the slots and the cells. Reads use `PageView` on it exactly as on
// a written page; `encode` writes it as a compact page.
//
// A node copied from a page keeps the page's prefix, so that the copy is one move of bytes: a
// key that falls inside the page's range shares it. A key that does not (one past either
// end) makes the node put the prefix back into every key first (`expand`).
//
// Cells are added at the low end of the cell area, which grows down from the end of the
// buffer; a removed or replaced cell's bytes stay as garbage until the node runs out of room
// and compacts.
//
// A node copied from a packed leaf stays packed (the page's bytes as they are) while it only
// loses a few cells or has values replaced by as many bytes, and is written as it lies; any
// other change lays its cells out as above first (`unpack`).

/// The bytes of the nodes a write transaction holds, so that it can write them out when
/// they pass its budget.
///
/// It also keeps the buffers of nodes that went away (written out) for the nodes that follow:
/// a large transaction writes its nodes out and copies as many pages again, and fresh buffers
/// from `malloc` cost a page fault per 4 KiB once freed memory went back to the system. The
/// spare buffers never pass the most the live nodes held, and go when the transaction does.
final class DirtyBudget {
    @exclusivity(unchecked) var bytes = 0
    let limit: Int
    @exclusivity(unchecked) private var spares: [UnsafeMutableRawPointer] = []
    init(limit: Int) { self.limit = limit }
    var isExceeded: Bool { bytes > limit }

    deinit { for buffer in spares { buffer.deallocate() } }

    /// A node buffer of `capacity` bytes (a spare one when it has the usual size).
    @inline(__always)
    func allocate(_ capacity: Int) -> UnsafeMutableRawPointer {
        if capacity == Node.initialCapacity, let spare = spares.popLast() { return spare }
        return UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
    }

    /// Takes back a buffer `allocate` gave.
    @inline(__always)
    func release(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        if capacity == Node.initialCapacity && spares.count < DirtyBudget.maximumSpares(limit) {
            spares.append(buffer)
        } else {
            buffer.deallocate()
        }
    }

    /// Spare buffers kept at most: the budget's worth, and no more than 32 MiB.
    private static func maximumSpares(_ limit: Int) -> Int { Swift.min(limit, 32 << 20) / Node.initialCapacity }
}

final class Node {
    let isLeaf: Bool
    @exclusivity(unchecked) private(set) var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) private(set) var capacity: Int
    @exclusivity(unchecked) private(set) var count = 0
    /// The length of the prefix every key of this node starts with (kept at bytes 10..., as
    /// in a page).
    @exclusivity(unchecked) private(set) var prefixLength = 0
    /// True while the prefix is the one copied from a page (every key then shares it, and
    /// encoding need not look for a longer one).
    @exclusivity(unchecked) private var copiedPrefix = false
    /// True while the node holds a packed leaf as it was copied, less the cells removed since
    /// (`removeCell` closes them up in place): a deletion that takes a few rows out of each
    /// leaf copies the page in one move and writes it in one move. Any other change lays the
    /// cells out with their lengths first (`unpack`).
    @exclusivity(unchecked) private(set) var isPacked = false
    /// Where a packed node's page starts in its buffer: a removal moves whichever side of the
    /// removed cell is shorter, so the page's start moves too (0 when not packed).
    @exclusivity(unchecked) private var origin = 0
    /// The lowest byte of the cell area.
    @exclusivity(unchecked) private var cellsStart: Int
    @exclusivity(unchecked) private var garbage = 0
    /// The size of the page this node would encode to with its current prefix.
    @exclusivity(unchecked) private(set) var encodedSize = PageLayout.headerSize
    /// For a branch: child i when it is changed in this transaction; nil when it is the
    /// written page named in cell i.
    @exclusivity(unchecked) var children: [Node?] = []
    private let budget: DirtyBudget

    static let initialCapacity = 8192
    /// A packed leaf of more cells than this is laid out with their lengths before a removal.
    static let packedRemovalLimit = 128
    /// The most bytes a node may take (slot offsets are 16 bits).
    static let largestCapacity = 1 << 16
    /// The most bytes a copied page may take once its prefix is put back into every key.
    static let largestCopy = 32 * 1024

    init(isLeaf: Bool, budget: DirtyBudget, capacity: Int = Node.initialCapacity) {
        self.isLeaf = isLeaf
        self.budget = budget
        self.capacity = capacity
        buffer = budget.allocate(capacity)
        cellsStart = capacity
        PageHeaderWriter(buffer).start(kind: isLeaf ? PageLayout.kindLeaf : PageLayout.kindBranch)
        budget.bytes += capacity
    }

    /// A changeable copy of a written page: its bytes moved as they are, the slots shifted to
    /// where the cells now lie. Nil when it would not fit a node (a page no writer makes).
    convenience init?(copying page: PageView, budget: DirtyBudget) {
        let length = page.length
        guard page.nodeSizeEstimate <= Node.largestCopy else { return nil }
        if page.isPacked {
            // A packed leaf is kept packed (see `isPacked`): its bytes moved as they are, into
            // a buffer of their size (a packed node never grows: `unpack` makes a new one), so
            // that a deletion touching every leaf touches no more fresh memory than the pages.
            self.init(isLeaf: true, budget: budget, capacity: length)
            buffer.copyMemory(from: page.base, byteCount: length)
            PageHeaderWriter(buffer).clearChecksum()
            isPacked = true
            prefixLength = page.prefixLength
            copiedPrefix = true
            count = page.count
            encodedSize = length
            return
        }
        self.init(isLeaf: page.isLeaf, budget: budget, capacity: Node.copyCapacity(length))
        let p = page.prefixLength
        let slotsEnd = PageLayout.headerSize + p + 2 * page.count
        buffer.copyMemory(from: page.base, byteCount: slotsEnd)
        PageHeaderWriter(buffer).clearChecksum()
        // The cells (after the slots) go to the end of the buffer.
        let cellBytes = length - slotsEnd
        let shift = capacity - length
        (buffer + capacity - cellBytes).copyMemory(from: page.base + slotsEnd, byteCount: cellBytes)
        prefixLength = p
        copiedPrefix = true
        count = page.count
        cellsStart = capacity - cellBytes
        for i in 0..<count { setSlot(i, slot(i) + shift) }
        encodedSize = length
        if !isLeaf { children = [Node?](repeating: nil, count: count) }
    }

    /// The capacity of a node copied from a page of at most `bytes`: the usual size (a spare
    /// buffer) while it leaves room to grow, twice the bytes otherwise.
    private static func copyCapacity(_ bytes: Int) -> Int {
        bytes + bytes / 2 <= initialCapacity ? initialCapacity : Swift.min(largestCapacity, 2 * bytes)
    }

    /// Lays a packed node's cells out with their lengths (it must be packed), in a buffer of its own, after the
    /// page's prefix, which every key keeps sharing (a node's cell takes at most 5 bytes more
    /// than a packed one: its two length varints).
    private func unpack() {
        let old = buffer, oldCapacity = capacity
        let page = PageView(UnsafeRawPointer(old + origin))
        capacity = Node.copyCapacity(page.length + 5 * page.count)
        buffer = budget.allocate(capacity)
        budget.bytes += capacity - oldCapacity
        PageHeaderWriter(buffer).start(kind: PageLayout.kindLeaf)
        isPacked = false
        origin = 0
        count = 0
        prefixLength = 0
        garbage = 0
        encodedSize = PageLayout.headerSize
        takePrefix(page.prefix)
        copyCells(ofPacked: page)
        budget.release(old, capacity: oldCapacity)
    }

    /// `replaceValue` in a packed node, in place when the value keeps its length (an updated
    /// row often does): false, changing nothing, when it does not.
    private func replacePackedValue(at i: Int, with value: UnsafeRawBufferPointer, flags: UInt8) -> Bool {
        let page = view
        let old = page.leafCell(i).value
        guard old.count == value.count else { return false }
        if let source = value.baseAddress, let target = old.baseAddress {
            UnsafeMutableRawPointer(mutating: target).copyMemory(from: source, byteCount: value.count)
        }
        // (A packed slot keeps the value's flags in its top 2 bits.)
        let at = origin + page.slotsStart + 2 * i
        let raw = UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: at, as: UInt16.self))
        buffer.storeBytes(of: (raw & 0x3FFF | UInt16(flags & 3) << 14).littleEndian, toByteOffset: at, as: UInt16.self)
        return true
    }

    /// `removeCell` in a packed node: the cell and its slot go, and whichever side of the cell
    /// is shorter closes the gap (the page's start moving with it, `origin`): the header and
    /// the slots and cells before the cell move towards the end, or the cells after it move
    /// towards the start (then the header and the slots before it move by the slot's 2 bytes).
    /// Either way each remaining cell's offset from the page's start goes down by 2, and by the
    /// cell's size past it.
    private func removePackedCell(at i: Int) {
        let base = buffer + origin
        let page = view
        let n = count, length = page.length
        let slots = page.slotsStart, mask = PageLayout.packedMaximumSize
        func rawSlot(_ j: Int) -> Int { Int(UInt16(littleEndian: base.loadUnaligned(fromByteOffset: slots + 2 * j, as: UInt16.self))) }
        let start = rawSlot(i) & mask
        let end = i + 1 < n ? rawSlot(i + 1) & mask : length
        let size = end - start
        let head = slots + 2 * n
        let shift: Int
        if slots + 2 * i + (length - end) <= start {
            // The cells after it move down; the header and slots before it up by 2.
            (base + start).copyMemory(from: base + end, byteCount: length - end)
            (base + 2).copyMemory(from: base, byteCount: slots + 2 * i)
            shift = 2
        } else {
            // Everything before it moves up by its size and slot, piece by piece from the end.
            (base + head + size).copyMemory(from: base + head, byteCount: start - head)
            (base + slots + 2 * i + 2 + size).copyMemory(from: base + slots + 2 * i + 2, byteCount: 2 * (n - i - 1))
            (base + size + 2).copyMemory(from: base, byteCount: slots + 2 * i)
            shift = size + 2
        }
        origin += shift
        let moved = buffer + origin
        // (An offset never goes below what is taken from it: the flags above it stay as they are.)
        let slotsAt = moved + slots
        Node.lowerSlots(slotsAt, count: i, by: 2)
        Node.lowerSlots(slotsAt + 2 * i, count: n - 1 - i, by: UInt16(truncatingIfNeeded: 2 + size))
        let newLength = length - 2 - size
        let header = PageHeaderWriter(moved)
        header.setLength(newLength)
        header.setCount(n - 1)
        count = n - 1
        encodedSize = newLength
    }

    /// Subtracts `delta` from each of `count` little-endian u16 slots at `p`, eight or four at
    /// a time: every slot is at least `delta` (an offset never goes below what is taken from
    /// it), so no slot borrows from the next one in a 64-bit subtraction. (One at a time, this was most of
    /// removing a cell from an index leaf of a hundred cells.)
    @inline(__always)
    static func lowerSlots(_ p: UnsafeMutableRawPointer, count: Int, by delta: UInt16) {
        var j = 0
        #if _endian(little)
        // Eight at a time in a vector register, where slots are in memory order.
        let vector = SIMD8<UInt16>(repeating: delta)
        while j + 8 <= count {
            let slots = p.loadUnaligned(fromByteOffset: 2 * j, as: SIMD8<UInt16>.self)
            p.storeBytes(of: slots &- vector, toByteOffset: 2 * j, as: SIMD8<UInt16>.self)
            j += 8
        }
        #endif
        let lanes = UInt64(delta) &* 0x0001_0001_0001_0001
        while j + 4 <= count {
            let word = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 2 * j, as: UInt64.self))
            p.storeBytes(of: (word &- lanes).littleEndian, toByteOffset: 2 * j, as: UInt64.self)
            j += 4
        }
        while j < count {
            let raw = UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * j, as: UInt16.self))
            p.storeBytes(of: (raw &- delta).littleEndian, toByteOffset: 2 * j, as: UInt16.self)
            j += 1
        }
    }

    /// Writes the cells of a packed leaf into this empty node (which took the page's prefix):
    /// each cell once, from the end of the buffer down, its slot in place, without the checks
    /// of an insert (the capacity was sized for them).
    private func copyCells(ofPacked page: PageView) {
        var end = capacity
        var size = 0
        for i in 0..<page.count {
            let cell = page.leafCell(i)
            let k = cell.suffix.count, v = cell.value.count
            let cellSize = Node.leafCellSize(key: k, value: v)
            end -= cellSize
            var p = buffer + end
            p += Varint.write(UInt64(k), to: p)
            p += Varint.write(UInt64(v) << 2 | UInt64(cell.flags & 3), to: p)
            Node.copy(cell.suffix, to: p)
            Node.copy(cell.value, to: p + k)
            buffer.storeBytes(of: UInt16(truncatingIfNeeded: end).littleEndian, toByteOffset: slotsStart + 2 * i, as: UInt16.self)
            size += cellSize + 2
        }
        setCount(page.count)
        cellsStart = end
        encodedSize += size
    }

    /// Copies a few bytes inline (a key's suffix is often a byte or two, where a call to
    /// `memcpy` costs more than the copy), more with `memcpy`.
    @inline(__always)
    static func copy(_ bytes: UnsafeRawBufferPointer, to target: UnsafeMutableRawPointer) {
        let n = bytes.count
        guard n > 0, let source = bytes.baseAddress else { return }
        if n > 16 { return target.copyMemory(from: source, byteCount: n) }
        // Two loads that may overlap, then two stores.
        if n >= 8 {
            let (a, b) = (source.loadUnaligned(as: UInt64.self), source.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self))
            target.storeBytes(of: a, as: UInt64.self)
            target.storeBytes(of: b, toByteOffset: n - 8, as: UInt64.self)
        } else if n >= 4 {
            let (a, b) = (source.loadUnaligned(as: UInt32.self), source.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            target.storeBytes(of: a, as: UInt32.self)
            target.storeBytes(of: b, toByteOffset: n - 4, as: UInt32.self)
        } else {
            for j in 0..<n { target.storeBytes(of: source.load(fromByteOffset: j, as: UInt8.self), toByteOffset: j, as: UInt8.self) }
        }
    }

    deinit {
        budget.bytes -= capacity
        budget.release(buffer, capacity: capacity)
    }

    @inline(__always) var view: PageView { PageView(UnsafeRawPointer(buffer + origin)) }

    private var prefix: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer + origin + PageLayout.headerSize, count: prefixLength) }

    private func setCount(_ n: Int) {
        count = n
        PageHeaderWriter(buffer).setCount(n)
    }

    private var slotsStart: Int { PageLayout.headerSize + prefixLength }
    private var slotsEnd: Int { slotsStart + 2 * count }

    @inline(__always) private func slot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: slotsStart + 2 * i, as: UInt16.self)))
    }

    @inline(__always) private func setSlot(_ i: Int, _ position: Int) {
        buffer.storeBytes(of: UInt16(truncatingIfNeeded: position).littleEndian, toByteOffset: slotsStart + 2 * i, as: UInt16.self)
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
        resize(to: Swift.min(newCapacity, Node.largestCapacity))
    }

    private func resize(to newCapacity: Int) {
        let used = capacity - cellsStart
        let fresh = budget.allocate(newCapacity)
        fresh.copyMemory(from: buffer, byteCount: slotsEnd)
        (fresh + newCapacity - used).copyMemory(from: buffer + cellsStart, byteCount: used)
        let shift = newCapacity - capacity
        budget.release(buffer, capacity: capacity)
        buffer = fresh
        budget.bytes += newCapacity - capacity
        capacity = newCapacity
        cellsStart += shift
        for i in 0..<count { setSlot(i, slot(i) + shift) }
    }

    /// Packs the cells at the end of the buffer, dropping garbage.
    private func compact() {
        let scratch = budget.allocate(capacity)
        defer { budget.release(scratch, capacity: capacity) }
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
        let at = slotsStart + 2 * i
        if i < count { (buffer + at + 2).copyMemory(from: buffer + at, byteCount: 2 * (count - i)) }
        setCount(count + 1)
    }

    private func closeSlot(at i: Int) {
        let at = slotsStart + 2 * i
        if i + 1 < count { (buffer + at).copyMemory(from: buffer + at + 2, byteCount: 2 * (count - i - 1)) }
        setCount(count - 1)
    }

    // MARK: The prefix

    /// True when `key` starts with this node's prefix.
    @inline(__always)
    private func sharesPrefix(_ key: UnsafeRawBufferPointer) -> Bool {
        prefixLength == 0 || (key.count >= prefixLength && compareBytes(UnsafeRawBufferPointer(rebasing: key[0..<prefixLength]), prefix) == 0)
    }

    /// Puts the prefix back into every key (before a key without it comes in).
    private func expand() {
        guard prefixLength > 0 else { return }
        let oldBuffer = buffer, oldCapacity = capacity
        let old = PageView(UnsafeRawPointer(oldBuffer))
        let n = count
        let newCapacity = Swift.min(Node.largestCapacity, Swift.max(Node.initialCapacity, 2 * (encodedSize + prefixLength * n)))
        buffer = budget.allocate(newCapacity)
        buffer.copyMemory(from: oldBuffer, byteCount: PageLayout.headerSize)
        PageHeaderWriter(buffer).setPrefixLength(0)
        budget.bytes += newCapacity - oldCapacity
        capacity = newCapacity
        cellsStart = newCapacity
        garbage = 0
        prefixLength = 0
        copiedPrefix = false
        count = 0
        encodedSize = PageLayout.headerSize
        let oldPrefix = old.prefix
        for i in 0..<n {
            if isLeaf {
                let cell = old.leafCell(i)
                appendCell(prefix: oldPrefix, suffix: cell.suffix, value: cell.value, flags: cell.flags, child: nil)
            } else {
                let cell = old.branchCell(i)
                let first = i == 0
                appendCell(prefix: first ? UnsafeRawBufferPointer(start: nil, count: 0) : oldPrefix,
                           suffix: first ? UnsafeRawBufferPointer(start: nil, count: 0) : cell.suffix,
                           value: UnsafeRawBufferPointer(start: nil, count: 0), flags: 0, child: cell.child)
            }
        }
        budget.release(oldBuffer, capacity: oldCapacity)
    }

    /// Appends a cell whose key is `prefix` + `suffix` (of keys that already share this node's
    /// prefix: the part after it), written in place.
    private func appendCell(prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8, child: UInt64?) {
        insertCell(at: count, prefix: prefix, suffix: suffix, value: value, flags: flags, child: child)
    }

    /// Inserts a cell at position `i` whose stored key is `prefix` + `suffix`.
    private func insertCell(at i: Int, prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8, child: UInt64?) {
        let k = prefix.count + suffix.count
        let size = child == nil ? Node.leafCellSize(key: k, value: value.count) : Node.branchCellSize(key: k)
        reserve(size)
        cellsStart -= size
        var p = buffer + cellsStart
        p += Varint.write(UInt64(k), to: p)
        if child == nil { p += Varint.write(UInt64(value.count) << 2 | UInt64(flags & 3), to: p) }
        if prefix.count > 0, let source = prefix.baseAddress { p.copyMemory(from: source, byteCount: prefix.count); p += prefix.count }
        if suffix.count > 0, let source = suffix.baseAddress { p.copyMemory(from: source, byteCount: suffix.count); p += suffix.count }
        if let child {
            p.storeBytes(of: child.littleEndian, as: UInt64.self)
        } else if value.count > 0, let source = value.baseAddress {
            p.copyMemory(from: source, byteCount: value.count)
        }
        openSlot(at: i)
        setSlot(i, cellsStart)
        encodedSize += size + 2
    }

    // MARK: Changing

    private static var empty: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Inserts a leaf cell for the whole key `key` at position `i`.
    func insertLeafCell(at i: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        if isPacked { unpack() }
        if !sharesPrefix(key) { expand() }
        insertCell(at: i, prefix: Node.empty, suffix: UnsafeRawBufferPointer(rebasing: key[prefixLength...]), value: value, flags: flags, child: nil)
    }

    func appendLeafCell(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        insertLeafCell(at: count, key: key, value: value, flags: flags)
    }

    /// Inserts a branch cell at position `i` for the whole key `key` and the written page
    /// `child` (or the changed node `node`). The key of cell 0 is not compared: pass it empty.
    func insertBranchCell(at i: Int, key: UnsafeRawBufferPointer, child: UInt64, node: Node? = nil) {
        if key.count > 0 && !sharesPrefix(key) { expand() }
        let suffix = key.count == 0 ? Node.empty : UnsafeRawBufferPointer(rebasing: key[prefixLength...])
        insertCell(at: i, prefix: Node.empty, suffix: suffix, value: Node.empty, flags: 0, child: child)
        children.insert(node, at: i)
    }

    func removeCell(at i: Int) {
        // (A leaf of very many small cells is laid out first: each removal from a packed one
        // moves every slot. An index leaf of 2 KiB holds about a hundred.)
        if isPacked && count > Node.packedRemovalLimit { unpack() }
        if isPacked { return removePackedCell(at: i) }
        let size = cellSize(i)
        garbage += size
        encodedSize -= size + 2
        closeSlot(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    /// Replaces the value of leaf cell `i`, keeping its key.
    func replaceValue(at i: Int, with value: UnsafeRawBufferPointer, flags: UInt8) {
        if isPacked {
            if replacePackedValue(at: i, with: value, flags: flags) { return }
            unpack()
        }
        let oldSize = cellSize(i)
        let suffix = view.leafCell(i).suffix
        let newSize = Node.leafCellSize(key: suffix.count, value: value.count)
        if newSize == oldSize {
            // The same size: written over in place.
            var p = slot(i)
            _ = Varint.read(buffer, &p)
            p += Varint.write(UInt64(value.count) << 2 | UInt64(flags & 3), to: buffer + p)
            if value.count > 0, let source = value.baseAddress { (buffer + p + suffix.count).copyMemory(from: source, byteCount: value.count) }
            return
        }
        withUnsafeTemporaryAllocation(byteCount: PageLayout.maximumKeyLength + 64, alignment: 8) { scratch in
            let copy = UnsafeRawBufferPointer(start: UnsafeRawPointer(scratch.baseAddress), count: suffix.count)
            if suffix.count > 0, let target = scratch.baseAddress, let source = suffix.baseAddress { target.copyMemory(from: source, byteCount: suffix.count) }
            removeCell(at: i)
            insertCell(at: i, prefix: Node.empty, suffix: copy, value: value, flags: flags, child: nil)
        }
    }

    /// Sets the page that branch cell `i` points to (once its child has been written).
    func setChild(_ i: Int, to offset: UInt64) {
        var p = slot(i)
        let k = Varint.read(buffer, &p)
        (buffer + p + k).storeBytes(of: offset.littleEndian, as: UInt64.self)
        children[i] = nil
    }

    /// Makes branch cell 0's key empty (it means "lowest"), keeping its child.
    func clearFirstKey() {
        guard !isLeaf, count > 0, view.branchCell(0).suffix.count > 0 else { return }
        let (child, node) = (view.child(0), children[0])
        removeCell(at: 0)
        insertCell(at: 0, prefix: Node.empty, suffix: Node.empty, value: Node.empty, flags: 0, child: child)
        children.insert(node, at: 0)
    }

    // MARK: Splitting and merging

    /// Moves the upper half of the cells (by bytes) into a new node; returns it with its first key.
    /// With `lastOnly` (a key appended at the end, as in a load in key order), only the last
    /// cell moves when the rest still fits `target`: the left node stays full, not half empty.
    func splitOff(lastOnly: Bool = false, target: Int = .max) -> (separator: [UInt8], right: Node) {
        if isPacked { unpack() }
        var cut = 1
        var bytes = PageLayout.headerSize
        let half = encodedSize / 2
        if lastOnly && count >= 2 && encodedSize - cellSize(count - 1) - 2 <= target {
            cut = count - 1
        } else {
            while cut < count - 1 {
                bytes += cellSize(cut - 1) + 2
                if bytes >= half { break }
                cut += 1
            }
            // A branch keeps two children on each side (it splits with four or more).
            if !isLeaf && count >= 4 { cut = Swift.min(Swift.max(cut, 2), count - 2) }
        }
        let right = Node(isLeaf: isLeaf, budget: budget)
        // The right node keeps the prefix: its keys share it too.
        right.takePrefix(prefix)
        right.copiedPrefix = copiedPrefix
        let separator = view.key(cut)
        for i in cut..<count {
            if isLeaf {
                let cell = view.leafCell(i)
                right.appendCell(prefix: Node.empty, suffix: cell.suffix, value: cell.value, flags: cell.flags, child: nil)
            } else {
                let cell = view.branchCell(i)
                // The right node's first key means "lowest": kept empty.
                right.appendCell(prefix: Node.empty, suffix: i == cut ? Node.empty : cell.suffix, value: Node.empty, flags: 0, child: cell.child)
                right.children.append(children[i])
            }
        }
        while count > cut { removeCell(at: count - 1) }
        return (separator, right)
    }

    /// Gives an empty node a prefix.
    private func takePrefix(_ bytes: UnsafeRawBufferPointer) {
        guard count == 0, bytes.count > 0, let source = bytes.baseAddress else { return }
        (buffer + PageLayout.headerSize).copyMemory(from: source, byteCount: bytes.count)
        PageHeaderWriter(buffer).setPrefixLength(bytes.count)
        prefixLength = bytes.count
        encodedSize = PageLayout.headerSize + bytes.count
    }

    /// Appends the cells of `right`, its right neighbour. For branches, `separator` is the
    /// parent's key for `right`, which becomes the key of right's first child.
    func absorb(_ right: Node, separator: UnsafeRawBufferPointer) {
        if isPacked { unpack() }
        let same = right.prefixLength == prefixLength && compareBytes(right.prefix, prefix) == 0 && (isLeaf || sharesPrefix(separator))
        if !same { expand() }
        let rightPrefix = same ? Node.empty : right.prefix
        for i in 0..<right.count {
            if isLeaf {
                let cell = right.view.leafCell(i)
                appendCell(prefix: rightPrefix, suffix: cell.suffix, value: cell.value, flags: cell.flags, child: nil)
            } else {
                let cell = right.view.branchCell(i)
                if i == 0 {
                    appendCell(prefix: Node.empty, suffix: UnsafeRawBufferPointer(rebasing: separator[prefixLength...]), value: Node.empty, flags: 0, child: cell.child)
                } else {
                    appendCell(prefix: rightPrefix, suffix: cell.suffix, value: Node.empty, flags: 0, child: cell.child)
                }
                children.append(right.children[i])
            }
        }
    }

    // MARK: Writing

    /// How many bytes past the node's prefix every key that a page of this node compares
    /// shares. (In key order that is the first key's with the last; every key is compared all
    /// the same, so that a node copied from a damaged page whose keys are out of order encodes
    /// safely.)
    private func extraPrefixLength() -> Int {
        let first = isLeaf ? 0 : 1
        guard count > first else { return 0 }
        let a = view.suffix(first)
        var n = Swift.min(a.count, 255 - prefixLength)
        for i in (first + 1)..<Swift.max(first + 1, count) where n > 0 {
            n = Node.commonPrefix(a, view.suffix(i), n)
        }
        return n
    }

    /// How many of the first `limit` bytes of `a` (which has them) `b` starts with: 8 bytes a
    /// step, then byte by byte.
    @inline(__always)
    private static func commonPrefix(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ limit: Int) -> Int {
        let limit = Swift.min(limit, b.count)
        guard limit > 0, let x = a.baseAddress, let y = b.baseAddress else { return 0 }
        var m = 0
        while m + 8 <= limit {
            let differ = x.loadUnaligned(fromByteOffset: m, as: UInt64.self) ^ y.loadUnaligned(fromByteOffset: m, as: UInt64.self)
            // (The first byte in memory is the low one once read as little-endian.)
            if differ != 0 { return m + differ.littleEndian.trailingZeroBitCount >> 3 }
            m += 8
        }
        while m < limit && x.load(fromByteOffset: m, as: UInt8.self) == y.load(fromByteOffset: m, as: UInt8.self) { m += 1 }
        return m
    }

    /// The page this node encodes to, with its keys' common prefix taken out and its checksum
    /// set; every child must be written (`children` all nil).
    ///
    /// A node whose keys share the prefix it copied from its page looks for no longer one; a
    /// branch of it is written as it lies (its cells moved in one piece: cells may be in any
    /// order after the slots), a leaf packed.
    func encode(into page: inout [UInt8]) {
        if isPacked {
            // (A packed page shorter than the least a page may be is written unpacked, padded.)
            if encodedSize >= PageLayout.minimumSize { return encodeAsPacked(into: &page) }
            unpack()
        }
        let copied = copiedPrefix && prefixLength > 0
        if isLeaf {
            let shape = leafShape(sharing: !copied)
            if let plan = packedPlan(shape) { return encodePacked(into: &page, extra: shape.extra, plan: plan) }
            if copied { return encodeAsItLies(into: &page) }
            return encodeCells(into: &page, extra: shape.extra)
        }
        if copied { return encodeAsItLies(into: &page) }
        encodeCells(into: &page, extra: extraPrefixLength())
    }

    /// `encode` for a page of cells with their lengths (kind 1 or 2).
    private func encodeCells(into page: inout [UInt8], extra: Int) {
        let p = prefixLength + extra
        let source = view
        let first = isLeaf ? 0 : 1
        // The exact size first, then every byte written in place.
        var size = PageLayout.headerSize + p + 2 * count
        for i in 0..<count {
            let k = i < first ? 0 : source.suffix(i).count - extra
            if isLeaf {
                let v = source.leafCell(i).value.count
                size += Varint.size(UInt64(k)) + Varint.size(UInt64(v) << 2) + k + v
            } else {
                size += Varint.size(UInt64(k)) + k + PageLayout.childReferenceSize
            }
        }
        let total = Swift.max(size, PageLayout.minimumSize)
        page = PageLayout.makePage(length: total) { base in
            let header = PageHeaderWriter(base)
            header.start(kind: isLeaf ? PageLayout.kindLeaf : PageLayout.kindBranch)
            header.setLength(total)
            header.setPrefixLength(p)
            header.setCount(count)
            Node.copy(prefix, to: base + PageLayout.headerSize)
            if extra > 0 { Node.copy(UnsafeRawBufferPointer(rebasing: source.suffix(first)[..<extra]), to: base + PageLayout.headerSize + prefixLength) }
            let slots = PageLayout.headerSize + p
            var at = slots + 2 * count
            for i in 0..<count {
                base.storeBytes(of: UInt16(at).littleEndian, toByteOffset: slots + 2 * i, as: UInt16.self)
                if isLeaf {
                    let cell = source.leafCell(i)
                    let k = cell.suffix.count - extra
                    at += Varint.write(UInt64(k), to: base + at)
                    at += Varint.write(UInt64(cell.value.count) << 2 | UInt64(cell.flags), to: base + at)
                    if k > 0, let suffix = cell.suffix.baseAddress { (base + at).copyMemory(from: suffix + extra, byteCount: k); at += k }
                    if cell.value.count > 0, let value = cell.value.baseAddress { (base + at).copyMemory(from: value, byteCount: cell.value.count); at += cell.value.count }
                } else {
                    let cell = source.branchCell(i)
                    let k = i == 0 ? 0 : cell.suffix.count - extra
                    at += Varint.write(UInt64(k), to: base + at)
                    if k > 0, let suffix = cell.suffix.baseAddress { (base + at).copyMemory(from: suffix + extra, byteCount: k); at += k }
                    (base + at).storeBytes(of: cell.child.littleEndian, as: UInt64.self)
                    at += PageLayout.childReferenceSize
                }
            }
            if at < total { (base + at).initializeMemory(as: UInt8.self, repeating: 0, count: total - at) }
        }
    }
}

extension Node {
    /// What a leaf's cells say about the page it encodes to, read in one pass: the bytes past
    /// the node's prefix that every key shares (none unless `sharing`), whether every suffix
    /// and every value has one length, and their bytes.
    struct LeafShape {
        var extra = 0
        var firstSuffix = 0, firstValue = 0
        var sameSuffix = true, sameValue = true
        var suffixBytes = 0, valueBytes = 0, longestSuffix = 0
    }

    private func leafShape(sharing: Bool) -> LeafShape {
        var shape = LeafShape()
        guard count > 0 else { return shape }
        let source = view
        let a = source.leafCell(0)
        shape.firstSuffix = a.suffix.count
        shape.firstValue = a.value.count
        var n = sharing ? Swift.min(a.suffix.count, 255 - prefixLength) : 0
        for i in 0..<count {
            let cell = source.leafCell(i)
            let k = cell.suffix.count, v = cell.value.count
            if n > 0 && i > 0 { n = Node.commonPrefix(a.suffix, cell.suffix, n) }
            shape.sameSuffix = shape.sameSuffix && k == shape.firstSuffix
            shape.sameValue = shape.sameValue && v == shape.firstValue
            shape.suffixBytes += k
            shape.valueBytes += v
            shape.longestSuffix = Swift.max(shape.longestSuffix, k)
        }
        shape.extra = n
        return shape
    }

    /// How this leaf would be written as a packed leaf: its shape, `w` and size; nil when it
    /// cannot be (too long for 14-bit offsets, or shorter than a page).
    private func packedPlan(_ leaf: LeafShape) -> (shape: UInt8, width: Int, size: Int)? {
        guard count > 0 else { return nil }
        let extra = leaf.extra
        let shape = leaf.sameSuffix ? PageLayout.packedShapeFixedSuffix : leaf.sameValue ? PageLayout.packedShapeFixedValue : PageLayout.packedShapeVarint
        let width = leaf.sameSuffix ? leaf.firstSuffix - extra : leaf.sameValue ? leaf.firstValue : 0
        var size = PageLayout.headerSize + prefixLength + extra + PageLayout.packedExtraHeader + 2 * count
            + leaf.suffixBytes - count * extra + leaf.valueBytes
        if shape == PageLayout.packedShapeVarint {
            // A varint per suffix length: one byte each below 128.
            if leaf.longestSuffix - extra < 0x80 {
                size += count
            } else {
                for i in 0..<count { size += Varint.size(UInt64(view.leafCell(i).suffix.count - extra)) }
            }
        }
        guard size >= PageLayout.minimumSize, size <= PageLayout.packedMaximumSize, width <= Int(UInt16.max) else { return nil }
        return (shape, width, size)
    }

    /// `encode` for a leaf written packed (Page.swift): slots with the flags in their top bits,
    /// cells back to back, no lengths but the shape's.
    private func encodePacked(into page: inout [UInt8], extra: Int, plan: (shape: UInt8, width: Int, size: Int)) {
        let source = view
        let p = prefixLength + extra
        let total = plan.size
        page = PageLayout.makePage(length: total) { base in
            let header = PageHeaderWriter(base)
            header.start(kind: PageLayout.kindPackedLeaf)
            header.setLength(total)
            header.setPrefixLength(p)
            header.setCount(count)
            Node.copy(prefix, to: base + PageLayout.headerSize)
            if extra > 0 { Node.copy(UnsafeRawBufferPointer(rebasing: source.suffix(0)[..<extra]), to: base + PageLayout.headerSize + prefixLength) }
            base.storeBytes(of: plan.shape, toByteOffset: PageLayout.headerSize + p, as: UInt8.self)
            base.storeBytes(of: UInt16(plan.width).littleEndian, toByteOffset: PageLayout.headerSize + p + 1, as: UInt16.self)
            let slots = PageLayout.headerSize + p + PageLayout.packedExtraHeader
            var at = slots + 2 * count
            for i in 0..<count {
                let cell = source.leafCell(i)
                base.storeBytes(of: UInt16(at | Int(cell.flags & 3) << 14).littleEndian, toByteOffset: slots + 2 * i, as: UInt16.self)
                let k = cell.suffix.count - extra
                if plan.shape == PageLayout.packedShapeVarint { at += Varint.write(UInt64(k), to: base + at) }
                Node.copy(UnsafeRawBufferPointer(rebasing: cell.suffix[extra...]), to: base + at)
                at += k
                Node.copy(cell.value, to: base + at)
                at += cell.value.count
            }
        }
    }

    /// A packed node's page where it lies, its checksum set: written as it is, without a copy
    /// (the node is not read for its checksum, and goes once written). Nil for any other node.
    func sealedPackedPage() -> UnsafeRawBufferPointer? {
        guard isPacked, encodedSize >= PageLayout.minimumSize else { return nil }
        let base = buffer + origin
        PageHeaderWriter(base).stampChecksum(length: encodedSize)
        return UnsafeRawBufferPointer(start: base, count: encodedSize)
    }

    /// `encode` for a packed node: its bytes as they are, with the checksum.
    private func encodeAsPacked(into page: inout [UInt8]) {
        let total = encodedSize
        page = PageLayout.makePage(length: total) { base in
            base.copyMemory(from: buffer + origin, byteCount: total)
        }
    }

    /// `encode` for a node that keeps its page's prefix: the header, prefix and slots (shifted
    /// to where the cells go), then the cells in one move.
    private func encodeAsItLies(into page: inout [UInt8]) {
        if garbage > 0 { compact() }
        let cellBytes = capacity - cellsStart
        let size = slotsEnd + cellBytes
        let total = Swift.max(size, PageLayout.minimumSize)
        let shift = slotsEnd - cellsStart
        page = PageLayout.makePage(length: total) { base in
            base.copyMemory(from: buffer, byteCount: slotsEnd)
            PageHeaderWriter(base).setLength(total)
            for i in 0..<count {
                base.storeBytes(of: UInt16(truncatingIfNeeded: slot(i) + shift).littleEndian, toByteOffset: slotsStart + 2 * i, as: UInt16.self)
            }
            (base + slotsEnd).copyMemory(from: buffer + cellsStart, byteCount: cellBytes)
            if size < total { (base + size).initializeMemory(as: UInt8.self, repeating: 0, count: total - size) }
        }
    }
}
