/// Walks the records of one collection in row id order (or reverse).
///
/// A cursor belongs to its transaction; in a write transaction, changing the tree while a
/// cursor is open invalidates the cursor (collect row ids first, then change).
public struct RowCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let prefix: [UInt8]
    private let reverse: Bool
    private var started = false

    init(transaction: ReadTransaction, collection: UInt32, start: RowID?, reverse: Bool) throws {
        self.transaction = transaction
        self.prefix = TreeKey.rowPrefix(collection)
        self.reverse = reverse
        self.cursor = TreeCursor(root: transaction.root, reader: transaction.reader)
        if reverse {
            let from = start.map { TreeKey.row(collection, $0) } ?? TreeKey.row(collection, .max)
            try cursor.seek(atMost: from, inclusive: true)
        } else {
            try cursor.seek(atLeast: TreeKey.row(collection, start ?? 0), inclusive: true)
        }
    }

    /// The next row id and where its record lives, or nil at the end.
    mutating func nextLocation() throws -> (RowID, RecordLocation)? {
        if started {
            if reverse { try cursor.previous() } else { try cursor.next() }
        }
        started = true
        guard cursor.isValid else { return nil }
        let row: RowID? = cursor.withKey { k in
            guard k.count == 13 else { return nil }
            for i in 0..<5 where k[i] != prefix[i] { return nil }
            return k.loadBE64(5)
        }
        guard let row else { return nil }
        let location = try cursor.withValue { try transaction.location($0, at: "row \(row)") }
        return (row, location)
    }

    /// The next row id, without reading its record; nil at the end.
    public mutating func nextRowID() throws -> RowID? {
        try nextLocation()?.0
    }

    /// The next row id and a copy of its record; nil at the end.
    public mutating func next() throws -> (row: RowID, record: [UInt8])? {
        guard let (row, location) = try nextLocation() else { return nil }
        return (row, try transaction.withFrame(location) { Array($0) })
    }

    /// The next row, with its record bytes lent to `body` (no copy); false at the end.
    public mutating func next(_ body: (RowID, UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard let (row, location) = try nextLocation() else { return false }
        try transaction.withFrame(location) { try body(row, $0) }
        return true
    }
}

/// Walks the entries of one index in key order (or reverse); equal keys come in row id order.
public struct IndexCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let prefix: [UInt8]
    private let unique: Bool
    private let range: KeyRange
    private let reverse: Bool
    private var started = false
    private var done = false
    /// For a reverse walk of a non-unique index: the run of equal keys, handed out in row order.
    private var pending: [(key: [UInt8], row: RowID)] = []

    init(transaction: ReadTransaction, index: IndexInfoRecord, range: KeyRange, reverse: Bool) throws {
        self.transaction = transaction
        self.prefix = TreeKey.indexPrefix(index.id)
        self.unique = index.unique
        self.range = range
        self.reverse = reverse
        self.cursor = TreeCursor(root: transaction.root, reader: transaction.reader)
        let suffix: [UInt8] = unique ? [] : [UInt8](repeating: 0xFF, count: 8)
        if reverse {
            if let upper = range.upper {
                try cursor.seek(atMost: prefix + upper + (range.upperInclusive ? suffix : []), inclusive: range.upperInclusive)
            } else {
                try cursor.seek(atMost: KeyRange.successor(ofPrefix: prefix) ?? [0xFF], inclusive: false)
            }
        } else {
            if let lower = range.lower {
                // A unique index's exclusive bound can be skipped in the tree. A non-unique one
                // starts at the bound itself: entries equal to it (and keys that extend it with an
                // escaped NUL, which sort below bound + 0xFF...) are then dropped by the range check.
                try cursor.seek(atLeast: prefix + lower, inclusive: unique ? range.lowerInclusive : true)
            } else {
                try cursor.seek(atLeast: prefix, inclusive: true)
            }
        }
    }

    /// Calls `body` with the current entry's key (without the index prefix and row suffix) and
    /// row; nil when the cursor has left this index.
    private func withCurrent<R>(_ body: (UnsafeRawBufferPointer, RowID) throws -> R) throws -> R? {
        let node = cursor.node
        let index = cursor.index
        return try node.withKey(index) { k -> R? in
            guard k.count >= 5 + (unique ? 0 : 8) else { return nil }
            for i in 0..<5 where k[i] != prefix[i] { return nil }
            if unique {
                let row = try node.withValue(index) { v -> RowID in
                    guard v.count == 8 else {
                        throw StoreError.corrupt("a malformed unique-index entry", path: transaction.store.path, offset: nil)
                    }
                    return v.loadLE64(0)
                }
                return try body(UnsafeRawBufferPointer(rebasing: k[5...]), row)
            }
            return try body(UnsafeRawBufferPointer(rebasing: k[5..<(k.count - 8)]), k.loadBE64(k.count - 8))
        }
    }

    /// Steps to the next entry in range; false at the end. `key` and `row` then describe it.
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
            let entry: (key: [UInt8], row: RowID, inRange: Bool, beyond: Bool)? = try withCurrent { key, row in
                let inRange = range.contains(key)
                var beyond = false
                if !inRange {
                    if reverse, let lower = range.lower {
                        let c = lower.withUnsafeBytes { compareBytes(key, $0) }
                        beyond = c < 0 || (c == 0 && !range.lowerInclusive)
                    } else if !reverse, let upper = range.upper {
                        let c = upper.withUnsafeBytes { compareBytes(key, $0) }
                        beyond = c > 0 || (c == 0 && !range.upperInclusive)
                    }
                }
                return (Array(key), row, inRange, beyond)
            }
            guard let entry else { done = true; return nil }
            if entry.beyond { done = true; return nil }
            guard entry.inRange else { continue }
            if reverse && !unique {
                return try reverseRun(startingWith: (entry.key, entry.row))
            }
            return (entry.key, entry.row)
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
            let same: RowID?? = try withCurrent { key, row in
                first.key.withUnsafeBytes { compareBytes(key, $0) } == 0 ? row : nil
            }
            guard let found = same, let row = found else {
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
