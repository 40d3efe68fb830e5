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
// loses cells, gains cells that fit its page's layout, or has values replaced by as many bytes,
// and is written as it lies; any other change lays its cells out as above first (`unpack`).
//
// This file holds the node's state, how it is made (empty, or copied from a page) and how its
// slots and cells are read. Each operation has a file of its own:
//   Node+Insertion.swift    a cell in, and the room for it (reserve, compact, resize)
//   Node+Deletion.swift     a cell out, in place in a packed node
//   Node+Replacement.swift  a value replaced, a branch cell's child set, the first key cleared
//   Node+Balancing.swift    splitting a node in two, and absorbing a right neighbour
//   Node+Prefix.swift       the prefix every key shares: taken, or put back into every key
//   Node+Packed.swift       leaving the packed mode (unpack), and a cell into a packed node
//   Node+Encoding.swift     the page a node is written as (cells, packed, or as it lies)
//   Node+Invariants.swift   what must hold after every change, and the check of it
// The state below is shared by those files (so it is not private); the rest of the engine reads
// it and changes a node only through the operations.

final class Node {
    let isLeaf: Bool
    @exclusivity(unchecked) var buffer: UnsafeMutableRawPointer
    @exclusivity(unchecked) var capacity: Int
    @exclusivity(unchecked) var count = 0
    /// The length of the prefix every key of this node starts with (kept at bytes 10..., as
    /// in a page).
    @exclusivity(unchecked) var prefixLength = 0
    /// True while the prefix is the one copied from a page (every key then shares it, and
    /// encoding need not look for a longer one).
    @exclusivity(unchecked) var copiedPrefix = false
    /// True while the node holds a packed leaf as it was copied, less the cells removed since
    /// (`removeCell` closes them up in place) and with the cells inserted that fit its layout
    /// (`insertPackedCell`): a deletion that takes a few rows out of each leaf, or a commit that
    /// adds a row or two, copies the page in one move and writes it in one move. Any other
    /// change lays the cells out with their lengths first (`unpack`).
    @exclusivity(unchecked) var isPacked = false
    /// Cells a packed node took in place (`insertPackedCell`): each copies the whole page, so
    /// a node that takes many (a large transaction's index entries) is laid out instead, once.
    @exclusivity(unchecked) var packedInserts = 0
    /// Where a packed node's page starts in its buffer: a removal moves whichever side of the
    /// removed cell is shorter, so the page's start moves too (0 when not packed).
    @exclusivity(unchecked) var origin = 0
    /// The lowest byte of the cell area.
    @exclusivity(unchecked) var cellsStart: Int
    @exclusivity(unchecked) var garbage = 0
    /// The size of the page this node would encode to with its current prefix.
    @exclusivity(unchecked) var encodedSize = PageLayout.headerSize
    /// For a branch: child i when it is changed in this transaction; nil when it is the
    /// written page named in cell i.
    @exclusivity(unchecked) var children: [Node?] = []
    let budget: DirtyBudget
    #if STRATA_INTERNAL_CHECKS || DEBUG
    /// The page this node was copied from (nil for a new node), for the invariant checker's
    /// messages (Node+Invariants.swift).
    var copiedFrom: UInt64?
    #endif

    static let initialCapacity = 8192
    /// A packed leaf of more cells than this is laid out with their lengths before a removal or
    /// an insertion (each moves every slot of a packed leaf).
    static let packedEditLimit = 128
    /// A packed node takes at most this many cells in place; the next one lays it out.
    static let packedInsertLimit = 4
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
        // (Eight slots a step: no slot passes 16 bits, the node's capacity being at most 64 KiB.)
        Node.raiseSlots(buffer + slotsStart, count: count, by: UInt16(truncatingIfNeeded: shift))
        encodedSize = length
        if length == PageLayout.minimumSize { accountForPadding() }
        if !isLeaf { children = Node.noChildren(count) }
    }

    /// `count` nil children (for a branch copied from its page: two or three a one-row
    /// commit, W2), through `Array.filled` (see there).
    static func noChildren(_ count: Int) -> [Node?] { .filled(with: nil, count: count) }

    /// A page of the least size may have zeros past its cells (`encodeCells` pads a shorter
    /// one): they are garbage, not part of the page the node would encode to.
    private func accountForPadding() {
        var cellBytes = 0
        for i in 0..<count { cellBytes += cellSize(i) }
        garbage = Swift.max(0, capacity - cellsStart - cellBytes)
        encodedSize -= garbage
    }

    /// The capacity of a node copied from a page of at most `bytes`: the usual size (a spare
    /// buffer) while it leaves room to grow, twice the bytes otherwise.
    static func copyCapacity(_ bytes: Int) -> Int {
        bytes + bytes / 2 <= initialCapacity ? initialCapacity : Swift.min(largestCapacity, 2 * bytes)
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

    var prefix: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer + origin + PageLayout.headerSize, count: prefixLength) }

    func setCount(_ n: Int) {
        count = n
        PageHeaderWriter(buffer).setCount(n)
    }

    var slotsStart: Int { PageLayout.headerSize + prefixLength }
    var slotsEnd: Int { slotsStart + 2 * count }

    @inline(__always) func slot(_ i: Int) -> Int {
        Int(UInt16(littleEndian: buffer.loadUnaligned(fromByteOffset: slotsStart + 2 * i, as: UInt16.self)))
    }

    @inline(__always) func setSlot(_ i: Int, _ position: Int) {
        buffer.storeBytes(of: UInt16(truncatingIfNeeded: position).littleEndian, toByteOffset: slotsStart + 2 * i, as: UInt16.self)
    }

    /// The size of cell `i` in bytes.
    func cellSize(_ i: Int) -> Int {
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
}
