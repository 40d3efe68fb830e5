// Removing a cell from a node: its slot closed, its bytes left as garbage; in a packed node
// (few enough cells) closed up in place, so that the node stays packed. Also the shift of many
// slots at once, down here and up for a cell into a packed node or a copied page.

extension Node {
    /// Removes cell `i`.
    func removeCell(at i: Int) {
        removeCellUnchecked(at: i)
        checkAfterEdit("removeCell")
    }

    /// `removeCell` without the invariant check after it, for the operations that remove cells
    /// on the way to their end (`splitOff`, `replaceValue`, `clearFirstKey`), which check the
    /// node once they are done.
    func removeCellUnchecked(at i: Int) {
        // (A leaf of very many small cells is laid out first: each removal from a packed one
        // moves every slot. An index leaf of 2 KiB holds about a hundred.)
        if isPacked && count > Node.packedEditLimit { unpack() }
        if isPacked { return removePackedCell(at: i) }
        let size = cellSize(i)
        garbage += size
        encodedSize -= size + 2
        closeSlot(at: i)
        if !isLeaf { children.remove(at: i) }
    }

    private func closeSlot(at i: Int) {
        let at = slotsStart + 2 * i
        if i + 1 < count { (buffer + at).copyMemory(from: buffer + at + 2, byteCount: 2 * (count - i - 1)) }
        setCount(count - 1)
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
        shiftSlots(p, count: count, by: delta, down: true)
    }

    /// Adds `delta` to each of `count` slots at `p`, as `lowerSlots` subtracts: no slot passes
    /// 16 bits, so none carries into the next.
    @inline(__always)
    static func raiseSlots(_ p: UnsafeMutableRawPointer, count: Int, by delta: UInt16) {
        shiftSlots(p, count: count, by: delta, down: false)
    }

    @inline(__always)
    private static func shiftSlots(_ p: UnsafeMutableRawPointer, count: Int, by delta: UInt16, down: Bool) {
        var j = 0
        #if _endian(little)
        // Eight at a time in a vector register, where slots are in memory order.
        let vector = SIMD8<UInt16>(repeating: delta)
        while j + 8 <= count {
            let slots = p.loadUnaligned(fromByteOffset: 2 * j, as: SIMD8<UInt16>.self)
            p.storeBytes(of: down ? slots &- vector : slots &+ vector, toByteOffset: 2 * j, as: SIMD8<UInt16>.self)
            j += 8
        }
        #endif
        let lanes = UInt64(delta) &* 0x0001_0001_0001_0001
        while j + 4 <= count {
            let word = UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 2 * j, as: UInt64.self))
            p.storeBytes(of: (down ? word &- lanes : word &+ lanes).littleEndian, toByteOffset: 2 * j, as: UInt64.self)
            j += 4
        }
        while j < count {
            let raw = UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * j, as: UInt16.self))
            p.storeBytes(of: (down ? raw &- delta : raw &+ delta).littleEndian, toByteOffset: 2 * j, as: UInt16.self)
            j += 1
        }
    }
}
