// A tree as a write transaction changes it: its state, lookups, the copy of a page to change,
// and the remembered path of the last change. Inserting, removing and writing are in
// MutableTree+Insertion.swift, MutableTree+Removal.swift and MutableTree+Writing.swift.
//
// A write transaction never changes a written page: it copies the pages on the path it
// changes into nodes (Node.swift) and, at commit or when they pass its memory budget, writes
// them children first, so a tree's new root is written last. Readers holding older roots
// are never disturbed.

/// A tree as a write transaction changes it.
final class MutableTree {
    @exclusivity(unchecked) var root: TreeRef?
    let pages: PageSource
    let budget: DirtyBudget
    /// Bytes of written pages that the changes so far took out of the tree.
    @exclusivity(unchecked) private(set) var supersededBytes: UInt64 = 0
    /// Bytes of pages written by `write(into:)`.
    @exclusivity(unchecked) var writtenBytes: UInt64 = 0
    /// Counts changes, so that a cursor can tell the tree changed under it.
    @exclusivity(unchecked) var version = 0

    /// A node splits when its page would pass this size.
    let targetSize: Int

    init(root: UInt64, pages: PageSource, budget: DirtyBudget, targetSize: Int = PageLayout.targetSize) {
        self.root = TreeRef(root: root)
        self.pages = pages
        self.budget = budget
        self.targetSize = targetSize
    }

    var isDirty: Bool { if case .node? = root { return true } else { return false } }

    /// The leaf cell holding `key`, if any. A key in the range of the last change's leaf is
    /// looked up there, without a descent (a save reads a row just before it changes it, and
    /// its rows often come in order).
    func find(_ key: UnsafeRawBufferPointer) throws -> LeafPosition? {
        if let leaf = fingerLeaf, fingerHolds(key) {
            let view = leaf.view
            let (i, found) = view.search(key)
            return found ? LeafPosition(view: view, index: i, node: leaf) : nil
        }
        return try TreeSearch.find(key, root: root, pages: pages)
    }

    /// A node that may be changed: the node itself, or a copy of the page.
    func changeable(_ ref: TreeRef) throws -> Node {
        switch ref {
        case .node(let node): return node
        case .page(let offset):
            let view = try pages.page(at: offset)
            guard let node = Node(copying: view, budget: budget) else {
                throw StoreError.corrupt("the page at byte \(offset) is too large to change", path: pages.path, offset: offset)
            }
            #if STRATA_INTERNAL_CHECKS || DEBUG
            node.copiedFrom = offset
            #endif
            supersededBytes += UInt64(view.length)
            return node
        }
    }

    func changeableChild(_ node: Node, _ i: Int) throws -> Node {
        if let child = node.children[i] { return child }
        let child = try changeable(.page(node.view.child(i)))
        node.children[i] = child
        return child
    }

    /// The path of the last insert (branch nodes from the root, and the child taken in each),
    /// and its leaf; nil once the tree changed shape.
    @exclusivity(unchecked) var fingerPath: [(node: Node, index: Int)] = []
    @exclusivity(unchecked) var fingerLeaf: Node?

    func forgetFinger() {
        fingerLeaf = nil
        fingerPath.removeAll(keepingCapacity: true)
        fingerBoundsRead = false
    }

    /// The remembered leaf's bounds, copied from the path the first time they are needed (a
    /// path stays as it is until it is forgotten): the low key, then the high key.
    @exclusivity(unchecked) private var fingerBounds: [UInt8] = []
    /// The low key's length (-1: the leaf is the first at every level, and has none).
    @exclusivity(unchecked) private var fingerLowLength = -1
    @exclusivity(unchecked) private var fingerHasHigh = false
    @exclusivity(unchecked) private var fingerBoundsRead = false

    /// True when `key` belongs in the remembered leaf: at or above the separator before it
    /// and below the one after it, at the deepest level that has each.
    func fingerHolds(_ key: UnsafeRawBufferPointer) -> Bool {
        if !fingerBoundsRead { readFingerBounds() }
        return fingerBounds.withUnsafeBytes { bounds in
            let low = Swift.max(fingerLowLength, 0)
            if fingerLowLength >= 0, compareBytes(key, UnsafeRawBufferPointer(rebasing: bounds[0..<low])) < 0 { return false }
            if fingerHasHigh, compareBytes(key, UnsafeRawBufferPointer(rebasing: bounds[low...])) >= 0 { return false }
            return true
        }
    }

    /// `fingerHolds` without the low bound: true when `key` is below the separator after the
    /// remembered leaf.
    func fingerBelowHigh(_ key: UnsafeRawBufferPointer) -> Bool {
        if !fingerBoundsRead { readFingerBounds() }
        guard fingerHasHigh else { return true }
        return fingerBounds.withUnsafeBytes { bounds in
            compareBytes(key, UnsafeRawBufferPointer(rebasing: bounds[Swift.max(fingerLowLength, 0)...])) < 0
        }
    }

    /// The cell the last `remove` took out of its leaf (the cells after it moved down one).
    @exclusivity(unchecked) var lastRemovedIndex = 0

    /// Copies the whole keys (the node's prefix and the cell's suffix) of the separators
    /// around the remembered leaf.
    private func readFingerBounds() {
        fingerBounds.removeAll(keepingCapacity: true)
        fingerLowLength = -1
        fingerHasHigh = false
        for (node, i) in fingerPath.reversed() where i > 0 {
            node.view.appendKey(i, to: &fingerBounds)
            fingerLowLength = fingerBounds.count
            break
        }
        for (node, i) in fingerPath.reversed() where i + 1 < node.count {
            node.view.appendKey(i + 1, to: &fingerBounds)
            fingerHasHigh = true
            break
        }
        fingerBoundsRead = true
    }

    /// Deeper trees are damage (`TreeSearch.find` says the same).
    static let maximumDepth = 64
}
