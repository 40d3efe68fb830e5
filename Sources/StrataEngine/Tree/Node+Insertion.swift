// Inserting a cell into a node: a leaf cell for a whole key, a branch cell for a key and a
// child, and the room a cell needs (garbage compacted away first, then a larger buffer).

extension Node {
    /// No bytes: the prefix, suffix or value a cell goes without.
    static var empty: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: nil, count: 0) }

    /// Inserts a leaf cell for the whole key `key` at position `i`.
    func insertLeafCell(at i: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) {
        if isPacked {
            if insertPackedCell(at: i, key: key, value: value, flags: flags) { return checkAfterEdit("insertLeafCell (packed)") }
            unpack()
        }
        if !sharesPrefix(key) { expand() }
        insertCell(at: i, prefix: Node.empty, suffix: UnsafeRawBufferPointer(rebasing: key[prefixLength...]), value: value, flags: flags, child: nil)
        checkAfterEdit("insertLeafCell")
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
        checkAfterEdit("insertBranchCell")
    }

    /// Appends a cell whose key is `prefix` + `suffix` (of keys that already share this node's
    /// prefix: the part after it), written in place.
    func appendCell(prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8, child: UInt64?) {
        insertCell(at: count, prefix: prefix, suffix: suffix, value: value, flags: flags, child: child)
    }

    /// Inserts a cell at position `i` whose stored key is `prefix` + `suffix`.
    func insertCell(at i: Int, prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8, child: UInt64?) {
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

    private func openSlot(at i: Int) {
        let at = slotsStart + 2 * i
        if i < count { (buffer + at + 2).copyMemory(from: buffer + at, byteCount: 2 * (count - i)) }
        setCount(count + 1)
    }

    /// Makes room for one more slot and a cell of `size` bytes.
    func reserve(_ size: Int) {
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
    func compact() {
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
}
