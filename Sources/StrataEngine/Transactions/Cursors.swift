/// Walks the records of one collection in row id order (or reverse).
///
/// A cursor belongs to its transaction; in a write transaction, a cursor refuses to move once
/// the transaction has changed the collection (collect row ids first, then change).
public struct RowCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let reverse: Bool
    private var started = false
    /// Set once `forEachBatch` was stopped: where it stopped is not a row the caller was given.
    private var usedUp = false

    /// The most records `forEachBatch` lends in one call.
    public static let batchCapacity = 64

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

    /// Moves to the next cell; false at the end.
    @inline(__always)
    private mutating func advance() throws -> Bool {
        if usedUp { return false }
        if started { try move() }
        started = true
        return cursor.isValid
    }

    /// Moves to the next row; nil at the end.
    private mutating func step() throws -> RowID? {
        guard try advance() else { return nil }
        guard let row = cursor.rowKey else { throw malformedKey() }
        return row
    }

    private func malformedKey() -> StoreError {
        StoreError.corrupt("a row key that is not 8 bytes long", path: transaction.path, offset: nil)
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
        guard try advance() else { return false }
        // The cell is read once, for its key and its value.
        let cell = cursor.rowCell
        guard let row = cell.row else { throw malformedKey() }
        try transaction.withRecordValue(cell.value, flags: cell.flags, row: row) { try body(row, $0) }
        return true
    }

    /// Calls `body` with each row from here on and its record's bytes (lent, no copy), until
    /// `body` returns false (the next step then begins after that row) or the rows end. The
    /// same walk as calling `next(_:)` in a loop, a leaf at a time.
    public mutating func forEach(_ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        if usedUp { return }
        if started { try move() }
        started = true
        let transaction = self.transaction
        try cursor.scanRows(forward: !reverse) { row, value, flags in
            try transaction.withRecordValue(value, flags: flags, row: row) { try body(row, $0) }
        }
    }

    /// Calls `body` with the rows from here on and their records' bytes (lent, no copy), many
    /// at a time (up to `batchCapacity`), in the walk's order, until `body` returns false or
    /// the rows end. The same rows as `forEach`, for a call per batch instead of one per row:
    /// a call and the reload of the caller's closure cost about 40 instructions per row of a
    /// scan (W4, Docs/Benchmarks.md). In a write transaction a record may lie in bytes the
    /// writer lends only during a call, so there a batch holds one row. Once `body` returns
    /// false the cursor is used up: it hands out no more rows.
    public mutating func forEachBatch(_ body: (UnsafeBufferPointer<LentRecord>) throws -> Bool) throws {
        if usedUp { return }
        if started { try move() }
        started = true
        let transaction = self.transaction
        let forward = !reverse
        var stopped = false
        /// A row lent alone: a record in a value frame (or a malformed value, which throws), or
        /// any record of a write transaction, lent while its bytes are.
        func lendAlone(_ row: RowID, _ value: UnsafeRawBufferPointer, _ flags: UInt8) throws -> Bool {
            try transaction.withRecordValue(value, flags: flags, row: row) { bytes in
                try withUnsafePointer(to: LentRecord(row: row, bytes: bytes)) { try body(UnsafeBufferPointer(start: $0, count: 1)) }
            }
        }
        guard transaction.pages.writer == nil else {
            try cursor.scanRows(forward: forward) { row, value, flags in
                stopped = try !lendAlone(row, value, flags)
                return !stopped
            }
            if stopped { usedUp = true }
            return
        }
        let capacity = RowCursor.batchCapacity
        try withUnsafeTemporaryAllocation(of: LentRecord.self, capacity: capacity) { buffer in
            let base = buffer.baseAddress.unsafelyUnwrapped
            while cursor.isValid {
                // The rows whose records lie in their cells, gathered by a walk that calls
                // nothing (`InlineRecords`). It stops on a framed record (the cursor is on it),
                // on the last row of a full batch, or past the end.
                var batch = InlineRecords(base: base, capacity: capacity)
                try cursor.scanRows(forward: forward, into: &batch)
                let count = batch.count, framed = batch.framed
                if count > 0, try !body(UnsafeBufferPointer(start: base, count: count)) {
                    stopped = true
                    return
                }
                if framed {
                    let cell = cursor.rowCell
                    guard let row = cell.row else { throw malformedKey() }
                    if try !lendAlone(row, cell.value, cell.flags) {
                        stopped = true
                        return
                    }
                    try move()
                } else if count == capacity {
                    try move()
                }
            }
        }
        if stopped { usedUp = true }
    }

    /// One cell in the walk's direction.
    @inline(__always)
    private mutating func move() throws {
        if reverse { try cursor.previous() } else { try cursor.next() }
    }
}

/// A walk's sink for `RowCursor.forEachBatch`: the rows whose records lie in their cells, up to
/// `capacity`. It stops the walk on the last row of a full batch, or on a row whose record is
/// in a value frame (or malformed: lent alone, it throws), setting `framed`. (Where the walk's
/// closure also lent the batch and the framed records, its captures were kept on the stack and
/// reloaded for each row: the walk's part of a counted row was 56 instructions, now 42, W4.)
struct InlineRecords: RowSink {
    let base: UnsafeMutablePointer<LentRecord>
    let capacity: Int
    private(set) var count = 0
    private(set) var framed = false

    init(base: UnsafeMutablePointer<LentRecord>, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    @inline(__always)
    mutating func take(_ row: RowID, _ value: UnsafeRawBufferPointer, _ flags: UInt8) throws -> Bool {
        guard let bytes = RowValue.decode(value, flags: flags)?.inline else {
            framed = true
            return false
        }
        (base + count).initialize(to: LentRecord(row: row, bytes: bytes))
        count &+= 1
        return count < capacity
    }
}

/// A record lent by a batched walk (`RowCursor.forEachBatch`): its row, and its bytes, valid
/// only during the call that lends them.
public struct LentRecord {
    public let row: RowID
    public let bytes: UnsafeRawBufferPointer

    public init(row: RowID, bytes: UnsafeRawBufferPointer) {
        self.row = row
        self.bytes = bytes
    }
}

/// Walks the entries of one index in key order (or reverse); equal keys come in row id order.
///
/// Stepping allocates nothing once the cursor's scratch buffers have grown to the longest key:
/// `nextRow()` hands out row ids only; `next()` copies the key out for the caller.
public struct IndexCursor {
    private let transaction: ReadTransaction
    private var cursor: TreeCursor
    private let unique: Bool
    private let range: KeyRange
    private let reverse: Bool
    private var started = false
    private var done = false
    /// The current tree entry's whole key, and the index key of the entry last handed out.
    private var keys = KeyScratch()
    /// For a reverse walk of a non-unique index: the rest of the run of equal keys (key in
    /// `keys.kept`), highest row first, so that `popLast` hands them out in row order.
    private var runRows: [RowID] = []
    /// The entry a reverse run stopped on (read into `keys.current`, where the cursor stands):
    /// the next step begins with it instead of reading it again.
    private var held: (keyLength: Int, row: RowID)?

    init(transaction: ReadTransaction, index: IndexInfoRecord, range: KeyRange, reverse: Bool) throws {
        self.transaction = transaction
        self.unique = index.unique
        self.range = range
        self.reverse = reverse
        self.cursor = transaction.cursor(.index(index.id))
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

    /// Reads the current entry's tree key into `keys.current`; returns its index key's length
    /// and its row.
    private mutating func current() throws -> (keyLength: Int, row: RowID) {
        let cell = cursor.cell
        keys.setCurrent(cursor.view.prefix, cell.suffix)
        if unique {
            return (keys.currentCount, try transaction.uniqueRow(cell.value))
        }
        guard let split = TreeKey.splitEntry(keys.current) else {
            throw StoreError.corrupt("a malformed index entry", path: transaction.path, offset: nil)
        }
        return split
    }

    /// Steps to the next entry in range; false at the end.
    public mutating func advance() throws -> Bool {
        try nextRow() != nil
    }

    /// The next entry in range (a copy of its key and its row), or nil at the end.
    public mutating func next() throws -> (key: [UInt8], row: RowID)? {
        guard let row = try nextRow() else { return nil }
        return (Array(keys.kept), row)
    }

    /// The next entry's row in range, or nil at the end; its key is not copied out.
    public mutating func nextRow() throws -> RowID? {
        if let row = runRows.popLast() { return row }
        KeyScratch.unique(&keys)
        while !done {
            let (n, row): (Int, RowID)
            if let entry = held {
                (n, row) = entry
                held = nil
            } else {
                if started {
                    if reverse { try cursor.previous() } else { try cursor.next() }
                }
                started = true
                guard cursor.isValid else { done = true; return nil }
                (n, row) = try current()
            }
            switch position(ofKeyLength: n) {
            case .beyond: done = true; return nil
            case .outside: continue
            case .inside:
                keys.keepCurrent(length: n)
                if reverse && !unique { return try reverseRun(startingWith: row) }
                return row
            }
        }
        return nil
    }

    /// Skips `n` entries, as `n` calls of `nextRow()` would; returns how many it skipped
    /// (fewer at the end). A walk of a whole index passes over whole leaves without reading
    /// their entries; elsewhere it steps.
    public mutating func skip(_ n: Int) throws -> Int {
        guard n > 0, !done else { return 0 }
        guard range.lower == nil, range.upper == nil, runRows.isEmpty, held == nil else {
            var skipped = 0
            while skipped < n, try nextRow() != nil { skipped += 1 }
            return skipped
        }
        KeyScratch.unique(&keys)
        if started {
            if reverse { try cursor.previous() } else { try cursor.next() }
        }
        started = false   // from here the cursor stands on the next entry to hand out
        guard cursor.isValid else { done = true; return 0 }
        let skipped = try cursor.skip(n, forward: !reverse)
        guard cursor.isValid else { done = true; return skipped }
        if reverse && !unique { try regroupRunAfterSkip() }
        return skipped
    }

    /// After a reverse skip of a non-unique index: a run of equal keys the skip cut in two
    /// lost its highest rows, where the walk (which hands a run out in row order) would have
    /// passed over its lowest. Reads the whole run and keeps in `runRows` the rows the walk
    /// has still to hand out.
    private mutating func regroupRunAfterSkip() throws {
        let (n, next) = try current()
        keys.keepCurrent(length: n)
        var last = try seekLastOfKept()
        guard last != next else { return }   // no skipped entry has this key: the cursor is back on `next`
        last = try reverseRun(startingWith: last)
        runRows.append(last)
        // The run's rows above `next` were skipped in place of as many of its lowest.
        let skippedInRun = runRows.prefix(while: { $0 > next }).count
        runRows.removeLast(skippedInRun)
    }

    /// Moves onto the last entry whose key is `keys.kept` (which must exist) and returns its row.
    private mutating func seekLastOfKept() throws -> RowID {
        var bound = Array(keys.kept)
        bound.append(0xFF)   // above every row suffix of the key (they begin 1...8)
        try bound.withUnsafeBytes { try cursor.seek(atMost: $0, inclusive: true) }
        while cursor.isValid {
            let (n, row) = try current()
            if n == keys.keptCount && compareBytes(UnsafeRawBufferPointer(rebasing: keys.current[0..<n]), keys.kept) == 0 { return row }
            try cursor.previous()   // a longer key between the run and the bound
        }
        throw StoreError.corrupt("an index entry that a walk read could not be found again", path: transaction.path, offset: nil)
    }

    private enum Position { case inside, outside, beyond }

    /// Where the current entry's key (`keys.current[0..<n]`) lies: in the range, outside it,
    /// or past its end in the walk's direction.
    @inline(__always)
    private func position(ofKeyLength n: Int) -> Position {
        if range.lower == nil && range.upper == nil { return .inside }
        let key = UnsafeRawBufferPointer(rebasing: keys.current[0..<n])
        if range.contains(key) { return .inside }
        if reverse, let lower = range.lower {
            let c = lower.withUnsafeBytes { compareBytes(key, $0) }
            return c < 0 || (c == 0 && !range.lowerInclusive) ? .beyond : .outside
        }
        if !reverse, let upper = range.upper {
            let c = upper.withUnsafeBytes { compareBytes(key, $0) }
            return c > 0 || (c == 0 && !range.upperInclusive) ? .beyond : .outside
        }
        return .outside
    }

    /// Collects the run of entries with the key in `keys.kept` (walking backwards) into
    /// `runRows` and returns its lowest row, so that equal keys come in the same order either way.
    private mutating func reverseRun(startingWith first: RowID) throws -> RowID {
        runRows.append(first)   // empty: a step reaches here only once the last run is handed out
        while true {
            try cursor.previous()
            guard cursor.isValid else { break }
            let (n, row) = try current()
            let same = n == keys.keptCount && compareBytes(UnsafeRawBufferPointer(rebasing: keys.current[0..<n]), keys.kept) == 0
            guard same else {
                held = (n, row)
                break
            }
            runRows.append(row)
        }
        if !cursor.isValid { done = true }
        return runRows.removeLast()
    }
}
