import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The registered objects of one model in a context, by row: one object per stored row. The
/// backings are not retained (a backing unregisters its object when the object goes away).
///
/// An open-addressing table of its own (linear probing, removals shift their cluster back, no
/// tombstones), where rows four at a time share a cache line: a save registers its inserts and
/// frees them in row order, and a fetch registers rows in order, so consecutive rows land side
/// by side instead of wherever a hash sends them (at 100,000 objects the cache misses of a
/// `Dictionary` were most of registering and unregistering).
final class IdentityMap {
    private struct Slot {
        var row: RowID
        var backing: Unmanaged<ModelBacking>?
    }

    /// (Unchecked: every access is a plain read or a single insert or removal, never
    /// overlapping, and the run-time checks cost more than the lookups.)
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The most slots an emptied map keeps (1 KiB).
    static let keptWhenEmpty = 64

    /// Where a row's probe starts: its group of four rows scattered by a multiplication, the
    /// row's place in the group kept.
    @inline(__always)
    private static func home(_ row: RowID, _ mask: Int) -> Int {
        let group = (row >> 2) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: (group >> 30) & ~3 | (row & 3)) & mask
    }

    @inline(__always)
    func backing(_ row: RowID) -> ModelBacking? {
        guard count > 0 else { return nil }
        return slots.withUnsafeBufferPointer { s in
            let mask = s.count - 1
            var i = Self.home(row, mask)
            while let b = s[i].backing {
                if s[i].row == row { return b.takeUnretainedValue() }
                i = (i + 1) & mask
            }
            return nil
        }
    }

    func insert(_ backing: ModelBacking) {
        if (count + 1) * 2 > slots.count { grow() }
        let row = backing.rowID
        slots.withUnsafeMutableBufferPointer { s in
            let mask = s.count - 1
            var i = Self.home(row, mask)
            while s[i].backing != nil {
                if s[i].row == row {
                    s[i].backing = .passUnretained(backing)
                    return
                }
                i = (i + 1) & mask
            }
            s[i] = Slot(row: row, backing: .passUnretained(backing))
            count += 1
        }
    }

    /// Forgets `backing`'s row if it is still that backing's.
    func remove(_ backing: ModelBacking) {
        guard count > 0 else { return }
        let row = backing.rowID
        let removed: Bool = slots.withUnsafeMutableBufferPointer { s in
            let mask = s.count - 1
            var i = Self.home(row, mask)
            while let b = s[i].backing {
                if s[i].row == row {
                    guard b.toOpaque() == Unmanaged.passUnretained(backing).toOpaque() else { return false }
                    Self.close(i, in: s, mask: mask)
                    return true
                }
                i = (i + 1) & mask
            }
            return false
        }
        guard removed else { return }
        count -= 1
        // A map emptied (the context's objects went away) gives its memory back, unless it is
        // small: a context that fetches one object at a time and drops it would otherwise
        // allocate a table for every fetch.
        if count == 0, slots.count > Self.keptWhenEmpty { slots = [] }
    }

    /// Empties slot `hole`, moving back the slots after it whose probe would no longer reach
    /// them (those whose home is not cyclically in `(hole, j]`).
    private static func close(_ hole: Int, in s: UnsafeMutableBufferPointer<Slot>, mask: Int) {
        var hole = hole
        var j = hole
        while true {
            j = (j + 1) & mask
            guard s[j].backing != nil else { break }
            let home = Self.home(s[j].row, mask)
            let reachable = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j)
            if !reachable {
                s[hole] = s[j]
                hole = j
            }
        }
        s[hole].backing = nil
    }

    private func grow() {
        let old = slots
        slots = [Slot](repeating: Slot(row: 0, backing: nil), count: Swift.max(16, old.count * 2))
        slots.withUnsafeMutableBufferPointer { s in
            let mask = s.count - 1
            for slot in old where slot.backing != nil {
                var i = Self.home(slot.row, mask)
                while s[i].backing != nil { i = (i + 1) & mask }
                s[i] = slot
            }
        }
    }

    var backings: [ModelBacking] { slots.compactMap { $0.backing?.takeUnretainedValue() } }
}

/// A row id as a dictionary key, hashed with one multiplication: row ids are not chosen by an
/// adversary, and SipHash is most of the cost of registering an object.
struct RowKey: Hashable {
    let row: RowID
    @inline(__always) init(_ row: RowID) { self.row = row }
    func hash(into hasher: inout Hasher) { hasher.combine(row) }
    func _rawHashValue(seed: Int) -> Int {
        Int(truncatingIfNeeded: (row ^ UInt64(truncatingIfNeeded: seed)) &* 0x9E37_79B9_7F4A_7C15 >> 7)
    }
}
