import StrataEngine

/// The registered objects of one model in a context, by row: one object per stored row. The
/// backings are not retained (a backing unregisters its object when the object goes away).
final class IdentityMap {
    /// (Unchecked: every access is a plain read or a single insert or removal, never
    /// overlapping, and the run-time checks cost more than the lookups.)
    @exclusivity(unchecked) private(set) var rows: [RowKey: Unmanaged<ModelBacking>] = [:]

    @inline(__always)
    func backing(_ row: RowID) -> ModelBacking? { rows[RowKey(row)]?.takeUnretainedValue() }

    func insert(_ backing: ModelBacking) { rows[RowKey(backing.rowID)] = .passUnretained(backing) }

    /// Forgets `backing`'s row if it is still that backing's.
    func remove(_ backing: ModelBacking) {
        guard let i = rows.index(forKey: RowKey(backing.rowID)),
              rows.values[i].toOpaque() == Unmanaged.passUnretained(backing).toOpaque() else { return }
        rows.remove(at: i)
    }

    var backings: [ModelBacking] { rows.values.map { $0.takeUnretainedValue() } }
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
