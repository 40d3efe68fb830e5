// Leaving the packed mode: a packed leaf's cells laid out with their lengths (`unpack`), in a
// buffer of their own, before any change that a packed node cannot take in place; and the one
// insertion a packed node takes in place (`insertPackedCell`).

extension Node {
    /// Lays a packed node's cells out with their lengths (it must be packed), in a buffer of its own, after the
    /// page's prefix, which every key keeps sharing (a node's cell takes at most 5 bytes more
    /// than a packed one: its two length varints).
    func unpack() {
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

    /// Inserts a leaf cell at position `i` of a packed node, keeping it packed, when the cell
    /// fits the page's layout as it is: the key starts with the page's prefix, its suffix (shape
    /// 1) or its value (shape 2) has the page's width, the node has fewer cells than
    /// `packedEditLimit` (every slot moves), took fewer than `packedInsertLimit` in place before
    /// (each copies the page) and the page stays within 14-bit offsets. The
    /// page is copied into a buffer of its new length with a gap for the slot and one for the
    /// cell; the slots before `i` go up by 2, those from `i` by 2 and the cell's size. False,
    /// and the node unchanged, otherwise.
    ///
    /// A commit of a few rows changes a leaf or two of each tree: laying each out with its
    /// lengths (`unpack`) and packing it again (`encode`) was about a third of a one-object
    /// save's instructions (W2, Docs/Benchmarks.md, "Costs"). Kept packed, the node is written
    /// as it lies (`sealedPackedPage`).
    func insertPackedCell(at i: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) -> Bool {
        let n = count
        guard n < Node.packedEditLimit, packedInserts < Node.packedInsertLimit, sharesPrefix(key) else { return false }
        let page = view
        let suffix = UnsafeRawBufferPointer(rebasing: key[prefixLength...])
        let cellSize: Int
        switch page.shape {
        case PageLayout.packedShapeFixedSuffix:
            guard suffix.count == page.width else { return false }
            cellSize = suffix.count + value.count
        case PageLayout.packedShapeFixedValue:
            guard value.count == page.width else { return false }
            cellSize = suffix.count + value.count
        default:
            cellSize = Varint.size(UInt64(suffix.count)) + suffix.count + value.count
        }
        let old = buffer + origin
        let length = page.length
        let newLength = length + 2 + cellSize
        guard newLength <= PageLayout.packedMaximumSize else { return false }
        let slots = page.slotsStart, head = slots + 2 * n
        let start = i < n ? page.slot(i) : length
        let fresh = budget.allocate(newLength)
        // Header, prefix, shape and the slots before `i`; the slots from `i`, one slot on.
        fresh.copyMemory(from: old, byteCount: slots + 2 * i)
        (fresh + slots + 2 * i + 2).copyMemory(from: old + slots + 2 * i, byteCount: 2 * (n - i))
        // The cells before cell `i`, the new cell, the cells from `i`.
        (fresh + head + 2).copyMemory(from: old + head, byteCount: start - head)
        var p = fresh + start + 2
        if page.shape == PageLayout.packedShapeVarint { p += Varint.write(UInt64(suffix.count), to: p) }
        Node.copy(suffix, to: p)
        Node.copy(value, to: p + suffix.count)
        (fresh + start + 2 + cellSize).copyMemory(from: old + start, byteCount: length - start)
        // (No offset passes 14 bits, so no lane carries into its flags or into the next slot.)
        Node.raiseSlots(fresh + slots, count: i, by: 2)
        Node.raiseSlots(fresh + slots + 2 * i + 2, count: n - i, by: UInt16(truncatingIfNeeded: 2 + cellSize))
        fresh.storeBytes(of: UInt16(truncatingIfNeeded: start + 2 | Int(flags & 3) << 14).littleEndian, toByteOffset: slots + 2 * i, as: UInt16.self)
        let header = PageHeaderWriter(fresh)
        header.setLength(newLength)
        header.setCount(n + 1)
        budget.release(buffer, capacity: capacity)
        budget.bytes += newLength - capacity
        buffer = fresh
        capacity = newLength
        origin = 0
        count = n + 1
        encodedSize = newLength
        packedInserts += 1
        return true
    }
}
