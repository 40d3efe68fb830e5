// Writing a write transaction's tree: its nodes appended as pages, children first, so that
// the root is written last.

extension MutableTree {
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
        // (Room for a small commit's pages at once: grown from empty, the list was reallocated
        // at its first, second and third page, in each tree a commit writes.)
        if writtenPages.capacity == 0 { writtenPages.reserveCapacity(8) }
        writtenPages.append(offset)
        return offset
    }
}
