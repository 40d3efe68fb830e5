import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// A set of row ids: the rows a save deletes, the rows a fetch leaves out. Row ids are handed
/// out from 1 upward, so a set of many of them is dense: it is a bitmap (a bit per row id up to
/// the largest, one byte for eight rows: 12.5 KB for a cascade over 100,000 rows, where a hash
/// set takes 2 MB), and row ids far beyond the bitmap's density go to a hash set.
struct RowSet: Sequence, ExpressibleByArrayLiteral {
    /// Bit `r % 64` of word `r / 64`: row `r` is in the set.
    private var bits: [UInt64] = []
    /// Rows the bitmap does not reach.
    private var sparse = Set<RowKey>()
    private(set) var count = 0

    init() {}
    init(arrayLiteral rows: RowID...) { for row in rows { insert(row) } }

    var isEmpty: Bool { count == 0 }

    @inline(__always)
    func contains(_ row: RowID) -> Bool {
        if count == 0 { return false }
        let word = row >> 6
        if word < UInt64(bits.count) { return bits[Int(word)] & (1 << (row & 63)) != 0 }
        return !sparse.isEmpty && sparse.contains(RowKey(row))
    }

    @discardableResult
    mutating func insert(_ row: RowID) -> (inserted: Bool, memberAfterInsert: RowID) {
        let word = row >> 6
        if word >= UInt64(bits.count) && !growBitmap(toReach: word) {
            let inserted = sparse.insert(RowKey(row)).inserted
            if inserted { count += 1 }
            return (inserted, row)
        }
        let mask: UInt64 = 1 << (row & 63)
        let inserted = bits[Int(word)] & mask == 0
        if inserted {
            bits[Int(word)] |= mask
            count += 1
        }
        return (inserted, row)
    }

    mutating func remove(_ row: RowID) {
        let word = row >> 6
        if word < UInt64(bits.count) {
            let mask: UInt64 = 1 << (row & 63)
            if bits[Int(word)] & mask != 0 { bits[Int(word)] &= ~mask; count -= 1 }
        } else if sparse.remove(RowKey(row)) != nil {
            count -= 1
        }
    }

    /// Extends the bitmap to word `word` if it stays dense (at most two words, 16 bytes, per
    /// row in the set, about what a hash set takes; 8 KB at least); false when the row
    /// belongs in the hash set.
    private mutating func growBitmap(toReach word: UInt64) -> Bool {
        let allowed = UInt64(Swift.max(1024, 2 * (count + 1)))
        guard word < allowed else { return false }
        let words = Int(Swift.min(allowed, Swift.max(word + 1, UInt64(bits.count) * 2)))
        bits.append(contentsOf: repeatElement(0, count: words - bits.count))
        // Rows of the hash set that the bitmap now reaches move into it.
        for key in sparse where key.row >> 6 < UInt64(bits.count) {
            sparse.remove(key)
            bits[Int(key.row >> 6)] |= 1 << (key.row & 63)
        }
        return true
    }


    mutating func formUnion(_ other: RowSet) { for row in other { insert(row) } }

    /// The rows in increasing order.
    func sorted() -> [RowID] {
        var rows: [RowID] = []
        rows.reserveCapacity(count)
        for (w, word) in bits.enumerated() where word != 0 {
            var rest = word
            while rest != 0 {
                rows.append(RowID(w) << 6 | RowID(rest.trailingZeroBitCount))
                rest &= rest - 1
            }
        }
        if !sparse.isEmpty { rows += sparse.map(\.row).sorted() }
        return rows
    }

    func makeIterator() -> IndexingIterator<[RowID]> { sorted().makeIterator() }
}
