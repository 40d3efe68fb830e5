// Leaving the packed mode: a packed leaf's cells laid out with their lengths (`unpack`), in a
// buffer of their own, before any change that a packed node cannot take in place.

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
}
