/// A position in a tree, moved one cell at a time, reading pages where they lie.
///
/// In a write transaction the tree may hold nodes being changed: a cursor remembers the
/// tree's version and refuses to move once the tree has changed (its nodes may have moved).
struct TreeCursor {
    private struct Frame {
        var view: PageView
        var node: Node?
        var index: Int
    }

    /// The branch frames from the root down to the leaf's parent; the leaf's frame is kept
    /// apart, so that a step changes one field rather than the last element of an array.
    private var parents: [Frame] = []
    private var leaf: Frame?
    private let root: TreeRef?
    private let pages: PageSource
    private let tree: MutableTree?
    private var version: Int

    init(root: TreeRef?, pages: PageSource, tree: MutableTree? = nil) {
        self.root = tree?.root ?? root
        self.pages = pages
        self.tree = tree
        self.version = tree?.version ?? 0
        parents.reserveCapacity(6)
    }

    @inline(__always) var isValid: Bool { leaf != nil }

    /// The leaf and the cell the cursor is on (meaningful only while `isValid`; otherwise an
    /// empty leaf and 0).
    @inline(__always) var view: PageView { leaf?.view ?? TreeCursor.noLeaf.view }
    @inline(__always) var index: Int { leaf?.index ?? 0 }

    /// What `view` is when the cursor is on no cell: a leaf without cells.
    nonisolated(unsafe) private static let noLeaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))

    private func checkVersion() throws {
        if let tree, tree.version != version {
            throw StoreError(.invalidArgument, "The write transaction changed this tree since the cursor was made; collect what you need first, then change, or make a new cursor.", path: pages.path)
        }
    }

    private func resolve(_ frame: Frame, _ i: Int) throws -> (PageView, Node?) {
        if let node = frame.node, let child = node.children[i] { return (child.view, child) }
        return (try pages.page(at: frame.view.child(i)), nil)
    }

    private func top() throws -> (PageView, Node?)? {
        guard let root else { return nil }
        switch root {
        case .node(let node): return (node.view, node)
        case .page(let offset): return (try pages.page(at: offset), nil)
        }
    }

    /// Positions at the first cell whose key is >= `key` (> when not inclusive); nil: the first cell.
    mutating func seek(atLeast key: UnsafeRawBufferPointer?, inclusive: Bool = true) throws {
        try checkVersion()
        parents.removeAll(keepingCapacity: true)
        leaf = nil
        guard var (view, node) = try top() else { return }
        var depth = 0
        while !view.isLeaf {
            let i = key.map { view.childIndex(for: $0) } ?? 0
            let frame = Frame(view: view, node: node, index: i)
            parents.append(frame)
            (view, node) = try resolve(frame, i)
            depth += 1
            if depth > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
        }
        var i = 0
        if let key {
            let (at, found) = view.search(key)
            i = found && !inclusive ? at + 1 : at
        }
        leaf = Frame(view: view, node: node, index: i)
        if i >= view.count { try advanceLeaf(forward: true) }
    }

    /// Positions at the last cell whose key is <= `key` (< when not inclusive); nil: the last cell.
    mutating func seek(atMost key: UnsafeRawBufferPointer?, inclusive: Bool = true) throws {
        try checkVersion()
        parents.removeAll(keepingCapacity: true)
        leaf = nil
        guard var (view, node) = try top() else { return }
        var depth = 0
        while !view.isLeaf {
            let i = key.map { view.childIndex(for: $0) } ?? view.count - 1
            let frame = Frame(view: view, node: node, index: i)
            parents.append(frame)
            (view, node) = try resolve(frame, i)
            depth += 1
            if depth > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
        }
        var i = view.count - 1
        if let key {
            let (at, found) = view.search(key)
            i = found && inclusive ? at : at - 1
        }
        leaf = Frame(view: view, node: node, index: i)
        if i < 0 { try advanceLeaf(forward: false) }
    }

    mutating func next() throws {
        guard leaf != nil else { return }
        try checkVersion()
        leaf?.index += 1
        if index >= view.count { try advanceLeaf(forward: true) }
    }

    mutating func previous() throws {
        guard leaf != nil else { return }
        try checkVersion()
        leaf?.index -= 1
        if index < 0 { try advanceLeaf(forward: false) }
    }

    /// Calls `body` with each cell from the current one on, in the walk's direction, a leaf at
    /// a time: within a leaf a step is an index, not a move of the cursor (a move cost about a
    /// hundred instructions per row of a scan, W4 in Docs/Benchmarks.md). When `body` returns
    /// false the cursor stays on the cell it was given; otherwise it ends past the last cell
    /// (not valid). As `next()`, it refuses to go on once a write transaction changed the tree.
    mutating func scan(forward: Bool, _ body: (PageView, Int) throws -> Bool) throws {
        while let frame = leaf {
            let view = frame.view
            var i = frame.index
            let n = view.count
            while i >= 0 && i < n {
                try checkVersion()
                guard try body(view, i) else {
                    leaf?.index = i
                    return
                }
                i += forward ? 1 : -1
            }
            try checkVersion()
            try advanceLeaf(forward: forward)
        }
    }

    /// Moves `n` cells forward (or backward), a leaf at a time where it can: the cells passed
    /// over are not read, only each leaf's count. Returns how many steps it took: fewer than
    /// `n` when it stepped off the end of the tree (the cursor is then not valid), and then
    /// the number of cells from where it stood to the end.
    mutating func skip(_ n: Int, forward: Bool) throws -> Int {
        guard n > 0, leaf != nil else { return 0 }
        try checkVersion()
        var moved = 0
        while moved < n {
            let i = index
            // Cells after this one in the walk's direction, in this leaf.
            let room = forward ? view.count - 1 - i : i
            if n - moved <= room {
                leaf?.index = forward ? i + (n - moved) : i - (n - moved)
                return n
            }
            moved += room + 1
            try advanceLeaf(forward: forward)
            if leaf == nil { return moved }   // stepped off the end: every cell from the start was passed
        }
        return moved
    }

    /// Moves to the first (or last) cell of the next (or previous) leaf.
    private mutating func advanceLeaf(forward: Bool) throws {
        leaf = nil
        while let parent = parents.last {
            let i = parent.index + (forward ? 1 : -1)
            guard i >= 0 && i < parent.view.count else {
                parents.removeLast()
                continue
            }
            parents[parents.count - 1].index = i
            var (view, node) = try resolve(parents[parents.count - 1], i)
            while !view.isLeaf {
                let j = forward ? 0 : view.count - 1
                let frame = Frame(view: view, node: node, index: j)
                parents.append(frame)
                (view, node) = try resolve(frame, j)
                if parents.count > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
            }
            // Written pages are never empty; a node may be, while its transaction changes it.
            if view.count == 0 { continue }
            leaf = Frame(view: view, node: node, index: forward ? 0 : view.count - 1)
            return
        }
    }

    /// The current cell's key suffix (after the leaf's prefix), value and flags.
    @inline(__always) var cell: (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8) { view.leafCell(index) }

    /// Replaces `key`'s contents with the current cell's whole key.
    @inline(__always)
    func copyKey(into key: inout [UInt8]) {
        key.removeAll(keepingCapacity: true)
        view.appendKey(index, to: &key)
    }

    /// The current key read as a big-endian integer of its last 8 bytes (a row id); nil when
    /// the key is not 8 bytes long.
    @inline(__always)
    var rowKey: RowID? {
        let v = view
        return TreeCursor.rowID(prefix: v.prefix, suffix: v.suffix(index))
    }

    /// The current cell read once: its key as a row id (nil when the key is not 8 bytes
    /// long), its value and flags.
    @inline(__always)
    var rowCell: (row: RowID?, value: UnsafeRawBufferPointer, flags: UInt8) {
        let v = view
        let c = v.leafCell(index)
        return (TreeCursor.rowID(prefix: v.prefix, suffix: c.suffix), c.value, c.flags)
    }

    /// A row key (the big-endian row id, split into a page's prefix and a cell's suffix) as
    /// the row id. Both parts lie in a page (or a node's page image) at least 8 bytes past its
    /// start (its header is `PageLayout.headerSize`, 10 bytes), so each is read as the 8 bytes
    /// that end where it ends: the bytes before it fall out of the shift or the mask. No copy,
    /// no loop (two copies of memory cost two calls per scanned row).
    @inline(__always)
    static func rowID(prefix: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer) -> RowID? {
        let p = prefix.count, s = suffix.count
        guard p + s == 8 else { return nil }
        let high = p == 0 ? 0 : UInt64(bigEndian: (prefix.baseAddress.unsafelyUnwrapped + p - 8).loadUnaligned(as: UInt64.self))
        let low = s == 0 ? 0 : UInt64(bigEndian: (suffix.baseAddress.unsafelyUnwrapped + s - 8).loadUnaligned(as: UInt64.self))
        let bits = UInt64(8 * s)
        return (high << bits) | (low & ((1 << bits) &- 1))
    }
}
