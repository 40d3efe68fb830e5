import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The bridge's maps of each model's rows (`BridgeState.EntityRows`): identifiers to rows, rows
// to identifiers, rows to the records kept. Dictionaries with the same answers, but their keys
// are mostly small dense integers.
//
// A store whose keys are integers (a PostgreSQL table's `bigint` ids, from a sequence) gives
// the identifiers of one scope (`IdentifierScope.keyedByRow`), and such an identifier's row is
// its key: no map holds it (`BridgeRows`), only a bit says the row was handed out. Before,
// every row a process read took a slot in two maps for the process's life, about 50 bytes a
// row (a long-lived server reading a large table grew without bound).
//
// The maps hold the rest: rows the bridge numbers itself (inserts, keys of other kinds), and
// the records kept. Those go in arrays indexed by the integer; anything else (another scope, a
// key far beyond the others) in a dictionary. A fetch of 20,000 rows looked each row up in
// all three dictionaries; the lookups (hashing, then a cache miss each in a map of every row
// this process has read) were 12% of reading them on PostgreSQL (W7, perf), 3% with arrays.

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

/// Where the bridge's own rows start. Below it, a row is the key of an identifier of its
/// model's integer-keyed scope (`IdentifierScope.keyedByRow`, a PostgreSQL table's `bigint`
/// ids): the identifier and the row are one number, and no map holds either. From it, rows are
/// numbered by `RowAllocator` as objects need them (an insert's, before the store names it; an
/// identifier with a key of another kind), and the maps hold those.
enum BridgeRows {
    static let firstAllocated: RowID = 1 << 62
}

/// Values by row (`[RowID: Value]`): the identifiers of the bridge's own rows (`idByRow`),
/// and the records kept (`records`). Each of the two ranges of rows (keys, and the bridge's
/// own from `BridgeRows.firstAllocated`) has an array of its own, as each is dense from its
/// start.
struct ValuesByRow<Value> {
    /// One range's rows, by their offset from its start.
    private struct Dense {
        var values: [Value?] = []
        var count = 0
    }
    private var keys = Dense()
    private var own = Dense()
    private var other: [RowID: Value] = [:]

    var count: Int { keys.count + own.count + other.count }

    /// Room for about `n` more of the bridge's own rows (numbered in order).
    mutating func reserveCapacity(_ n: Int) {
        own.values.reserveCapacity(Swift.min(own.values.count + n, 2 * own.count + 65_536))
    }

    @inline(__always)
    private static func split(_ row: RowID) -> (isOwn: Bool, offset: UInt64) {
        row >= BridgeRows.firstAllocated ? (true, row - BridgeRows.firstAllocated) : (false, row)
    }

    subscript(row: RowID) -> Value? {
        get {
            let (isOwn, offset) = Self.split(row)
            let dense = isOwn ? own.values : keys.values
            if offset < UInt64(dense.count), let value = dense[Int(offset)] { return value }
            return other.isEmpty ? nil : other[row]
        }
        set {
            let (isOwn, offset) = Self.split(row)
            if isOwn { Self.set(&own, offset, row, newValue, &other) } else { Self.set(&keys, offset, row, newValue, &other) }
        }
    }

    private static func set(_ dense: inout Dense, _ offset: UInt64, _ row: RowID, _ newValue: Value?, _ other: inout [RowID: Value]) {
        if offset < UInt64(dense.values.count) {
            if dense.values[Int(offset)] != nil { dense.count -= 1 }
            dense.values[Int(offset)] = newValue
            if newValue != nil { dense.count += 1 }
            // A row the dictionary had before the array reached it.
            if !other.isEmpty { other[row] = nil }
            return
        }
        // The array grows as rows come, within the bound of the rows it holds (`fitsDense`).
        if newValue != nil, fitsDense(offset, count: dense.count) {
            grow(&dense.values, toHold: Int(offset), with: nil)
            dense.values[Int(offset)] = newValue
            dense.count += 1
            if !other.isEmpty { other[row] = nil }
            return
        }
        other[row] = newValue
    }
}
