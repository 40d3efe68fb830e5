// A packed leaf takes a cell in place when the cell fits the page's layout as it is
// (`Node.insertPackedCell`): the key has the page's prefix, and the suffix (shape 1) or the
// value (shape 2) the page's width, up to `Node.packedInsertLimit` cells a node. Here leaves of
// each shape take cells at the front, in the middle and at the end, with every flag, and stay
// packed, sound, and equal to a model; a cell that does not fit, or one past either limit, lays
// the leaf out with its lengths, as before. Then a store whose leaves
// are packed takes one row per transaction between its rows (as one-object saves do), with
// rollbacks and a reopen, checked against a model and with `verify`.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct PackedInsertTests {
    /// The cells a leaf of each shape holds: keys after the prefix `AB CD`, values, flags.
    enum Shape: String, CaseIterable, CustomTestStringConvertible {
        case fixedSuffix, fixedValue, varint
        var testDescription: String { rawValue }
        var expected: UInt8 {
            switch self {
            case .fixedSuffix: PageLayout.packedShapeFixedSuffix
            case .fixedValue: PageLayout.packedShapeFixedValue
            case .varint: PageLayout.packedShapeVarint
            }
        }

        /// A suffix and a value of this shape's lengths; `first`/`last` pin the suffix's first
        /// byte low or high, so that the leaf's keys share exactly the two prefix bytes.
        func cell(_ g: inout SeededGenerator, firstByte: UInt8? = nil) -> (suffix: [UInt8], value: [UInt8]) {
            let suffixLength: Int, valueLength: Int
            switch self {
            case .fixedSuffix: (suffixLength, valueLength) = (5, Int.random(in: 0...24, using: &g))
            case .fixedValue: (suffixLength, valueLength) = (Int.random(in: 1...12, using: &g), 8)
            case .varint: (suffixLength, valueLength) = (Int.random(in: 1...12, using: &g), Int.random(in: 0...24, using: &g))
            }
            var suffix = (0..<suffixLength).map { _ in UInt8.random(in: 1...254, using: &g) }
            if let firstByte { suffix[0] = firstByte }
            return (suffix, (0..<valueLength).map { _ in UInt8.random(in: 0...255, using: &g) })
        }
    }

    static let prefix: [UInt8] = [0xAB, 0xCD]

    /// The node's cells as (key, value, flags), read through its page view.
    static func cells(_ node: Node) -> [[UInt8]: ([UInt8], UInt8)] {
        var out: [[UInt8]: ([UInt8], UInt8)] = [:]
        let view = node.view
        var previous: [UInt8]?
        for i in 0..<view.count {
            let key = view.key(i)
            if let previous { #expect(compareBytes(previous, key) < 0, "keys out of order at cell \(i)") }
            previous = key
            let cell = view.leafCell(i)
            out[key] = (Array(cell.value), cell.flags)
        }
        return out
    }

    static func same(_ node: Node, _ model: [[UInt8]: ([UInt8], UInt8)]) -> Bool {
        let found = cells(node)
        return found.count == model.count && found.allSatisfy { key, cell in model[key].map { $0.0 == cell.0 && $0.1 == cell.1 } == true }
    }

    /// A new leaf of `count` cells of `shape` (fewer if a key repeats), the lowest suffix
    /// starting 00 and the highest FF, each also put in `model`; flags random or 0.
    static func leaf(_ shape: Shape, cells count: Int, randomFlags: Bool, _ g: inout SeededGenerator,
                     _ model: inout [[UInt8]: ([UInt8], UInt8)]) -> Node {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        for n in 0..<count {
            let (suffix, value) = shape.cell(&g, firstByte: n == 0 ? 0x00 : n == 1 ? 0xFF : nil)
            let key = prefix + suffix
            guard model[key] == nil else { continue }
            let flags = randomFlags ? UInt8.random(in: 0...3, using: &g) : 0
            model[key] = (value, flags)
            key.withUnsafeBytes { k in value.withUnsafeBytes { leaf.insertLeafCell(at: leaf.view.search(k).index, key: k, value: $0, flags: flags) } }
        }
        return leaf
    }

    @Test(arguments: Shape.allCases)
    func aPackedLeafTakesCellsThatFitInPlace(_ shape: Shape) throws {
        var g = SeededGenerator(seed: 0x5EED + UInt64(shape.expected))
        var model: [[UInt8]: ([UInt8], UInt8)] = [:]
        let leaf = Self.leaf(shape, cells: 20, randomFlags: true, &g, &model)
        var packed = try NodeInvariantTests.copied(leaf)
        try #require(packed.isPacked && packed.view.shape == shape.expected && packed.prefixLength == 2)
        // Inserts that fit, until the leaf holds `packedEditLimit` cells: first, last, anywhere;
        // each node takes `packedInsertLimit` of them, then is written and copied again, as the
        // next transaction would.
        var inserted = 0
        func insert(_ flags: UInt8, firstByte: UInt8?) -> Bool {
            let (suffix, value) = shape.cell(&g, firstByte: firstByte)
            let key = Self.prefix + suffix
            guard model[key] == nil else { return false }
            model[key] = (value, flags)
            key.withUnsafeBytes { k in
                let (i, found) = packed.view.search(k)
                #expect(!found)
                value.withUnsafeBytes { packed.insertLeafCell(at: i, key: k, value: $0, flags: flags) }
            }
            return true
        }
        while packed.count < Node.packedEditLimit {
            if packed.packedInserts == Node.packedInsertLimit { packed = try NodeInvariantTests.copied(packed) }
            guard insert(UInt8.random(in: 0...3, using: &g), firstByte: inserted % 5 == 0 ? 0x00 : inserted % 5 == 1 ? 0xFF : nil) else { continue }
            inserted += 1
            try #require(packed.isPacked, "\(shape): cell \(inserted) laid the leaf out")
            let violations = packed.invariantViolations()
            try #require(violations.isEmpty, "\(shape): \(violations)")
            try #require(Self.same(packed, model), "\(shape): the leaf differs from the model after insert \(inserted)")
        }
        // Written as it lies: the page passes a reader's check and holds the same cells.
        packed = try NodeInvariantTests.copied(packed)
        #expect(packed.isPacked && Self.same(packed, model))

        // A leaf at the limit is laid out before it takes another cell.
        while !insert(2, firstByte: 0x7F) {}
        #expect(!packed.isPacked && packed.invariantViolations().isEmpty && Self.same(packed, model))

        // And a node that took `packedInsertLimit` cells in place is laid out at the next one.
        let few = try NodeInvariantTests.copied(leaf)
        var fewModel = Self.cells(few)
        var taken = 0
        while taken <= Node.packedInsertLimit {
            let (suffix, value) = shape.cell(&g)
            let key = Self.prefix + suffix
            guard fewModel[key] == nil else { continue }
            fewModel[key] = (value, 1)
            key.withUnsafeBytes { k in value.withUnsafeBytes { few.insertLeafCell(at: few.view.search(k).index, key: k, value: $0, flags: 1) } }
            taken += 1
            #expect(few.isPacked == (taken <= Node.packedInsertLimit), "\(shape): after \(taken) inserts")
        }
        #expect(few.invariantViolations().isEmpty && Self.same(few, fewModel))
    }

    /// Cells that do not fit the page's layout: a key without its prefix, a suffix of another
    /// width (shape 1), a value of another width (shape 2). The leaf is laid out with its
    /// lengths, as before, and holds every cell.
    @Test(arguments: Shape.allCases)
    func aCellThatDoesNotFitLaysTheLeafOut(_ shape: Shape) throws {
        var g = SeededGenerator(seed: 0xF17 + UInt64(shape.expected))
        var misfits: [(key: [UInt8], value: [UInt8])] = [([0xAB, 0xCC, 0x01], [1, 2, 3, 4, 5, 6, 7, 8])]
        switch shape {
        case .fixedSuffix: misfits.append((Self.prefix + [0x40, 0x41], [9]))
        case .fixedValue: misfits.append((Self.prefix + [0x40], [9]))
        case .varint: break
        }
        for misfit in misfits {
            var model: [[UInt8]: ([UInt8], UInt8)] = [:]
            let leaf = Self.leaf(shape, cells: 12, randomFlags: false, &g, &model)
            let packed = try NodeInvariantTests.copied(leaf)
            try #require(packed.isPacked && packed.view.shape == shape.expected)
            model[misfit.key] = (misfit.value, 1)
            misfit.key.withUnsafeBytes { k in
                misfit.value.withUnsafeBytes { packed.insertLeafCell(at: packed.view.search(k).index, key: k, value: $0, flags: 1) }
            }
            #expect(!packed.isPacked, "\(shape): \(misfit.key) fits no packed layout of this leaf")
            #expect(packed.invariantViolations().isEmpty)
            #expect(Self.same(packed, model))
        }
    }

    /// A store of packed leaves (rows: shape 1; a unique index of names: varint; a group index:
    /// shape 2) takes a row per transaction between its rows, some rolled back, and agrees with
    /// a model, before and after a reopen.
    @Test func oneRowCommitsBetweenPackedRowsAgreeWithAModel() throws {
        let dir = try EngineTestDirectory()
        var g = SeededGenerator(seed: 77)
        var model: [RowID: (name: String, group: Int, record: [UInt8])] = [:]
        var store: Store? = try Store(path: dir.path(), options: StoreOptions())
        let (c, byName, byGroup) = try #require(store).write { tx throws in
            let c = try tx.createCollection(named: "c")
            return (c, try tx.createIndex(named: "name", on: c, unique: true), try tx.createIndex(named: "group", on: c, unique: false))
        }
        func keys(_ row: RowID) -> [IndexKey] {
            guard let m = model[row] else { return [] }
            return [IndexKey(byName, KeyEncoding.encode(m.name)), IndexKey(byGroup, KeyEncoding.encode(m.group))]
        }
        func put(_ row: RowID, _ tx: WriteTransaction) throws {
            let previous = keys(row)
            model[row] = ("n\(row)-" + String(repeating: "x", count: Int.random(in: 0..<12, using: &g)), Int.random(in: 0..<5, using: &g),
                          [UInt8](repeating: UInt8.random(in: 0...255, using: &g), count: Int.random(in: 30..<120, using: &g)))
            try tx.put(model[row]!.record, row: row, in: c, indexKeys: keys(row), previousKeys: previous)
        }
        // Even rows first; the odd ones go in between, one transaction each.
        try #require(store).write { tx throws in for row in stride(from: RowID(2), through: 1200, by: 2) { try put(row, tx) } }
        var odd = Array(stride(from: RowID(1), through: 1199, by: 2))
        odd.shuffle(using: &g)
        func check(_ store: Store, _ when: String) throws {
            try PackedLeafTests.check(store, c, byName: byName, byGroup: byGroup, model, keys, when)
        }
        for (n, row) in odd.prefix(400).enumerated() {
            let saved = model
            do {
                try #require(store).write { tx throws in
                    try put(row, tx)
                    // Now and then a second row, or a changed one, in the same transaction.
                    if n % 7 == 0 { try put(RowID(2 * Int.random(in: 1...600, using: &g)), tx) }
                    if n % 11 == 5 { throw CancellationError() }
                }
            } catch is CancellationError {
                model = saved
            }
            if n % 100 == 99 { try check(try #require(store), "after \(n + 1) commits") }
        }
        store = nil
        try check(try Store(path: dir.path(), options: StoreOptions()), "after a reopen")
    }

    /// Rows appended one a transaction (as one-object saves append them) go into the last
    /// leaf in place; when it passes the target, only the new row moves to a new leaf, as in a
    /// load in key order, so the leaf left behind is full and the next commits write a short
    /// one. A packed leaf measured once laid out (each cell's lengths counted too) was split in
    /// the middle instead: half-full leaves behind, and each commit rewrote a leaf half as long
    /// again (W2 wrote 18% more bytes a save).
    @Test func aPackedLeafThatTookTheLastRowSplitsOffOnlyThatRow() throws {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        // 47 rows of 82 bytes: a packed page of 4015 bytes (85 a row), 4241 laid out; a 48th
        // row passes 4096 packed, and the 47 left behind fit.
        let value = [UInt8](repeating: 0x5A, count: 82)
        for row in UInt64(1)...47 {
            NodeInvariantTests.key(row).withUnsafeBytes { k in value.withUnsafeBytes { leaf.appendLeafCell(key: k, value: $0, flags: 0) } }
        }
        let packed = try NodeInvariantTests.copied(leaf)
        try #require(packed.isPacked && packed.encodedSize <= 4096)
        NodeInvariantTests.key(48).withUnsafeBytes { k in value.withUnsafeBytes { packed.insertLeafCell(at: 47, key: k, value: $0, flags: 0) } }
        try #require(packed.isPacked && packed.encodedSize > 4096, "the 48th row goes in place and passes the target")
        let (separator, right) = packed.splitOff(lastOnly: true, target: 4096)
        #expect(packed.count == 47 && right.count == 1, "split \(packed.count) | \(right.count)")
        #expect(separator == NodeInvariantTests.key(48))
        #expect(packed.invariantViolations().isEmpty && right.invariantViolations().isEmpty)
    }
}
