// The prefix every key of a node shares: whether a key has it, an empty node given one, and
// the prefix put back into every key (`expand`) before a key without it comes in.

extension Node {
    /// True when `key` starts with this node's prefix.
    @inline(__always)
    func sharesPrefix(_ key: UnsafeRawBufferPointer) -> Bool {
        prefixLength == 0 || (key.count >= prefixLength && compareBytes(UnsafeRawBufferPointer(rebasing: key[0..<prefixLength]), prefix) == 0)
    }

    /// Puts the prefix back into every key (before a key without it comes in).
    func expand() {
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

    /// Gives an empty node a prefix.
    func takePrefix(_ bytes: UnsafeRawBufferPointer) {
        guard count == 0, bytes.count > 0, let source = bytes.baseAddress else { return }
        (buffer + PageLayout.headerSize).copyMemory(from: source, byteCount: bytes.count)
        PageHeaderWriter(buffer).setPrefixLength(bytes.count)
        prefixLength = bytes.count
        encodedSize = PageLayout.headerSize + bytes.count
    }
}
