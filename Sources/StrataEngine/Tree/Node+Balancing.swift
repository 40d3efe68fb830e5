// Splitting a node in two (by bytes, or only its last cell in a load in key order) and merging
// a node with its right neighbour.

extension Node {
    /// Moves the upper half of the cells (by bytes) into a new node; returns it with its first key.
    /// With `lastOnly` (a key appended at the end, as in a load in key order), only the last
    /// cell moves when the rest still fits `target`: the left node stays full, not half empty.
    func splitOff(lastOnly: Bool = false, target: Int = .max) -> (separator: [UInt8], right: Node) {
        // Whether the rest fits without the last cell, measured in the layout the node has now:
        // a packed node (which took cells in place) measured once laid out would count each
        // cell's lengths too, and split a page in the middle where its packed rest fits. (A
        // packed node's last cell starts where the rest ends.)
        let restFits = lastOnly && count >= 2
            && (isPacked ? view.slot(count - 1) : encodedSize - cellSize(count - 1)) - 2 <= target
        if isPacked { unpack() }
        var cut = 1
        var bytes = PageLayout.headerSize
        let half = encodedSize / 2
        if restFits {
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
        while count > cut { removeCellUnchecked(at: count - 1) }
        checkAfterEdit("splitOff")
        right.checkAfterEdit("splitOff (the new right node)")
        return (separator, right)
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
        checkAfterEdit("absorb")
    }
}
