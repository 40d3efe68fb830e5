// The copy-on-write B+trees: one per collection (rows by row id), one per index, and the
// system tree (blobs and metadata). A store's catalog names each tree's root page.
//
// A write transaction never changes a written page: it copies the pages on the path it
// changes into nodes (Node.swift) and, at commit or when they pass its memory budget, writes
// them children first, so a tree's new root is written last. Readers holding older roots
// are never disturbed.

/// A tree's root or a branch's child: a written page, or a node of the write transaction.
enum TreeRef {
    case page(UInt64)
    case node(Node)

    init?(root offset: UInt64) {
        guard offset != 0 else { return nil }
        self = .page(offset)
    }
}

/// Where a transaction finds written pages and value frames: the mapped file, each page
/// checked the first time this process reads it, and (in a write transaction) the pages and
/// values it wrote itself, after `trustedFrom`.
final class PageSource {
    @exclusivity(unchecked) private(set) var map: MappedFile
    /// Everything a transaction reads lies before this offset.
    @exclusivity(unchecked) private(set) var limit: UInt64
    /// Bytes at and after this offset were written by this transaction: not checked again.
    let trustedFrom: UInt64
    let writer: AppendWriter?

    init(map: MappedFile, limit: UInt64, writer: AppendWriter? = nil) {
        self.map = map
        self.limit = limit
        self.writer = writer
        trustedFrom = writer?.committedEnd ?? .max
    }

    var path: String { map.path }

    @inline(__always)
    func page(at offset: UInt64) throws -> PageView {
        if offset < trustedFrom { return try map.page(at: offset, limit: Swift.min(limit, trustedFrom)) }
        // A page this transaction wrote out (to stay under its budget) and flushed.
        guard offset < limit, limit - offset >= UInt64(PageLayout.minimumSize), limit <= UInt64(map.count),
              offset % UInt64(PageLayout.alignment) == 0 else {
            throw StoreError.corrupt("a page pointer (\(offset)) points past this transaction's pages", path: path, offset: offset)
        }
        return PageView(map.base + Int(offset))
    }

    /// Follows the writer after it wrote pages out.
    func follow(_ writer: AppendWriter) throws {
        limit = writer.flushedEnd
        if UInt64(map.count) < limit { map = try writer.file.mapping(covering: limit) }
    }

    /// Calls `body` with the payload of the value frame at `location`.
    func withValue<R>(_ location: ValueLocation, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if location.offset < trustedFrom {
            return try body(try map.frame(at: location.offset, length: Int(location.length), limit: Swift.min(limit, trustedFrom)))
        }
        guard let writer else {
            throw StoreError.corrupt("a value pointer (\(location.offset)) points outside the commit being read", path: path, offset: location.offset)
        }
        return try writer.withUncommittedBytes(at: location.offset, count: Int(location.length)) { raw in
            guard raw.count >= ValueFrame.headerSize else {
                throw StoreError.corrupt("a value of this transaction is malformed", path: path, offset: location.offset)
            }
            return try body(UnsafeRawBufferPointer(rebasing: raw[ValueFrame.headerSize...]))
        }
    }
}

/// A position in a leaf: the leaf (a page or a node) and the index of a cell in it.
struct LeafPosition {
    let view: PageView
    let index: Int
    /// Keeps a node's buffer alive while `view` points into it.
    let node: Node?

    var value: UnsafeRawBufferPointer { view.leafCell(index).value }
    var flags: UInt8 { view.leafCell(index).flags }
}

enum TreeSearch {
    /// The leaf cell holding `key`, if any.
    @inline(__always)
    static func find(_ key: UnsafeRawBufferPointer, root: TreeRef?, pages: PageSource) throws -> LeafPosition? {
        guard var ref = root else { return nil }
        var depth = 0
        while true {
            switch ref {
            case .page(let offset):
                let view = try pages.page(at: offset)
                if view.isLeaf {
                    let (i, found) = view.search(key)
                    return found ? LeafPosition(view: view, index: i, node: nil) : nil
                }
                ref = .page(view.child(view.childIndex(for: key)))
            case .node(let node):
                let view = node.view
                if node.isLeaf {
                    let (i, found) = view.search(key)
                    return found ? LeafPosition(view: view, index: i, node: node) : nil
                }
                let i = view.childIndex(for: key)
                ref = node.children[i].map { .node($0) } ?? .page(view.child(i))
            }
            depth += 1
            if depth > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
        }
    }
}

/// A tree as a write transaction changes it.
final class MutableTree {
    @exclusivity(unchecked) var root: TreeRef?
    let pages: PageSource
    let budget: DirtyBudget
    /// Bytes of written pages that the changes so far took out of the tree.
    @exclusivity(unchecked) private(set) var supersededBytes: UInt64 = 0
    /// Bytes of pages written by `write(into:)`.
    @exclusivity(unchecked) private(set) var writtenBytes: UInt64 = 0
    /// Counts changes, so that a cursor can tell the tree changed under it.
    @exclusivity(unchecked) private(set) var version = 0
    /// Where the pages `write(into:)` wrote lie.
    @exclusivity(unchecked) var writtenPages: [UInt64] = []

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
    private func changeable(_ ref: TreeRef) throws -> Node {
        switch ref {
        case .node(let node): return node
        case .page(let offset):
            let view = try pages.page(at: offset)
            guard let node = Node(copying: view, budget: budget) else {
                throw StoreError.corrupt("the page at byte \(offset) is too large to change", path: pages.path, offset: offset)
            }
            #if STRATA_INTERNAL_CHECKS
            node.copiedFrom = offset
            #endif
            supersededBytes += UInt64(view.length)
            return node
        }
    }

    private func changeableChild(_ node: Node, _ i: Int) throws -> Node {
        if let child = node.children[i] { return child }
        let child = try changeable(.page(node.view.child(i)))
        node.children[i] = child
        return child
    }

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

    /// The path of the last insert (branch nodes from the root, and the child taken in each),
    /// and its leaf; nil once the tree changed shape.
    @exclusivity(unchecked) private var fingerPath: [(node: Node, index: Int)] = []
    @exclusivity(unchecked) private var fingerLeaf: Node?

    private func forgetFinger() {
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
    private func fingerHolds(_ key: UnsafeRawBufferPointer) -> Bool {
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
    private func fingerBelowHigh(_ key: UnsafeRawBufferPointer) -> Bool {
        if !fingerBoundsRead { readFingerBounds() }
        guard fingerHasHigh else { return true }
        return fingerBounds.withUnsafeBytes { bounds in
            compareBytes(key, UnsafeRawBufferPointer(rebasing: bounds[Swift.max(fingerLowLength, 0)...])) < 0
        }
    }

    /// The cell the last `remove` took out of its leaf (the cells after it moved down one).
    @exclusivity(unchecked) private var lastRemovedIndex = 0

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

    /// Deeper trees are damage (`TreeSearch.find` says the same).
    static let maximumDepth = 64

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

    /// Writes every node, children first, and returns the root page (0 for an empty tree).
    /// The tree then holds written pages only.
    func write(into writer: AppendWriter, scratch: inout [UInt8]) throws -> UInt64 {
        forgetFinger()
        guard let root else { return 0 }
        switch root {
        case .page(let offset): return offset
        case .node(let node):
            version += 1
            let offset = try write(node, into: writer, scratch: &scratch)
            self.root = .page(offset)
            return offset
        }
    }

    private func write(_ node: Node, into writer: AppendWriter, scratch: inout [UInt8]) throws -> UInt64 {
        if !node.isLeaf {
            for i in 0..<node.count {
                if let child = node.children[i] { node.setChild(i, to: try write(child, into: writer, scratch: &scratch)) }
            }
        }
        let offset: UInt64
        if let page = node.sealedPackedPage() {
            writtenBytes += UInt64(page.count)
            offset = try writer.appendAligned(page)
        } else {
            node.encode(into: &scratch)
            writtenBytes += UInt64(scratch.count)
            offset = try writer.appendAligned(scratch)
        }
        writtenPages.append(offset)
        return offset
    }
}
