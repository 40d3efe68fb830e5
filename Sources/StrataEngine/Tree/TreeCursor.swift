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
    /// The leaf and cell the cursor stands on while `onLeaf`; otherwise a leaf without cells.
    /// Not an optional frame: copying and destroying one went through the runtime's generic
    /// witnesses, about a hundred instructions for each leaf a scan entered (W4).
    private var leaf = TreeCursor.offLeaf
    private var onLeaf = false
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

    @inline(__always) var isValid: Bool { onLeaf }

    /// The leaf and the cell the cursor is on (meaningful only while `isValid`; otherwise an
    /// empty leaf and 0).
    @inline(__always) var view: PageView { leaf.view }
    @inline(__always) var index: Int { leaf.index }

    /// What `view` is when the cursor is on no cell: a leaf without cells.
    nonisolated(unsafe) private static let noLeaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
    nonisolated(unsafe) private static let offLeaf = Frame(view: noLeaf.view, node: nil, index: 0)

    private mutating func enter(_ view: PageView, _ node: Node?, at index: Int) {
        leaf = Frame(view: view, node: node, index: index)
        onLeaf = true
    }

    private mutating func leave() {
        leaf = TreeCursor.offLeaf
        onLeaf = false
    }

    private func checkVersion() throws {
        if let tree, tree.version != version {
            throw StoreError(.invalidArgument, "The write transaction changed this tree since the cursor was made; collect what you need first, then change, or make a new cursor.", path: pages.path)
        }
    }

    /// Child `i` of a branch frame. Static: as a method of a cursor that `advanceLeaf` was
    /// changing, it made a copy of the whole cursor for each leaf entered.
    @inline(__always)
    private static func resolve(_ node: Node?, _ view: PageView, _ i: Int, _ pages: PageSource) throws -> (PageView, Node?) {
        if let node, let child = node.children[i] { return (child.view, child) }
        return (try pages.page(at: view.child(i)), nil)
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
        leave()
        guard var (view, node) = try top() else { return }
        var depth = 0
        while !view.isLeaf {
            let i = key.map { view.childIndex(for: $0) } ?? 0
            parents.append(Frame(view: view, node: node, index: i))
            (view, node) = try TreeCursor.resolve(node, view, i, pages)
            depth += 1
            if depth > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
        }
        var i = 0
        if let key {
            let (at, found) = view.search(key)
            i = found && !inclusive ? at + 1 : at
        }
        enter(view, node, at: i)
        if i >= view.count { try advanceLeaf(forward: true) }
    }

    /// Positions at the last cell whose key is <= `key` (< when not inclusive); nil: the last cell.
    mutating func seek(atMost key: UnsafeRawBufferPointer?, inclusive: Bool = true) throws {
        try checkVersion()
        parents.removeAll(keepingCapacity: true)
        leave()
        guard var (view, node) = try top() else { return }
        var depth = 0
        while !view.isLeaf {
            let i = key.map { view.childIndex(for: $0) } ?? view.count - 1
            parents.append(Frame(view: view, node: node, index: i))
            (view, node) = try TreeCursor.resolve(node, view, i, pages)
            depth += 1
            if depth > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
        }
        var i = view.count - 1
        if let key {
            let (at, found) = view.search(key)
            i = found && inclusive ? at : at - 1
        }
        enter(view, node, at: i)
        if i < 0 { try advanceLeaf(forward: false) }
    }

    mutating func next() throws {
        guard onLeaf else { return }
        try checkVersion()
        leaf.index += 1
        if index >= view.count { try advanceLeaf(forward: true) }
    }

    mutating func previous() throws {
        guard onLeaf else { return }
        try checkVersion()
        leaf.index -= 1
        if index < 0 { try advanceLeaf(forward: false) }
    }

    /// Calls `body` with each cell of a tree of rows from the current one on, in the walk's
    /// direction: its key read as a row id, its value and the value's flags. A leaf at a time:
    /// within a leaf a step is an index, not a move of the cursor (a move cost about a hundred
    /// instructions per row of a scan, W4 in Docs/Benchmarks.md), and a packed leaf's shape and
    /// prefix are read once, not per cell. A key that is not 8 bytes long is corrupt. When `body` returns
    /// false the cursor stays on the cell it was given; otherwise it ends past the last cell
    /// (not valid). As `next()`, it refuses to go on once a write transaction changed the tree.
    mutating func scanRows(forward: Bool, _ body: (RowID, _ value: UnsafeRawBufferPointer, _ flags: UInt8) throws -> Bool) throws {
        try withoutActuallyEscaping(body) { body in
            var sink = ClosureRowSink(body: body)
            try scanRows(forward: forward, into: &sink)
        }
    }

    /// `scanRows(forward:_:)` into a sink of the caller's: a struct whose state the walk keeps
    /// in registers once specialized, where a closure's captured variables were kept on the
    /// stack and reloaded for each row (`RowCursor.forEachBatch`'s `InlineRecords`, W4).
    mutating func scanRows<Sink: RowSink>(forward: Bool, into sink: inout Sink) throws {
        // A copy for the walk, given back when it ends: the copy lives in registers, where the
        // caller's `inout` was read and written through its address for each row.
        var taker = sink
        defer { sink = taker }
        let step = forward ? 1 : -1
        while onLeaf {
            let view = leaf.view
            var i = leaf.index
            let n = view.count
            if view.isPacked && view.shape == PageLayout.packedShapeFixedSuffix && view.prefixLength &+ view.width == 8 {
                // Row leaves: every suffix `w` bytes after a prefix of 8 - w. The prefix's part
                // of the id is read once per leaf; each cell is its slot and the next one.
                let w = view.width, p = view.prefixLength
                let lowMask: UInt64 = w == 8 ? ~0 : (1 << UInt64(8 &* w)) &- 1
                // The prefix's 8 bytes that end where it ends, as in `rowID(prefix:suffix:)`.
                let high = p == 0 ? 0 : UInt64(bigEndian: view.prefix.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: p &- 8, as: UInt64.self))
                let highPart = w == 8 ? 0 : high << UInt64(8 &* w)
                while i >= 0 && i < n {
                    try checkVersion()
                    let cell = view.fixedSuffixCell(i)
                    // The suffix's 8 bytes that end where it ends (a page's header is 10 bytes).
                    let low = UInt64(bigEndian: view.base.loadUnaligned(fromByteOffset: cell.start &+ w &- 8, as: UInt64.self))
                    let value = UnsafeRawBufferPointer(start: view.base + (cell.start &+ w), count: cell.end &- cell.start &- w)
                    guard try taker.take(highPart | (low & lowMask), value, cell.flags) else {
                        leaf.index = i
                        return
                    }
                    i &+= step
                }
            } else {
                while i >= 0 && i < n {
                    try checkVersion()
                    let cell = view.leafCell(i)
                    guard let row = TreeCursor.rowID(prefix: view.prefix, suffix: cell.suffix) else {
                        throw StoreError.corrupt("a row key that is not 8 bytes long", path: pages.path, offset: nil)
                    }
                    guard try taker.take(row, cell.value, cell.flags) else {
                        leaf.index = i
                        return
                    }
                    i &+= step
                }
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
        guard n > 0, onLeaf else { return 0 }
        try checkVersion()
        var moved = 0
        while moved < n {
            let i = index
            // Cells after this one in the walk's direction, in this leaf.
            let room = forward ? view.count - 1 - i : i
            if n - moved <= room {
                leaf.index = forward ? i + (n - moved) : i - (n - moved)
                return n
            }
            moved += room + 1
            try advanceLeaf(forward: forward)
            if !onLeaf { return moved }   // stepped off the end: every cell from the start was passed
        }
        return moved
    }

    /// Moves to the first (or last) cell of the next (or previous) leaf.
    private mutating func advanceLeaf(forward: Bool) throws {
        // The parents are read and changed in place (`parents[k]`), not copied out as frames:
        // each copy of a frame retained its node and copied its view, three copies and two
        // destructions for each leaf a scan entered, with the cursor first reset to `offLeaf`
        // (about a third of the 246 instructions a leaf cost, W4). The cursor leaves its leaf
        // only when no leaf follows, or when reading the next one fails.
        do {
            while !parents.isEmpty {
                let k = parents.count &- 1
                let i = parents[k].index + (forward ? 1 : -1)
                guard i >= 0 && i < parents[k].view.count else {
                    parents.removeLast()
                    continue
                }
                parents[k].index = i
                var (view, node) = try TreeCursor.resolve(parents[k].node, parents[k].view, i, pages)
                while !view.isLeaf {
                    let j = forward ? 0 : view.count - 1
                    parents.append(Frame(view: view, node: node, index: j))
                    (view, node) = try TreeCursor.resolve(node, view, j, pages)
                    if parents.count > 64 { throw StoreError.corrupt("a tree is deeper than 64 levels", path: pages.path, offset: nil) }
                }
                // Written pages are never empty; a node may be, while its transaction changes it.
                if view.count == 0 { continue }
                enter(view, node, at: forward ? 0 : view.count - 1)
                return
            }
        } catch {
            leave()
            throw error
        }
        leave()
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

/// What a walk of a tree of rows hands each cell to (`TreeCursor.scanRows(forward:into:)`):
/// the cell's key as a row id, its value and the value's flags. False stops the walk on that
/// cell.
protocol RowSink {
    mutating func take(_ row: RowID, _ value: UnsafeRawBufferPointer, _ flags: UInt8) throws -> Bool
}

/// A closure as a `RowSink`.
struct ClosureRowSink: RowSink {
    let body: (RowID, UnsafeRawBufferPointer, UInt8) throws -> Bool

    @inline(__always)
    mutating func take(_ row: RowID, _ value: UnsafeRawBufferPointer, _ flags: UInt8) throws -> Bool {
        try body(row, value, flags)
    }
}
