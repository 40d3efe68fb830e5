// Writing a write transaction's tree: its nodes appended as pages, children first, so that
// the root is written last.

extension MutableTree {
    /// Writes every node, children first, and returns the root page (0 for an empty tree).
    /// The tree then holds written pages only.
    /// `pages` gets the offset of each page written.
    func write(into writer: AppendWriter, scratch: inout [UInt8], pages: inout [UInt64]) throws -> UInt64 {
        forgetFinger()
        guard let root else { return 0 }
        switch root {
        case .page(let offset): return offset
        case .node(let node):
            version += 1
            let offset = try write(node, into: writer, scratch: &scratch, pages: &pages)
            self.root = .page(offset)
            return offset
        }
    }

    private func write(_ node: Node, into writer: AppendWriter, scratch: inout [UInt8], pages: inout [UInt64]) throws -> UInt64 {
        if !node.isLeaf {
            for i in 0..<node.count {
                if let child = node.children[i] { node.setChild(i, to: try write(child, into: writer, scratch: &scratch, pages: &pages)) }
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
        pages.append(offset)
        return offset
    }
}
