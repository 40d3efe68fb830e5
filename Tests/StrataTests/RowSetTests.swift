import Testing
@testable import Strata

/// `RowSet` (a bitmap for dense row ids, a hash set beyond) against `Set<RowID>`.
@Suite struct RowSetTests {
    @Test(arguments: [1, 2, 3, 4])
    func randomInsertsAndRemovesMatchASet(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        var rows = RowSet()
        var reference = Set<RowID>()
        for step in 0..<20_000 {
            // Mostly dense ids, some far out (sparse), some removals.
            let row: RowID = switch generator.next() % 10 {
            case 0: generator.next() % (1 << 40)
            case 1: generator.next() % 1_000_000
            default: generator.next() % RowID(2_000 + step)
            }
            if generator.next() % 5 == 0 {
                rows.remove(row)
                reference.remove(row)
            } else {
                #expect(rows.insert(row).inserted == reference.insert(row).inserted)
            }
        }
        #expect(rows.count == reference.count)
        #expect(rows.sorted() == reference.sorted())
        for _ in 0..<5_000 {
            let probe = generator.next() % 1_000_000
            #expect(rows.contains(probe) == reference.contains(probe))
        }
        for row in reference { #expect(rows.contains(row)) }
        #expect(Array(rows) == reference.sorted())
    }

    @Test func aCascadeOverAHundredThousandRowsIsABitmap() {
        var rows = RowSet()
        for row in RowID(1)...100_000 { rows.insert(row) }
        #expect(rows.count == 100_000)
        #expect(rows.contains(1) && rows.contains(100_000) && !rows.contains(100_001) && !rows.contains(0))
        #expect(rows.sorted() == Array(RowID(1)...100_000))
    }
}

/// A small deterministic generator.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
