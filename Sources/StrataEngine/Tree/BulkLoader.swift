/// Builds a tree from cells given in key order, writing each page as soon as it is full.
/// Memory holds one node per level. Pages are filled to `fill` bytes once their keys' common
/// prefix is taken out (compaction fills them whole: a later insert splits a page in two).
final class BulkLoader {
    private let writer: AppendWriter
    private let budget = DirtyBudget(limit: .max)
    private var levels: [Node] = []
    /// The first key of each level's node (what its parent names it by).
    private var firstKeys: [[UInt8]] = []
    /// The key each level's prefix is measured from: the first key a page compares.
    private var prefixKeys: [[UInt8]] = []
    private var scratch: [UInt8] = []
    private(set) var writtenBytes: UInt64 = 0
    let fill: Int

    init(writer: AppendWriter, fill: Int = PageLayout.targetSize) {
        self.writer = writer
        self.fill = fill
    }

    func add(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt8 = 0) throws {
        try add(level: 0, key: key, value: value, flags: flags, child: 0)
    }

    private static func commonPrefix(_ a: [UInt8], _ b: UnsafeRawBufferPointer) -> Int {
        let n = Swift.min(a.count, b.count, 255)
        var i = 0
        while i < n && a[i] == b[i] { i += 1 }
        return i
    }

    private func add(level: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8, child: UInt64) throws {
        if level == levels.count {
            levels.append(Node(isLeaf: level == 0, budget: budget))
            firstKeys.append([])
            prefixKeys.append([])
        }
        var node = levels[level]
        let isLeaf = level == 0
        let size = isLeaf ? Node.leafCellSize(key: key.count, value: value.count) : Node.branchCellSize(key: key.count)
        if node.count >= 1 && (isLeaf || node.count >= 2) {
            // The page this node would make with the new cell, its common prefix taken out.
            let p = Self.commonPrefix(prefixKeys[level], key)
            let compared = isLeaf ? node.count + 1 : node.count
            if node.encodedSize + size + 2 - compared * p > fill {
                try flush(level: level)
                node = levels[level]
            }
        }
        if node.count == 0 { firstKeys[level] = Array(key) }
        if isLeaf {
            if node.count == 0 { prefixKeys[level] = Array(key) }
            node.appendLeafCell(key: key, value: value, flags: flags)
        } else {
            if node.count == 1 { prefixKeys[level] = Array(key) }
            node.insertBranchCell(at: node.count, key: node.count == 0 ? UnsafeRawBufferPointer(start: nil, count: 0) : key, child: child)
        }
    }

    private func write(_ node: Node) throws -> UInt64 {
        node.encode(into: &scratch)
        writtenBytes += UInt64(scratch.count)
        return try writer.appendAligned(scratch)
    }

    private func flush(level: Int) throws {
        let offset = try write(levels[level])
        levels[level] = Node(isLeaf: level == 0, budget: budget)
        let first = firstKeys[level]
        try first.withUnsafeBytes { try add(level: level + 1, key: $0, value: UnsafeRawBufferPointer(start: nil, count: 0), flags: 0, child: offset) }
    }

    /// Writes what is left and returns the root page (0 for no cells).
    func finish() throws -> UInt64 {
        var level = 0
        while level < levels.count {
            let node = levels[level]
            if level == levels.count - 1 {
                if node.count == 0 { return 0 }
                if !node.isLeaf && node.count == 1 { return node.view.child(0) }
                return try write(node)
            }
            if node.count > 0 { try flush(level: level) }
            level += 1
        }
        return 0
    }
}
