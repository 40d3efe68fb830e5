// A leaf page's search (PageView.search) against a scan of its keys: the dense probe and the
// binary search must find every key, and place every absent key, whatever the spread of the
// keys (even, clustered, dense, short).
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct PageSearchTests {
    /// The first cell whose key is >= `key`, and whether it is equal, by a scan.
    static func scanned(_ keys: [[UInt8]], _ key: [UInt8]) -> (Int, Bool) {
        for (i, k) in keys.enumerated() where !k.lexicographicallyPrecedes(key) { return (i, k == key) }
        return (keys.count, false)
    }

    /// Encodes a leaf of `keys` (sorted, distinct) and checks `search` for each key and for
    /// keys beside, below, above and between them.
    static func check(_ keys: [[UInt8]], packed: Bool, _ g: inout SeededGenerator) throws {
        let leaf = Node(isLeaf: true, budget: DirtyBudget(limit: .max))
        for (i, k) in keys.enumerated() {
            let value = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: packed ? 2 : 1 + i % 3)
            k.withUnsafeBytes { kb in value.withUnsafeBytes { leaf.appendLeafCell(key: kb, value: $0, flags: 0) } }
        }
        var page: [UInt8] = []
        leaf.encode(into: &page)
        var probes = keys
        for k in keys {
            var below = k, above = k
            if let last = below.indices.last, below[last] > 0 { below[last] -= 1 } else { below.removeLast() }
            above.append(0)
            probes += [below, above]
        }
        probes += [[], [0], [255, 255, 255, 255, 255, 255, 255, 255, 255, 255]]
        for _ in 0..<50 { probes.append((0..<Int.random(in: 1...16, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }) }
        try page.withUnsafeBytes { raw in
            let base = try #require(raw.baseAddress)
            try #require(PageLayout.check(base, length: raw.count, offset: 1 << 40))
            let view = PageView(base)
            #expect(view.count == keys.count)
            for probe in probes {
                let (i, found) = probe.withUnsafeBytes { view.search($0) }
                let (j, present) = scanned(keys, probe)
                #expect(i == j && found == present, "key \(probe) of \(keys.count): search says \(i), \(found); a scan \(j), \(present)")
            }
        }
    }

    @Test(arguments: [false, true])
    func searchAgreesWithAScan(packed: Bool) throws {
        var g = SeededGenerator(seed: 47)
        for round in 0..<60 {
            let n = Int.random(in: 2...110, using: &g)
            var keys = Set<[UInt8]>()
            while keys.count < n {
                switch round % 5 {
                case 0:  // random 16-byte keys (UUIDs): evenly spread
                    keys.insert((0..<16).map { _ in UInt8.random(in: 0...255, using: &g) })
                case 1:  // clustered: most keys in a sliver, a few far off
                    let far = Int.random(in: 0..<10, using: &g) == 0
                    keys.insert([far ? UInt8.random(in: 0...255, using: &g) : 0x80, UInt8.random(in: 0...3, using: &g)]
                                + (0..<6).map { _ in UInt8.random(in: 0...255, using: &g) })
                case 2:  // row ids with gaps
                    keys.insert(withUnsafeBytes(of: UInt64.random(in: 1...UInt64(n * 3), using: &g).bigEndian) { Array($0) })
                case 3:  // short keys of 1 to 4 bytes
                    keys.insert((0..<Int.random(in: 1...4, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) })
                default:  // a long shared start, then random bytes
                    keys.insert([1, 2, 3, 4, 5, 6, 7, 8, 9, UInt8.random(in: 0...1, using: &g)] + (0..<4).map { _ in UInt8.random(in: 0...255, using: &g) })
                }
            }
            try Self.check(keys.sorted { $0.lexicographicallyPrecedes($1) }, packed: packed, &g)
        }
    }
}
