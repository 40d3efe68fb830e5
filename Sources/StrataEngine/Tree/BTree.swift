// The copy-on-write B+trees: one per collection (rows by row id), one per index, and the
// system tree (blobs and metadata). A store's catalog names each tree's root page.
//
// Here, what readers and a write transaction's tree (MutableTree.swift) share: a root or a
// child (a page, or a node), the pages a transaction reads, and a lookup.

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
        if offset < trustedFrom {
            // (The map lent, not retained and released per page of a descent: nothing replaces
            // it during the call, `follow` being the writer's, between reads.)
            let limit = Swift.min(limit, trustedFrom)
            return try Unmanaged.passUnretained(map)._withUnsafeGuaranteedRef { try $0.page(at: offset, limit: limit) }
        }
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
