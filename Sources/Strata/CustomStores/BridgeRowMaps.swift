import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The bridge's maps of each model's rows (`BridgeState.EntityRows`): identifiers to rows, rows
// to identifiers, rows to the records kept. Dictionaries with the same answers, but their keys
// are mostly small dense integers: rows are numbered from 1 as objects are first seen, and a
// store whose keys are integers (a PostgreSQL table's `bigint` ids, from a sequence) gives the
// identifiers of one scope (`IdentifierScope.keyedByRow`). Those go in arrays indexed by the
// integer; anything else (another scope, a key far beyond the others) in a dictionary. A
// fetch of 20,000 rows looked each row up in all three dictionaries; the lookups (hashing,
// then a cache miss each in a map of every row this process has read) were 12% of reading
// them on PostgreSQL (W7, perf), 3% now. In key order, the arrays are read in order.

/// How far beyond the entries it has an array may grow for one key: twice its count, plus a
/// margin, so that a map of n keys holds at most about 2n + 65,536 slots, however sparse the
/// keys are. A key further out goes in the dictionary.
private func fitsDense(_ key: UInt64, count: Int) -> Bool {
    key < UInt64(2 * count + 65_536)
}

/// Grows `dense` to hold index `key`, doubling it at least (so that keys coming one by one
/// cost amortized constant time).
private func grow<T>(_ dense: inout [T], toHold key: Int, with empty: T) {
    dense.append(contentsOf: repeatElement(empty, count: Swift.max(key + 1, 2 * dense.count) - dense.count))
}

/// Rows by identifier (`[PersistentIdentifier: RowID]`).
struct RowsByIdentifier {
    /// The scope whose keys are rows (the first such seen): its identifiers' rows are `dense[key]`
    /// (0: none; no row is 0).
    private var scope: IdentifierScope?
    private var dense: [RowID] = []
    private var denseCount = 0
    private var other: [PersistentIdentifier: RowID] = [:]

    var count: Int { denseCount + other.count }

    /// The dense slot of `id`, or nil when it goes in the dictionary. `growing`: may the array
    /// grow to hold it.
    private mutating func slot(_ id: PersistentIdentifier, growing: Bool) -> Int? {
        guard id.scope.keyIsRow, id.rowID > 0 else { return nil }
        if scope == nil, growing { scope = id.scope }
        guard let scope, scope === id.scope else { return nil }
        let key = UInt64(id.rowID)
        if key < UInt64(dense.count) { return Int(key) }
        guard growing, fitsDense(key, count: denseCount) else { return nil }
        grow(&dense, toHold: Int(key), with: 0)
        return Int(key)
    }

    subscript(id: PersistentIdentifier) -> RowID? {
        get {
            if let scope, scope === id.scope, id.rowID > 0 {
                let key = UInt64(id.rowID)
                if key < UInt64(dense.count), dense[Int(key)] != 0 { return dense[Int(key)] }
            }
            return other.isEmpty ? nil : other[id]
        }
        set {
            if let i = slot(id, growing: newValue != nil) {
                if dense[i] != 0 { denseCount -= 1 }
                dense[i] = newValue ?? 0
                if newValue != nil { denseCount += 1 }
                // A key the dictionary took before the array reached it.
                if !other.isEmpty { other[id] = nil }
                return
            }
            other[id] = newValue
        }
    }
}

/// Values by row (`[RowID: Value]`): the identifiers of rows (`idByRow`), and the records kept
/// (`records`). Rows are this process's, numbered from 1, so the array grows with them.
struct ValuesByRow<Value> {
    private var dense: [Value?] = []
    private var denseCount = 0
    private var other: [RowID: Value] = [:]

    var count: Int { denseCount + other.count }

    /// Room for rows up to about `n` (rows are numbered from 1).
    mutating func reserveCapacity(_ n: Int) {
        dense.reserveCapacity(Swift.min(n + 1, 2 * denseCount + 65_536))
    }

    subscript(row: RowID) -> Value? {
        get {
            if row < UInt64(dense.count), let value = dense[Int(row)] { return value }
            return other.isEmpty ? nil : other[row]
        }
        set {
            if row < UInt64(dense.count) {
                if dense[Int(row)] != nil { denseCount -= 1 }
                dense[Int(row)] = newValue
                if newValue != nil { denseCount += 1 }
                // A row the dictionary had before the array reached it.
                if !other.isEmpty { other[row] = nil }
                return
            }
            // The array grows as rows come, within the bound of the rows it holds (`fitsDense`).
            if newValue != nil, fitsDense(row, count: denseCount) {
                grow(&dense, toHold: Int(row), with: nil)
                dense[Int(row)] = newValue
                denseCount += 1
                if !other.isEmpty { other[row] = nil }
                return
            }
            other[row] = newValue
        }
    }
}
