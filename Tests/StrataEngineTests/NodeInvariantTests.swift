// The node invariant checker (Node+Invariants.swift): it finds nothing wrong with nodes that
// the node's operations made, and it names each invariant of a node broken on purpose (a
// mutation test: if the checker missed any of these, a bug of that kind would go unseen in the
// CI leg that checks every node after every edit). With the checks on (STRATA_INTERNAL_CHECKS) an
// edit of a broken node stops the program, naming the invariant.
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct NodeInvariantTests {
    static func key(_ n: UInt64) -> [UInt8] { withUnsafeBytes(of: n.bigEndian) { Array($0) } }

    /// A leaf of rows 1...count, each value `value` bytes.
    static func makeLeaf(count: Int = 8, value: Int = 3) -> Node {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        for row in 1...UInt64(count) {
            key(row * 2).withUnsafeBytes { k in
                [UInt8](repeating: UInt8(row), count: value).withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: 0) }
            }
        }
        return leaf
    }

    /// The node copied from the page `node` encodes to (packed, for a leaf of one value length).
    static func copied(_ node: Node) throws -> Node {
        var page: [UInt8] = []
        node.encode(into: &page)
        return try page.withUnsafeBytes { raw in
            let base = try #require(raw.baseAddress)
            try #require(PageLayout.check(base, length: raw.count, offset: 1 << 40))
            return try #require(Node(copying: PageView(base), budget: DirtyBudget(limit: .max)))
        }
    }

    /// Random inserts, replacements and removals on a leaf, splits and merges, in every mode
    /// (new, copied with its page's prefix, packed), and a branch: the checker finds nothing.
    @Test func nodesTheOperationsMakeBreakNoInvariant() throws {
        var g = SeededGenerator(seed: 31)
        var leaf = Self.makeLeaf()
        var held = Set((1...8).map { UInt64($0 * 2) })
        for step in 0..<600 {
            if step % 150 == 75 { leaf = try Self.copied(leaf) }
            let row = UInt64.random(in: 1...40, using: &g)
            try Self.key(row).withUnsafeBytes { k in
                let (i, found) = leaf.view.search(k)
                let value = [UInt8](repeating: 7, count: Int.random(in: 0...6, using: &g))
                if found && Bool.random(using: &g) {
                    leaf.removeCell(at: i)
                    held.remove(row)
                } else if found {
                    value.withUnsafeBytes { leaf.replaceValue(at: i, with: $0, flags: 1) }
                } else {
                    value.withUnsafeBytes { leaf.insertLeafCell(at: i, key: k, value: $0, flags: 0) }
                    held.insert(row)
                }
                let violations = leaf.invariantViolations()
                try #require(violations.isEmpty, "step \(step): \(violations)")
            }
        }
        #expect(leaf.count == held.count)
        let (separator, right) = leaf.splitOff()
        #expect(leaf.invariantViolations().isEmpty && right.invariantViolations().isEmpty)
        separator.withUnsafeBytes { leaf.absorb(right, separator: $0) }
        #expect(leaf.invariantViolations().isEmpty)

        let packed = try Self.copied(Self.makeLeaf())
        try #require(packed.isPacked)
        #expect(packed.invariantViolations().isEmpty)
        packed.removeCell(at: 3)
        try #require(packed.isPacked)
        #expect(packed.invariantViolations().isEmpty)

        let branch = Node(isLeaf: false, budget: DirtyBudget(limit: .max))
        branch.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: 0x100)
        for (i, row) in [UInt64(10), 20, 30].enumerated() {
            Self.key(row).withUnsafeBytes { branch.insertBranchCell(at: i + 1, key: $0, child: 0x200 + UInt64(i) * 16) }
        }
        branch.removeCell(at: 0)
        branch.clearFirstKey()
        #expect(branch.invariantViolations().isEmpty)
        #expect(try Self.copied(branch).invariantViolations().isEmpty)
    }

    /// A page shorter than the least a page may be is padded with zeros past its cells (a leaf
    /// of one empty key and an empty value: 14 bytes): a node copied from it counts them as
    /// garbage, not as part of its size.
    @Test func aNodeCopiedFromAPaddedPageIsSound() throws {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        leaf.appendLeafCell(key: none, value: none, flags: 0)
        var page: [UInt8] = []
        leaf.encode(into: &page)
        try #require(page.count == PageLayout.minimumSize && leaf.encodedSize < PageLayout.minimumSize)
        let copy = try Self.copied(leaf)
        try #require(!copy.isPacked)
        #expect(copy.invariantViolations().isEmpty)
        #expect(copy.encodedSize == leaf.encodedSize)
        [UInt8(9)].withUnsafeBytes { copy.appendLeafCell(key: $0, value: none, flags: 0) }
        #expect(copy.invariantViolations().isEmpty)
    }

    /// One way to break a node, and the invariant the checker must name for it.
    struct Mutation: CustomTestStringConvertible, Sendable {
        let name: String
        let invariant: Node.InvariantViolation.Invariant
        let breakNode: @Sendable () throws -> Node
        var testDescription: String { name }
    }

    static let mutations: [Mutation] = [
        Mutation(name: "two keys swapped", invariant: .keysAscending) {
            let leaf = makeLeaf()
            let (a, b) = (leaf.slot(2), leaf.slot(3))
            leaf.setSlot(2, b)
            leaf.setSlot(3, a)
            return leaf
        },
        Mutation(name: "encodedSize one byte off", invariant: .encodedSize) {
            let leaf = makeLeaf()
            leaf.encodedSize += 1
            return leaf
        },
        Mutation(name: "garbage not counted", invariant: .garbage) {
            let leaf = makeLeaf()
            leaf.removeCell(at: 1)
            leaf.garbage = 0
            return leaf
        },
        Mutation(name: "a slot past the buffer", invariant: .slotInRange) {
            let leaf = makeLeaf()
            leaf.setSlot(4, leaf.capacity + 2)
            return leaf
        },
        Mutation(name: "two slots at one cell", invariant: .keysAscending) {
            let leaf = makeLeaf()
            leaf.setSlot(5, leaf.slot(6))
            return leaf
        },
        Mutation(name: "the header's count", invariant: .header) {
            let leaf = makeLeaf()
            PageHeaderWriter(leaf.buffer).setCount(leaf.count + 1)
            return leaf
        },
        Mutation(name: "cells before the slots end", invariant: .layout) {
            let leaf = makeLeaf()
            leaf.cellsStart = PageLayout.headerSize
            return leaf
        },
        Mutation(name: "a branch without its children", invariant: .children) {
            let branch = Node(isLeaf: false, budget: DirtyBudget(limit: .max))
            branch.insertBranchCell(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: 0x100)
            key(9).withUnsafeBytes { branch.insertBranchCell(at: 1, key: $0, child: 0x200) }
            branch.children.removeLast()
            return branch
        },
        Mutation(name: "a packed node's size", invariant: .encodedSize) {
            let packed = try copied(makeLeaf())
            try #require(packed.isPacked)
            packed.encodedSize -= 2
            return packed
        },
        Mutation(name: "a packed node's keys swapped", invariant: .keysAscending) {
            // Every cell of this packed leaf has the same size: two of them swap whole.
            let packed = try copied(makeLeaf())
            try #require(packed.isPacked)
            let page = packed.view
            let (a, b) = (page.leafCell(2), page.leafCell(3))
            try #require(a.suffix.count == b.suffix.count && a.value.count == b.value.count)
            let size = b.value.count + Int(bitPattern: b.value.baseAddress) - Int(bitPattern: b.suffix.baseAddress)
            let first = UnsafeMutableRawPointer(mutating: try #require(a.suffix.baseAddress))
            let second = UnsafeMutableRawPointer(mutating: try #require(b.suffix.baseAddress))
            let saved = Array(UnsafeRawBufferPointer(start: first, count: size))
            first.copyMemory(from: second, byteCount: size)
            saved.withUnsafeBytes { second.copyMemory(from: $0.baseAddress!, byteCount: size) }
            return packed
        },
    ]

    @Test(arguments: mutations)
    func theCheckerNamesEachBrokenInvariant(_ mutation: Mutation) throws {
        let node = try mutation.breakNode()
        let violations = node.invariantViolations()
        #expect(violations.map(\.invariant).contains(mutation.invariant), "\(mutation.name): found \(violations)")
    }

    /// With the internal checks on (Node.checksAfterEveryEdit) the next edit of a broken node stops the
    /// program, and the message names the operation and the invariant.
    @Test(.enabled(if: Node.checksAfterEveryEdit, "only a build with STRATA_INTERNAL_CHECKS, or a debug build run with it set, checks after every edit"))
    func anEditOfABrokenNodeStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let leaf = NodeInvariantTests.makeLeaf()
            leaf.encodedSize += 1
            leaf.removeCell(at: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("after removeCell") && message.contains("encodedSize:"), "\(message)")
    }
}
