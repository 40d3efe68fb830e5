// Index entries a write transaction adds and removes, held back and applied to the index's
// tree in key order: a large save touches each index page once per batch instead of once per
// row, and its pages are then written out in order, so memory stays bounded (Docs/ARCHITECTURE.md,
// "The write path").
//
// The operations are packed in one buffer of bytes, without an allocation per key. A unique index
// also keeps a hash table from key to its latest operation, so that a put's unique check sees
// the entries of this transaction without applying them.

final class PendingEntries {
    static let insert: UInt8 = 1
    static let remove: UInt8 = 2

    /// Per operation: `[u8 kind][u64 row LE][u16 key length][key]`, in bytes of its own (an
    /// operation is one copy into them, where appends to an array cost a check each).
    @exclusivity(unchecked) private var arena: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var arenaCapacity = 0
    @exclusivity(unchecked) private var arenaCount = 0
    /// The operations in the order they came: where each starts in `arena`, and the first 8
    /// bytes of its key (big-endian) to sort by.
    @exclusivity(unchecked) private var operations: [(prefix: UInt64, offset: UInt32)] = []
    let unique: Bool
    /// For a unique index: slots of `offset + 1` of the latest operation on each key (0: empty)
    /// in the low 32 bits, and the key's hash in the high 32, so that growing the table hashes
    /// no key again and a probe compares keys only when their hashes agree.
    @exclusivity(unchecked) private var table: [UInt64] = []
    @exclusivity(unchecked) private var tableCount = 0

    init(unique: Bool) { self.unique = unique }

    deinit { arena?.deallocate() }

    var isEmpty: Bool { operations.isEmpty }
    var count: Int { operations.count }
    /// Memory held, roughly.
    var byteCount: Int { arenaCapacity + operations.capacity * 16 + table.capacity * 8 }

    func removeAll() {
        arena?.deallocate()
        arena = nil
        arenaCapacity = 0
        arenaCount = 0
        operations = []
        table = []
        tableCount = 0
    }

    /// Records an operation on `row`'s entry for `key`.
    func add(_ kind: UInt8, key: UnsafeRawBufferPointer, row: RowID) {
        let offset = append(kind, key: key, row: row)
        if unique { remember(offset, key: key) }
    }

    /// For a unique index: records the removal of `row`'s entry for `key`, unless the latest
    /// operation held back on `key` does not put it at `row` (false then, nothing recorded).
    /// One probe of the table serves the check and the record.
    func addRemoval(key: UnsafeRawBufferPointer, row: RowID) -> Bool {
        precondition(unique)
        if (tableCount + 1) * 2 > table.count { grow() }
        let h = Self.hash(key)
        var i = Int(h) & (table.count - 1)
        while table[i] != 0 {
            if let offset = names(table[i], key, h) {
                guard kind(at: offset) == PendingEntries.insert, self.row(at: offset) == row else { return false }
                table[i] = Self.entry(append(PendingEntries.remove, key: key, row: row), h)
                return true
            }
            i = (i + 1) & (table.count - 1)
        }
        table[i] = Self.entry(append(PendingEntries.remove, key: key, row: row), h)
        tableCount += 1
        return true
    }

    /// Appends an operation to the arena and the list; returns its offset.
    private func append(_ kind: UInt8, key: UnsafeRawBufferPointer, row: RowID) -> UInt32 {
        // (Keys are at most `PageLayout.maximumKeyLength` bytes: the put refused longer ones.)
        precondition(key.count <= Int(UInt16.max) && arenaCount + 11 + key.count <= Int(UInt32.max), "an index key too long to hold back")
        if arenaCount + 11 + key.count > arenaCapacity { growArena(to: arenaCount + 11 + key.count) }
        let offset = arenaCount
        let p = arena! + offset
        p.storeBytes(of: kind, as: UInt8.self)
        p.storeBytes(of: row.littleEndian, toByteOffset: 1, as: UInt64.self)
        p.storeBytes(of: UInt16(key.count).littleEndian, toByteOffset: 9, as: UInt16.self)
        if let source = key.baseAddress { (p + 11).copyMemory(from: source, byteCount: key.count) }
        arenaCount += 11 + key.count
        operations.append((PageView.leadingBytes(key), UInt32(offset)))
        return UInt32(offset)
    }

    private func growArena(to needed: Int) {
        let capacity = Swift.max(needed, Swift.max(4096, arenaCapacity * 2))
        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        if let arena {
            grown.copyMemory(from: arena, byteCount: arenaCount)
            arena.deallocate()
        }
        arena = grown
        arenaCapacity = capacity
    }

    @inline(__always)
    func kind(at offset: UInt32) -> UInt8 { arena!.load(fromByteOffset: Int(offset), as: UInt8.self) }

    @inline(__always)
    func row(at offset: UInt32) -> RowID { RowID(littleEndian: arena!.loadUnaligned(fromByteOffset: Int(offset) + 1, as: UInt64.self)) }

    @inline(__always)
    func withKey<R>(at offset: UInt32, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let p = arena! + Int(offset)
        let n = Int(UInt16(littleEndian: p.loadUnaligned(fromByteOffset: 9, as: UInt16.self)))
        return try body(UnsafeRawBufferPointer(start: p + 11, count: n))
    }

    // MARK: The table of a unique index

    @inline(__always)
    private static func hash(_ key: UnsafeRawBufferPointer) -> UInt32 { UInt32(truncatingIfNeeded: Checksum.hash(key)) }

    @inline(__always)
    private static func entry(_ offset: UInt32, _ hash: UInt32) -> UInt64 { UInt64(offset + 1) | UInt64(hash) << 32 }

    /// The operation an occupied slot names, if its key is `key` (with hash `hash`).
    @inline(__always)
    private func names(_ entry: UInt64, _ key: UnsafeRawBufferPointer, _ hash: UInt32) -> UInt32? {
        guard UInt32(truncatingIfNeeded: entry >> 32) == hash else { return nil }
        let offset = UInt32(truncatingIfNeeded: entry) - 1
        return withKey(at: offset, { compareBytes($0, key) == 0 }) ? offset : nil
    }

    private func remember(_ offset: UInt32, key: UnsafeRawBufferPointer) {
        if (tableCount + 1) * 2 > table.count { grow() }
        let h = Self.hash(key)
        var i = Int(h) & (table.count - 1)
        while table[i] != 0 {
            if names(table[i], key, h) != nil {
                table[i] = Self.entry(offset, h)
                return
            }
            i = (i + 1) & (table.count - 1)
        }
        table[i] = Self.entry(offset, h)
        tableCount += 1
    }

    private func grow() {
        let old = table
        table = .filled(with: 0, count: Swift.max(64, old.count * 2))
        for entry in old where entry != 0 {
            var i = Int(UInt32(truncatingIfNeeded: entry >> 32)) & (table.count - 1)
            while table[i] != 0 { i = (i + 1) & (table.count - 1) }
            table[i] = entry
        }
    }

    /// For a unique index: the latest operation on `key` in this transaction (its kind and
    /// row), or nil when there is none.
    func latest(_ key: UnsafeRawBufferPointer) -> (kind: UInt8, row: RowID)? {
        guard unique, !table.isEmpty else { return nil }
        let h = Self.hash(key)
        var i = Int(h) & (table.count - 1)
        while table[i] != 0 {
            if let offset = names(table[i], key, h) { return (kind(at: offset), row(at: offset)) }
            i = (i + 1) & (table.count - 1)
        }
        return nil
    }

    // MARK: Applying

    /// The operations in the order they apply: by tree key (the key, and for a non-unique
    /// index the row), and in the order they came for one key.
    ///
    /// Sorted by the keys' first 8 bytes with a radix sort (stable, and the operations come in
    /// offset order), then each run of equal first bytes by the whole order: a comparison sort
    /// of every operation cost about 450 instructions an entry, most of a commit's sorting.
    func sorted() -> [UInt32] {
        var order = operations
        if order.count >= PendingEntries.radixMinimum { PendingEntries.radixSort(&order) }
        var start = 0
        while start < order.count {
            var end = start + 1
            if order.count < PendingEntries.radixMinimum {
                end = order.count
            } else {
                while end < order.count && order[end].prefix == order[start].prefix { end += 1 }
            }
            if end - start > 1 { order[start..<end].sort(by: inOrder) }
            start = end
        }
        return order.map(\.offset)
    }

    /// The order operations apply in (see `sorted`).
    private func inOrder(_ a: (prefix: UInt64, offset: UInt32), _ b: (prefix: UInt64, offset: UInt32)) -> Bool {
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        let c = withKey(at: a.offset) { x in withKey(at: b.offset) { y in compareBytes(x, y) } }
        if c != 0 { return c < 0 }
        if !unique {
            let (ra, rb) = (row(at: a.offset), row(at: b.offset))
            if ra != rb { return ra < rb }
        }
        return a.offset < b.offset
    }

    /// Fewer operations than this are sorted by comparison alone.
    static let radixMinimum = 64

    /// Sorts by `prefix`, stably: 11 bits a pass from the lowest, passes whose digit is the
    /// same for every operation skipped.
    static func radixSort(_ order: inout [(prefix: UInt64, offset: UInt32)]) {
        let n = order.count
        let passes = 6, radix = 1 << 11, mask = UInt64(radix - 1)
        var counts = [Int](repeating: 0, count: passes * radix)
        var other = order
        order.withUnsafeMutableBufferPointer { a in
            other.withUnsafeMutableBufferPointer { b in
                counts.withUnsafeMutableBufferPointer { counts in
                    for e in a {
                        for p in 0..<passes { counts[p * radix + Int(e.prefix >> UInt64(11 * p) & mask)] += 1 }
                    }
                    var source = a, target = b
                    var inTarget = false
                    for p in 0..<passes {
                        let shift = UInt64(11 * p), base = p * radix
                        let first = Int(source[0].prefix >> shift & mask)
                        if counts[base + first] == n { continue }
                        var sum = 0
                        for d in 0..<radix {
                            let c = counts[base + d]
                            counts[base + d] = sum
                            sum += c
                        }
                        for e in source {
                            let d = base + Int(e.prefix >> shift & mask)
                            target[counts[d]] = e
                            counts[d] += 1
                        }
                        swap(&source, &target)
                        inTarget.toggle()
                    }
                    if inTarget { a.baseAddress!.update(from: b.baseAddress!, count: n) }
                }
            }
        }
    }
}
