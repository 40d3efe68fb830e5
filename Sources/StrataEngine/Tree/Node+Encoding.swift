// The page a node is written as: its keys' common prefix taken out, as a packed leaf when it
// can be, as it lies when it kept its page's prefix, and otherwise cell by cell; the checksum
// stamped (`PageLayout.makePage`, `PageHeaderWriter.stampChecksum`).

extension Node {
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
        PageLayout.makePage(into: &page, length: total) { base in
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
        PageLayout.makePage(into: &page, length: total) { base in
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
        PageLayout.makePage(into: &page, length: total) { base in
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
        PageLayout.makePage(into: &page, length: total) { base in
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
