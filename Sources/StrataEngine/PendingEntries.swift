// Index entries a write transaction adds and removes, held back and applied to the index's
// tree in key order: a large save touches each index page once per batch instead of once per
// row, and its pages are then written out in order, so memory stays bounded (Docs/ARCHITECTURE.md,
// "The write path").
//
// The operations are packed in one byte array, without an allocation per key. A unique index
// also keeps a hash table from key to its latest operation, so that a put's unique check sees
// the entries of this transaction without applying them.

final class PendingEntries {
    static let insert: UInt8 = 1
    static let remove: UInt8 = 2

    /// Per operation: `[u8 kind][u64 row LE][u16 key length][key]`.
    @exclusivity(unchecked) private(set) var arena: [UInt8] = []
    /// The operations in the order they came: where each starts in `arena`, and the first 8
    /// bytes of its key (big-endian) to sort by.
    @exclusivity(unchecked) private var operations: [(prefix: UInt64, offset: UInt32)] = []
    let unique: Bool
    /// For a unique index: slots of `offset + 1` of the latest operation on each key (0: empty).
    @exclusivity(unchecked) private var table: [UInt32] = []
    @exclusivity(unchecked) private var tableCount = 0

    init(unique: Bool) { self.unique = unique }

    var isEmpty: Bool { operations.isEmpty }
    var count: Int { operations.count }
    /// Memory held, roughly.
    var byteCount: Int { arena.capacity + operations.capacity * 16 + table.capacity * 4 }

    func removeAll() {
        arena = []
        operations = []
        table = []
        tableCount = 0
    }

    @inline(__always)
    private static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        var p: UInt64 = 0
        for i in 0..<8 { p = p << 8 | (i < key.count ? UInt64(key[i]) : 0) }
        return p
    }

    /// Records an operation on `row`'s entry for `key`.
    func add(_ kind: UInt8, key: UnsafeRawBufferPointer, row: RowID) {
        let offset = UInt32(arena.count)
        arena.append(kind)
        arena.appendLE(row)
        arena.append(UInt8(truncatingIfNeeded: key.count))
        arena.append(UInt8(truncatingIfNeeded: key.count >> 8))
        arena.append(contentsOf: key)
        operations.append((Self.prefix(key), offset))
        if unique { remember(offset, key: key) }
    }

    @inline(__always)
    func kind(at offset: UInt32) -> UInt8 { arena[Int(offset)] }

    @inline(__always)
    func row(at offset: UInt32) -> RowID { arena.loadLE64(Int(offset) + 1) }

    @inline(__always)
    func withKey<R>(at offset: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try arena.withUnsafeBytes { raw in
            let o = Int(offset)
            let n = Int(raw.loadLE16(o + 9))
            return try body(UnsafeRawBufferPointer(rebasing: raw[(o + 11)..<(o + 11 + n)]))
        }
    }

    // MARK: The table of a unique index

    private func slot(for key: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: Checksum.hash(key)) & (table.count - 1)
    }

    private func remember(_ offset: UInt32, key: UnsafeRawBufferPointer) {
        if (tableCount + 1) * 2 > table.count { grow() }
        var i = slot(for: key)
        while table[i] != 0 {
            let existing = table[i] - 1
            if withKey(at: existing, { compareBytes($0, key) == 0 }) {
                table[i] = offset + 1
                return
            }
            i = (i + 1) & (table.count - 1)
        }
        table[i] = offset + 1
        tableCount += 1
    }

    private func grow() {
        let old = table
        table = [UInt32](repeating: 0, count: Swift.max(64, old.count * 2))
        tableCount = 0
        for entry in old where entry != 0 {
            let offset = entry - 1
            withKey(at: offset) { key in
                var i = slot(for: key)
                while table[i] != 0 { i = (i + 1) & (table.count - 1) }
                table[i] = entry
            }
            tableCount += 1
        }
    }

    /// For a unique index: the latest operation on `key` in this transaction (its kind and
    /// row), or nil when there is none.
    func latest(_ key: UnsafeRawBufferPointer) -> (kind: UInt8, row: RowID)? {
        guard unique, !table.isEmpty else { return nil }
        var i = slot(for: key)
        while table[i] != 0 {
            let offset = table[i] - 1
            if withKey(at: offset, { compareBytes($0, key) == 0 }) { return (kind(at: offset), row(at: offset)) }
            i = (i + 1) & (table.count - 1)
        }
        return nil
    }

    // MARK: Applying

    /// The operations in the order they apply: by tree key (the key, and for a non-unique
    /// index the row), and in the order they came for one key.
    func sorted() -> [UInt32] {
        var order = operations
        order.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            let c = withKey(at: a.offset) { x in withKey(at: b.offset) { y in compareBytes(x, y) } }
            if c != 0 { return c < 0 }
            if !unique {
                let (ra, rb) = (row(at: a.offset), row(at: b.offset))
                if ra != rb { return ra < rb }
            }
            return a.offset < b.offset
        }
        return order.map(\.offset)
    }
}
