/// Walks the records of one collection in row id order (or reverse).
///
/// A cursor belongs to its transaction; in a write transaction, a cursor refuses to move once
/// the transaction has changed the collection (collect row ids first, then change).
public struct RowCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let reverse: Bool
    private var started = false

    init(transaction: ReadTransaction, collection: UInt32, start: RowID?, reverse: Bool) throws {
        self.transaction = transaction
        self.reverse = reverse
        self.cursor = transaction.cursor(.rows(collection))
        if reverse {
            try TreeKey.withRow(start ?? .max) { try cursor.seek(atMost: $0, inclusive: true) }
        } else {
            try TreeKey.withRow(start ?? 0) { try cursor.seek(atLeast: $0, inclusive: true) }
        }
    }

    /// Moves to the next row; false at the end.
    private mutating func step() throws -> RowID? {
        if started {
            if reverse { try cursor.previous() } else { try cursor.next() }
        }
        started = true
        guard cursor.isValid else { return nil }
        guard let row = cursor.rowKey else {
            throw StoreError.corrupt("a row key that is not 8 bytes long", path: transaction.store.path, offset: nil)
        }
        return row
    }

    /// The next row id, without reading its record; nil at the end.
    public mutating func nextRowID() throws -> RowID? {
        try step()
    }

    /// The next row id and a copy of its record; nil at the end.
    public mutating func next() throws -> (row: RowID, record: [UInt8])? {
        var result: (RowID, [UInt8])?
        _ = try next { row, raw in result = (row, Array(raw)) }
        return result
    }

    /// The next row, with its record bytes lent to `body` (no copy); false at the end.
    public mutating func next(_ body: (RowID, UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard let row = try step() else { return false }
        let cell = cursor.cell
        try transaction.withRecordValue(cell.value, flags: cell.flags, row: row) { try body(row, $0) }
        return true
    }
}

/// Walks the entries of one index in key order (or reverse); equal keys come in row id order.
public struct IndexCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let unique: Bool
    private let range: KeyRange
    private let reverse: Bool
    private var started = false
    private var done = false
    /// The current entry's whole tree key (scratch, reused).
    private var treeKey: [UInt8] = []
    /// For a reverse walk of a non-unique index: the run of equal keys, handed out in row order.
    private var pending: [(key: [UInt8], row: RowID)] = []

    init(transaction: ReadTransaction, index: IndexInfoRecord, range: KeyRange, reverse: Bool) throws {
        self.transaction = transaction
        self.unique = index.unique
        self.range = range
        self.reverse = reverse
        self.cursor = transaction.cursor(.index(index.id))
        treeKey.reserveCapacity(64)
        // Above every row suffix of an entry with the upper bound as its key (they begin 1...8).
        let suffix: [UInt8] = unique ? [] : [0xFF]
        if reverse {
            if let upper = range.upper {
                try (upper + (range.upperInclusive ? suffix : [])).withUnsafeBytes { try cursor.seek(atMost: $0, inclusive: range.upperInclusive) }
            } else {
                try cursor.seek(atMost: nil)
            }
        } else {
            if let lower = range.lower {
                // A unique index's exclusive bound can be skipped in the tree. A non-unique one
                // starts at the bound itself: entries equal to it (and keys that extend it with an
                // escaped NUL, which sort below bound + 0xFF...) are then dropped by the range check.
                try lower.withUnsafeBytes { try cursor.seek(atLeast: $0, inclusive: unique ? range.lowerInclusive : true) }
            } else {
                try cursor.seek(atLeast: nil)
            }
        }
    }

    /// Reads the current entry into `treeKey`; returns its index key's length and its row.
    private mutating func current() throws -> (keyLength: Int, row: RowID) {
        cursor.copyKey(into: &treeKey)
        if unique {
            return (treeKey.count, try transaction.uniqueRow(cursor.cell.value))
        }
        guard let split = treeKey.withUnsafeBytes({ TreeKey.splitEntry($0) }) else {
            throw StoreError.corrupt("a malformed index entry", path: transaction.store.path, offset: nil)
        }
        return split
    }

    /// Steps to the next entry in range; false at the end.
    public mutating func advance() throws -> Bool {
        try next() != nil
    }

    /// The next entry in range (a copy of its key and its row), or nil at the end.
    public mutating func next() throws -> (key: [UInt8], row: RowID)? {
        if !pending.isEmpty { return pending.removeFirst() }
        while !done {
            if started {
                if reverse { try cursor.previous() } else { try cursor.next() }
            }
            started = true
            guard cursor.isValid else { done = true; return nil }
            let (n, row) = try current()
            let (inRange, beyond) = treeKey.withUnsafeBytes { raw -> (Bool, Bool) in
                let key = UnsafeRawBufferPointer(rebasing: raw[0..<n])
                if range.contains(key) { return (true, false) }
                if reverse, let lower = range.lower {
                    let c = lower.withUnsafeBytes { compareBytes(key, $0) }
                    return (false, c < 0 || (c == 0 && !range.lowerInclusive))
                }
                if !reverse, let upper = range.upper {
                    let c = upper.withUnsafeBytes { compareBytes(key, $0) }
                    return (false, c > 0 || (c == 0 && !range.upperInclusive))
                }
                return (false, false)
            }
            if beyond { done = true; return nil }
            guard inRange else { continue }
            let key = Array(treeKey[0..<n])
            if reverse && !unique { return try reverseRun(startingWith: (key, row)) }
            return (key, row)
        }
        return nil
    }

    /// Collects the run of entries with the same key (walking backwards) and returns them in
    /// row id order, so that equal keys come in the same order either way.
    private mutating func reverseRun(startingWith first: (key: [UInt8], row: RowID)) throws -> (key: [UInt8], row: RowID) {
        var run = [first]
        while true {
            try cursor.previous()
            guard cursor.isValid else { break }
            let (n, row) = try current()
            guard n == first.key.count, treeKey[0..<n].elementsEqual(first.key) else {
                try cursor.next()   // step back onto the last entry of the run
                break
            }
            run.append((first.key, row))
        }
        if !cursor.isValid { done = true }
        run.reverse()
        pending = Array(run.dropFirst())
        return run[0]
    }
}
