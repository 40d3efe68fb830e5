// Inserting into a write transaction's tree: straight into the remembered leaf when the key
// falls in it, else down a copied path; then the splits on the way back up.

extension MutableTree {
    /// A node splits when its page would pass the target size and it has cells enough for two
    /// nodes: a leaf two, a branch four (two children each). A branch of two or three long keys
    /// (index keys run to 2038 bytes) passes the target, and splitting it would leave branches
    /// of one child, each split then adding a level.
    private func needsSplit(_ node: Node) -> Bool { node.encodedSize > targetSize && node.count >= (node.isLeaf ? 2 : 4) }

    /// Inserts `key` with `value`, or replaces the value it has.
    ///
    /// Keys often come in order (new rows, a transaction's index entries at commit), so the
    /// tree remembers the path of its last insert: a key inside the range of that insert's
    /// leaf goes straight to the leaf, without a search at each level. Only a split changes
    /// the shape of the tree on the way: the remembered path goes with any split, merge or
    /// write (`finger`). Removals and lookups use the same path.
    ///
    /// `new`: the caller knows the key is not in the tree; finding it there is damage
    /// (`.corrupt`, thrown before the tree changes).
    func insert(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt8 = 0, new: Bool = false) throws {
        version += 1
        if let leaf = fingerLeaf, fingerHolds(key) {
            try insert(key, value, flags, new: new, into: leaf)
            return
        }
        fingerLeaf = nil
        guard let current = root else {
            let leaf = Node(isLeaf: true, budget: budget)
            leaf.appendLeafCell(key: key, value: value, flags: flags)
            root = .node(leaf)
            return
        }
        let top = try changeable(current)
        root = .node(top)
        forgetFinger()
        var node = top
        while !node.isLeaf {
            guard fingerPath.count < MutableTree.maximumDepth else {
                fingerPath.removeAll()
                throw StoreError.corrupt("a tree is deeper than \(MutableTree.maximumDepth) levels", path: pages.path, offset: nil)
            }
            let i = node.view.childIndex(for: key)
            fingerPath.append((node, i))
            node = try changeableChild(node, i)
        }
        fingerLeaf = node
        try insert(key, value, flags, new: new, into: node)
    }

    /// Inserts into `leaf`, the end of `fingerPath`, and splits what grew too large on the
    /// way back up (a new root when the top splits). A split forgets the path.
    private func insert(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ flags: UInt8, new: Bool, into leaf: Node) throws {
        let (i, found) = MutableTree.position(of: key, in: leaf.view)
        if found && new {
            throw StoreError.corrupt("a key the catalog says was never written is in a tree", path: pages.path, offset: nil)
        }
        if found { leaf.replaceValue(at: i, with: value, flags: flags) } else { leaf.insertLeafCell(at: i, key: key, value: value, flags: flags) }
        // A leaf that needs no split leaves every node above as it was (a node only grows by
        // a child's split, and is split then if it must be).
        if !needsSplit(leaf) { return }
        // True while the key went in as the last cell of each node so far: then a split
        // leaves the left node full (keys inserted in ascending order fill their pages).
        var atEnd = !found && i == leaf.count - 1
        var child = leaf
        var split = false
        for (node, i) in fingerPath.reversed() {
            if needsSplit(child) {
                let (separator, right) = child.splitOff(lastOnly: atEnd, target: targetSize)
                separator.withUnsafeBytes { node.insertBranchCell(at: i + 1, key: $0, child: 0, node: right) }
                atEnd = atEnd && i + 1 == node.count - 1
                split = true
            } else {
                atEnd = false
            }
            child = node
        }
        if needsSplit(child) {
            let (separator, right) = child.splitOff(lastOnly: atEnd, target: targetSize)
            let newRoot = Node(isLeaf: false, budget: budget)
            newRoot.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: 0, node: child)
            separator.withUnsafeBytes { newRoot.insertBranchCell(at: 1, key: $0, child: 0, node: right) }
            root = .node(newRoot)
            split = true
        }
        if split { forgetFinger() }
    }

    /// Where `key` goes in a leaf, and whether it is there: past the last cell when it is above
    /// every key (keys often come in ascending order: one comparison then spares the search).
    @inline(__always)
    private static func position(of key: UnsafeRawBufferPointer, in view: PageView) -> (index: Int, found: Bool) {
        let n = view.count
        if n > 0 {
            let c = view.compareWithPrefix(key)
            if c > 0 || (c == 0 && compareBytes(view.suffix(n - 1), UnsafeRawBufferPointer(rebasing: key[view.prefixLength...])) < 0) {
                return (n, false)
            }
        }
        return view.search(key)
    }
}
