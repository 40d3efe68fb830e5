// Changing a cell in place: a leaf value replaced (in place when it keeps its size, or in a
// packed node its length), a branch cell's child set once written, branch cell 0's key cleared.

extension Node {
    /// Replaces the value of leaf cell `i`, keeping its key.
    func replaceValue(at i: Int, with value: UnsafeRawBufferPointer, flags: UInt8) {
        defer { checkAfterEdit("replaceValue") }
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
            removeCellUnchecked(at: i)
            insertCell(at: i, prefix: Node.empty, suffix: copy, value: value, flags: flags, child: nil)
        }
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

    /// Sets the page that branch cell `i` points to (once its child has been written).
    func setChild(_ i: Int, to offset: UInt64) {
        var p = slot(i)
        let k = Varint.read(buffer, &p)
        (buffer + p + k).storeBytes(of: offset.littleEndian, as: UInt64.self)
        children[i] = nil
        checkAfterEdit("setChild")
    }

    /// Makes branch cell 0's key empty (it means "lowest"), keeping its child.
    func clearFirstKey() {
        guard !isLeaf, count > 0, view.branchCell(0).suffix.count > 0 else { return }
        let (child, node) = (view.child(0), children[0])
        removeCellUnchecked(at: 0)
        insertCell(at: 0, prefix: Node.empty, suffix: Node.empty, value: Node.empty, flags: 0, child: child)
        children.insert(node, at: 0)
        checkAfterEdit("clearFirstKey")
    }
}
