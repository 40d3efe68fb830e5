// Removing from a write transaction's tree: in the remembered leaf, on from the last removal
// of a run in key order, or after a search that changes nothing; then merging what got small.

extension MutableTree {
    /// Removes `key`; false (changing nothing) when it is not there.
    ///
    /// A key in the range of the last change's leaf is removed there (deletions in row order,
    /// held-back index entries applied in key order). Otherwise one search per level: a
    /// descent that changes nothing finds the key and notes the child it took at each level,
    /// and the descent that copies and changes nodes follows those positions (a page copied
    /// into a node keeps its cells in order) and becomes the remembered path.
    ///
    /// `expecting`: the value the key must have (a unique index entry's row); a key with
    /// another value is not removed, and false is returned as for a missing key.
    @discardableResult
    func remove(_ key: UnsafeRawBufferPointer, expecting value: UnsafeRawBufferPointer? = nil) throws -> Bool {
        if let leaf = fingerLeaf, fingerHolds(key) {
            let view = leaf.view
            let (i, found) = view.search(key)
            guard found, MutableTree.holds(view, i, value) else { return false }
            try removeCell(i, of: leaf, checkingAbove: false)
            return true
        }
        forgetFinger()
        guard let current = root else { return false }
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: MutableTree.maximumDepth + 1) { path in
            guard try locate(key, from: current, path: path, expecting: value) else { return false }
            let (leaf, i) = try descendChanging(from: current, path: path)
            try removeCell(i, of: leaf, checkingAbove: true)
            return true
        }
    }

    /// Where the last removal of a run of keys in ascending order left off: its leaf, and the
    /// cell after the removed one (`removeAscending`).
    struct AscendingRun {
        fileprivate var leaf: Node?
        fileprivate var index = 0
        fileprivate var version = -1
        init() {}
        fileprivate init(leaf: Node?, index: Int, version: Int) {
            self.leaf = leaf
            self.index = index
            self.version = version
        }
    }

    /// `remove(_:expecting:)` for the next key of a run in ascending order. When the key is
    /// in the leaf of the run's last removal and above the cell before the one that removal
    /// left in its place, the leaf is searched from there on, without the finger's low bound
    /// or a search from the first cell: held-back index removals are applied in key order,
    /// often a few cells apart.
    func removeAscending(_ key: UnsafeRawBufferPointer, expecting value: UnsafeRawBufferPointer?, run: inout AscendingRun) throws -> Bool {
        if let leaf = fingerLeaf, run.leaf === leaf, run.version == version, run.index > 0, run.index <= leaf.count {
            let view = leaf.view
            if view.compareWithPrefix(key) == 0,
               compareBytes(view.suffix(run.index - 1), UnsafeRawBufferPointer(rebasing: key[view.prefixLength...])) < 0,
               fingerBelowHigh(key) {
                let (i, found) = view.search(key, from: run.index)
                guard found, MutableTree.holds(view, i, value) else { return false }
                try removeCell(i, of: leaf, checkingAbove: false)
                run = AscendingRun(leaf: fingerLeaf, index: i, version: version)
                return true
            }
        }
        guard try remove(key, expecting: value) else { return false }
        run = AscendingRun(leaf: fingerLeaf, index: lastRemovedIndex, version: version)
        return true
    }

    /// Removes the cell `findChanging` returned, without searching for it again, when nothing
    /// changed the tree since (`version` is still `since`); otherwise removes `key` as
    /// `remove(_:)` does. A deletion finds its row to read it, then removes it: the second
    /// search was a sixth of deleting a row.
    /// (`findChanging` leaves its leaf as the remembered one, and every change since would
    /// have counted in `version`.)
    func removeFound(at index: Int, key: UnsafeRawBufferPointer, since: Int) throws {
        guard since == version, let leaf = fingerLeaf, index < leaf.count else {
            guard try remove(key) else {
                throw StoreError.corrupt("a row found for deletion is no longer in its tree", path: pages.path, offset: nil)
            }
            return
        }
        try removeCell(index, of: leaf, checkingAbove: false)
    }

    /// Takes cell `i` out of `leaf`, the remembered one, and rebalances above it.
    @inline(__always)
    private func removeCell(_ i: Int, of leaf: Node, checkingAbove: Bool) throws {
        version += 1
        leaf.removeCell(at: i)
        lastRemovedIndex = i
        try rebalance(after: leaf, checkingAbove: checkingAbove)
    }

    /// The leaf cell holding `key`, with the path to its leaf made changeable and remembered
    /// for the change that follows (a deletion reads the row it removes); nil, changing
    /// nothing, when the key is not there.
    func findChanging(_ key: UnsafeRawBufferPointer) throws -> LeafPosition? {
        if let leaf = fingerLeaf, fingerHolds(key) {
            let view = leaf.view
            let (i, found) = view.search(key)
            return found ? LeafPosition(view: view, index: i, node: leaf) : nil
        }
        forgetFinger()
        guard let current = root else { return nil }
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: MutableTree.maximumDepth + 1) { path in
            guard try locate(key, from: current, path: path, expecting: nil) else { return nil }
            let (leaf, i) = try descendChanging(from: current, path: path)
            return LeafPosition(view: leaf.view, index: i, node: leaf)
        }
    }

    /// Copies the nodes on the path `locate` noted into changeable nodes, remembers it
    /// (`fingerPath`, `fingerLeaf`), and returns its leaf and the cell's position there.
    private func descendChanging(from current: TreeRef, path: UnsafeMutableBufferPointer<Int>) throws -> (leaf: Node, index: Int) {
        version += 1
        var node = try changeable(current)
        root = .node(node)
        var level = 0
        while !node.isLeaf {
            fingerPath.append((node, path[level]))
            node = try changeableChild(node, path[level])
            level += 1
        }
        fingerLeaf = node
        return (node, path[level])
    }

    /// True when leaf cell `i` of `view` has `value` (or no value is expected).
    @inline(__always)
    private static func holds(_ view: PageView, _ i: Int, _ value: UnsafeRawBufferPointer?) -> Bool {
        guard let value else { return true }
        return compareBytes(view.leafCell(i).value, value) == 0
    }

    /// Finds `key` without changing anything, noting in `path` the child taken at each level
    /// and, at the leaf's level, the key's cell. False when the key is not there.
    private func locate(_ key: UnsafeRawBufferPointer, from top: TreeRef, path: UnsafeMutableBufferPointer<Int>,
                        expecting value: UnsafeRawBufferPointer?) throws -> Bool {
        var ref = top
        for level in 0...MutableTree.maximumDepth {
            let view: PageView, node: Node?
            switch ref {
            case .page(let offset): view = try pages.page(at: offset); node = nil
            case .node(let n): view = n.view; node = n
            }
            if view.isLeaf {
                let (i, found) = view.search(key)
                path[level] = i
                return found && MutableTree.holds(view, i, value)
            }
            let i = view.childIndex(for: key)
            path[level] = i
            ref = node.flatMap { $0.children[i] }.map { .node($0) } ?? .page(view.child(i))
        }
        throw StoreError.corrupt("a tree is deeper than \(MutableTree.maximumDepth) levels", path: pages.path, offset: nil)
    }

    /// After a cell left `leaf`, the end of `fingerPath`: on the way up, an emptied node leaves
    /// its parent and a small one merges with a neighbour; then a root with one child gives
    /// way to it. A change of shape forgets the path; otherwise it stays for the next change.
    ///
    /// `checkingAbove`: every level is looked at (after a descent). A removal through the
    /// remembered path stops at the first level that did not change, as nothing above it did
    /// (merging is for space, not for correctness: a descent looks at every level again).
    private func rebalance(after leaf: Node, checkingAbove: Bool) throws {
        // (The common case, written out: a leaf that is neither empty nor small changes nothing above.)
        if !checkingAbove, leaf.count > 0, leaf.encodedSize >= targetSize / 4 { return }
        var child = leaf
        var reshaped = false
        do {
            for (node, i) in fingerPath.reversed() {
                if try settle(child, at: i, in: node) { reshaped = true } else if !checkingAbove { break }
                child = node
            }
        } catch {
            forgetFinger()
            throw error
        }
        // Shrink the tree from the top: a branch with one child gives way to the child.
        while case .node(let n)? = root, !n.isLeaf, n.count == 1 {
            root = n.children[0].map { .node($0) } ?? .page(n.view.child(0))
            reshaped = true
        }
        if case .node(let n)? = root, n.count == 0 { root = nil; reshaped = true }
        if reshaped { forgetFinger() }
    }

    /// Removes `child` (cell `i` of `node`) when it is empty, or merges it with a neighbour when
    /// it is small and both fit in one page. True when `node` changed.
    private func settle(_ child: Node, at i: Int, in node: Node) throws -> Bool {
        if child.count == 0 {
            node.removeCell(at: i)
            if i == 0 && node.count > 0 { node.clearFirstKey() }
            return true
        }
        guard child.encodedSize < targetSize / 4, node.count > 1 else { return false }
        let siblingIndex = i > 0 ? i - 1 : i + 1
        let siblingSize: Int
        if let sibling = node.children[siblingIndex] {
            siblingSize = sibling.encodedSize
        } else {
            siblingSize = try pages.page(at: node.view.child(siblingIndex)).nodeSizeEstimate
        }
        guard siblingSize + child.encodedSize <= targetSize else { return false }
        let sibling = try changeableChild(node, siblingIndex)
        let leftIndex = Swift.min(i, siblingIndex)
        let (left, right) = siblingIndex < i ? (sibling, child) : (child, sibling)
        let separator = node.view.key(leftIndex + 1)
        separator.withUnsafeBytes { left.absorb(right, separator: $0) }
        node.removeCell(at: leftIndex + 1)
        node.children[leftIndex] = left
        return true
    }
}
