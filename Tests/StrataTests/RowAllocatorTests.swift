// Row ids for new objects come from one counter per model (`RowAllocator`), which remembers
// where the last model's counter is, as objects are inserted in runs of one model. Here
// models are asked for in runs and interleaved, and started (`start`) in between, which may
// move every counter: each model's ids go on from where they were, one after another.
import Testing
@_spi(StorageBackend) import Strata

@Suite struct RowAllocatorTests {
    @Test func eachModelCountsOnFromWhereItWas() {
        let allocator = RowAllocator()
        var expected: [String: UInt64] = [:]
        func take(_ name: String, _ first: UInt64 = 1) {
            let row = allocator.allocate(name)
            let want = expected[name] ?? first
            #expect(row == want, "\(name)")
            expected[name] = row + 1
        }
        for _ in 0..<5 { take("A") }
        allocator.start(["B": 100, "A": 9_999])
        for _ in 0..<3 { take("A") }
        for _ in 0..<3 { take("B", 100) }
        for i in 0..<200 {
            take(i % 3 == 0 ? "A" : "C\(i % 7)")
            if i % 50 == 0 { allocator.start(["D\(i)": UInt64(i) * 10]) }
            if i % 50 == 1 { take("D\(i - 1)", UInt64(i - 1) * 10) }
        }
        for _ in 0..<3 { take("B", 100) }
    }
}
