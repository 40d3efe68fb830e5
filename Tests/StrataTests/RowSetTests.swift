import Testing
@testable import Strata
import StrataTestSupport
import StrataEngine

/// `RowSet` (a bitmap for dense row ids, a hash set beyond) against `Set<RowID>`.
@Suite struct RowSetTests {
    @Test(arguments: [1, 2, 3, 4])
    func randomInsertsAndRemovesMatchASet(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
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

