import Foundation
@_spi(StorageBackend) import StrataRecords

/// A descriptor's `fetchOffset` and `fetchLimit` made safe for arithmetic: any `Int` a caller
/// passes (`Int.max`, `Int.min`, negatives) pages without overflowing.
struct Paging {
    /// How many results to skip: 0 for nil or negative.
    let offset: Int
    /// At most this many results; nil for none (nil, zero or negative: Core Data's "no limit").
    let limit: Int?

    init(offset: Int?, limit: Int?) {
        self.offset = Swift.max(0, offset ?? 0)
        self.limit = limit.flatMap { $0 > 0 ? $0 : nil }
    }

    /// How many results in order must be found to serve the page (`offset + limit`), or nil
    /// when that is all of them (no limit, or a sum past `Int.max`).
    var needed: Int? {
        guard let limit else { return nil }
        let (sum, overflow) = offset.addingReportingOverflow(limit)
        return overflow ? nil : sum
    }

    /// The page of `all`.
    func apply<C: RandomAccessCollection>(_ all: C) -> [C.Element] where C.Index == Int {
        let start = all.startIndex + Swift.min(offset, all.count)
        let available = all.endIndex - start
        let end = start + Swift.min(available, limit ?? available)
        return Array(all[start..<end])
    }

    /// How many results a page of `total` results holds.
    func count(ofTotal total: Int) -> Int {
        let left = Swift.max(0, total - offset)
        return Swift.min(left, limit ?? left)
    }
}
