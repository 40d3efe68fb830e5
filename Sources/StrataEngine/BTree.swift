// The copy-on-write B+tree: one tree per store holds every key (rows, index entries, blobs,
// metadata), each kind under its own first byte (see TreeKey).
//
// A write transaction never changes a page: it copies the nodes on the path it changes
// ("dirty" nodes, kept in memory) and, at commit, writes them children first, so the new
// root is written last. Readers holding an older root are never disturbed.

/// Finds nodes: dirty ones are in memory, the rest are read (through the cache) from the file.
struct TreeReader {
    let file: StoreFile
    /// Pages of this snapshot end before this offset.
    let limit: UInt64

    @inline(__always)
    func node(_ child: Child) throws -> Node {
        switch child {
        case .node(let n): return n
        case .page(let ref): return try file.readNode(ref, limit: limit)
        }
    }

    /// The value stored under `key`, if any.
    func withValue<R>(root: Child?, key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let root else { return nil }
        var node = try self.node(root)
        while !node.isLeaf {
            node = try self.node(node.children[node.childIndex(for: key)])
        }
        let (i, found) = node.search(key)
        guard found else { return nil }
        return try node.withValue(i, body)
    }
}

/// The tree as a write transaction changes it.
final class MutableTree {
    var root: Child?
    let reader: TreeReader
    /// Bytes of pages that the changes so far have superseded.
    var supersededBytes: UInt64 = 0
    /// Bytes of pages written by `write(into:)`.
    var writtenBytes: UInt64 = 0

    init(root: Child?, reader: TreeReader) {
        self.root = root
        self.reader = reader
    }

    /// A node that this transaction may change: itself if already dirty, else a copy.
    private func dirty(_ child: Child) throws -> Node {
        switch child {
        case .node(let n):
            return n
        case .page(let ref):
            let clean = try reader.node(child)
            supersededBytes += UInt64(ref.length)
            return clean.copy()
        }
    }

    func withValue<R>(_ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try key.withUnsafeBytes { try reader.withValue(root: root, key: $0, body) }
    }

    /// Inserts or replaces; returns the value that was replaced.
    @discardableResult
    func insert(_ key: [UInt8], _ value: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in try insert(k, v) }
        }
    }

    func insert(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> [UInt8]? {
        guard let current = root else {
            let leaf = Node(isLeaf: true)
            leaf.insertEntry(at: 0, key: key, value: value)
            root = .node(leaf)
            return nil
        }
        let top = try dirty(current)
        root = .node(top)
        let old = try insert(into: top, key, value)
        if top.pageSize > Node.targetPageSize && top.count >= 2 {
            let (separator, right) = top.splitOff()
            let newRoot = Node(isLeaf: false)
            newRoot.insertEntry(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), value: nil)
            separator.withUnsafeBytes { newRoot.insertEntry(at: 1, key: $0, value: nil) }
            newRoot.children = [.node(top), .node(right)]
            root = .node(newRoot)
        }
        return old
    }

    private func insert(into node: Node, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> [UInt8]? {
        if node.isLeaf {
            let (i, found) = node.search(key)
            if found {
                let old = node.value(i)
                node.replaceValue(at: i, with: value)
                return old
            }
            node.insertEntry(at: i, key: key, value: value)
            return nil
        }
        let i = node.childIndex(for: key)
        let child = try dirty(node.children[i])
        node.children[i] = .node(child)
        let old = try insert(into: child, key, value)
        if child.pageSize > Node.targetPageSize && child.count >= 2 {
            let (separator, right) = child.splitOff()
            separator.withUnsafeBytes { node.insertEntry(at: i + 1, key: $0, value: nil) }
            node.children.insert(.node(right), at: i + 1)
        }
        return old
    }

    /// Removes `key`; returns its value, or nil if it was not there (and then changes nothing).
    @discardableResult
    func remove(_ key: [UInt8]) throws -> [UInt8]? {
        try key.withUnsafeBytes { k -> [UInt8]? in
            guard let current = root, try reader.withValue(root: current, key: k, { _ in true }) != nil else { return nil }
            let top = try dirty(current)
            root = .node(top)
            let old = try remove(from: top, k)
            // Shrink the tree from the top: a branch with one child gives way to the child.
            while case .node(let n)? = root, !n.isLeaf, n.count == 1 { root = n.children[0] }
            if case .node(let n)? = root, n.count == 0 { root = nil }
            return old
        }
    }

    private func remove(from node: Node, _ key: UnsafeRawBufferPointer) throws -> [UInt8]? {
        if node.isLeaf {
            let (i, found) = node.search(key)
            guard found else { return nil }
            let old = node.value(i)
            node.removeEntry(at: i)
            return old
        }
        let i = node.childIndex(for: key)
        let child = try dirty(node.children[i])
        node.children[i] = .node(child)
        let old = try remove(from: child, key)
        if child.count == 0 {
            node.removeEntry(at: i)
            if i == 0 && node.count > 0 { node.clearFirstKey() }
        } else if child.pageSize < Node.targetPageSize / 4 && node.count > 1 {
            // Merge a small node with a neighbour when both fit in one page.
            let siblingIndex = i > 0 ? i - 1 : i + 1
            let sibling = try reader.node(node.children[siblingIndex])
            if sibling.pageSize + child.pageSize <= Node.targetPageSize {
                let changeable = try dirty(node.children[siblingIndex])
                let (left, right, leftIndex) = siblingIndex < i ? (changeable, child, siblingIndex) : (child, changeable, i)
                left.absorb(right, separator: node.key(leftIndex + 1))
                node.children[leftIndex] = .node(left)
                node.removeEntry(at: leftIndex + 1)
            }
        }
        return old
    }

    /// Writes every dirty node, children first, and returns the new root (nil for an empty tree).
    func write(into writer: AppendWriter) throws -> PageRef? {
        guard let root else { return nil }
        let ref = try write(root, into: writer)
        self.root = .page(ref)
        return ref
    }

    private func write(_ child: Child, into writer: AppendWriter) throws -> PageRef {
        switch child {
        case .page(let ref):
            return ref
        case .node(let node):
            if let ref = node.page { return ref }
            var refs: [PageRef] = []
            if !node.isLeaf {
                refs.reserveCapacity(node.children.count)
                for c in node.children { refs.append(try write(c, into: writer)) }
            }
            let bytes = node.encodePage(childRefs: refs)
            let offset = try writer.append(bytes)
            let ref = PageRef(offset: offset, length: UInt32(bytes.count))
            writtenBytes += UInt64(bytes.count)
            // The node is now clean: it may be shared through the cache.
            node.page = ref
            if !node.isLeaf { node.children = refs.map { .page($0) } }
            writer.file.cacheWrittenNode(node, ref)
            return ref
        }
    }
}

extension Node {
    /// Makes a branch's first key empty (it means "lowest").
    func clearFirstKey() {
        let n = Int(data.loadLE16(0))
        guard n > 0 else { return }
        data.removeSubrange(2..<(2 + n))
        data[0] = 0
        data[1] = 0
        for j in 1..<starts.count { starts[j] -= Int32(n) }
    }

    /// Appends the entries of `right` (its right neighbour). For branches, `separator` is the
    /// parent's key for `right`, which becomes the key of right's first child.
    func absorb(_ right: Node, separator: [UInt8]) {
        var rightData = right.data
        var rightStarts = right.starts
        if !isLeaf, !right.starts.isEmpty {
            let n = Int(rightData.loadLE16(0))
            var head: [UInt8] = []
            head.appendLE(UInt16(separator.count))
            head.append(contentsOf: separator)
            rightData.replaceSubrange(0..<(2 + n), with: head)
            let delta = Int32(head.count - (2 + n))
            for j in 1..<rightStarts.count { rightStarts[j] += delta }
        }
        let base = Int32(data.count)
        data.append(contentsOf: rightData)
        starts.append(contentsOf: rightStarts.map { $0 + base })
        if !isLeaf { children.append(contentsOf: right.children) }
    }
}

/// A position in the tree, moved one entry at a time.
struct TreeCursor {
    private var stack: [(node: Node, index: Int)] = []
    private let reader: TreeReader
    private let root: Child?

    init(root: Child?, reader: TreeReader) {
        self.root = root
        self.reader = reader
    }

    var isValid: Bool { !stack.isEmpty }

    @inline(__always) var node: Node { stack[stack.count - 1].node }
    @inline(__always) var index: Int { stack[stack.count - 1].index }

    /// Positions at the first entry whose key is >= `key` (> if not inclusive). Nil key: the first entry.
    mutating func seek(atLeast key: [UInt8]?, inclusive: Bool = true) throws {
        stack.removeAll(keepingCapacity: true)
        guard let root else { return }
        var n = try reader.node(root)
        let k = key ?? []
        try k.withUnsafeBytes { kb in
            while !n.isLeaf {
                let i = n.childIndex(for: kb)
                stack.append((n, i))
                n = try reader.node(n.children[i])
            }
            let (i, found) = n.search(kb)
            stack.append((n, found && !inclusive ? i + 1 : i))
        }
        if index >= node.count { try advanceLeaf(forward: true) }
    }

    /// Positions at the last entry whose key is <= `key` (< if not inclusive). Nil key: the last entry.
    mutating func seek(atMost key: [UInt8]?, inclusive: Bool = true) throws {
        stack.removeAll(keepingCapacity: true)
        guard let root else { return }
        var n = try reader.node(root)
        guard let key else {
            while !n.isLeaf {
                stack.append((n, n.count - 1))
                n = try reader.node(n.children[n.count - 1])
            }
            stack.append((n, n.count - 1))
            if index < 0 { try advanceLeaf(forward: false) }
            return
        }
        try key.withUnsafeBytes { kb in
            while !n.isLeaf {
                let i = n.childIndex(for: kb)
                stack.append((n, i))
                n = try reader.node(n.children[i])
            }
            let (i, found) = n.search(kb)
            stack.append((n, found && inclusive ? i : i - 1))
        }
        if index < 0 { try advanceLeaf(forward: false) }
    }

    mutating func next() throws {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].index += 1
        if index >= node.count { try advanceLeaf(forward: true) }
    }

    mutating func previous() throws {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].index -= 1
        if index < 0 { try advanceLeaf(forward: false) }
    }

    /// Moves to the first (or last) entry of the next (or previous) non-empty leaf.
    private mutating func advanceLeaf(forward: Bool) throws {
        stack.removeLast()
        while let top = stack.last {
            let i = top.index + (forward ? 1 : -1)
            if i >= 0 && i < top.node.count {
                stack[stack.count - 1].index = i
                var n = try reader.node(top.node.children[i])
                while true {
                    if n.isLeaf {
                        if n.count == 0 { break }
                        stack.append((n, forward ? 0 : n.count - 1))
                        return
                    }
                    let j = forward ? 0 : n.count - 1
                    stack.append((n, j))
                    n = try reader.node(n.children[j])
                }
                // An empty leaf (only in a tree being changed): keep looking.
                stack.append((n, 0))
                stack.removeLast()
                continue
            }
            stack.removeLast()
        }
    }

    @inline(__always)
    func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try node.withKey(index, body)
    }

    @inline(__always)
    func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try node.withValue(index, body)
    }
}
