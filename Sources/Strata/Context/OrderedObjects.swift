@_spi(StorageBackend) import StrataRecords
/// Objects in the order they were added, each once, with their backings (the context's
/// inserted, changed and deleted objects: it holds them until they are saved).
struct OrderedObjects {
    /// An object and its backing, or neither once removed. (A struct: an array of optional
    /// tuples was destroyed through the runtime's generic optional and tuple value witnesses,
    /// about 1,200 instructions an element, a twentieth of inserting or upserting an object,
    /// W1 and W6; a struct's are compiled.)
    private struct Slot {
        var object: AnyObject?
        var backing: ModelBacking?
    }
    private var slots: [Slot] = []
    private var positions: [ObjectKey: Int] = [:]

    var isEmpty: Bool { positions.isEmpty }
    var count: Int { positions.count }
    var objects: [AnyObject] { slots.compactMap { $0.object } }
    var backings: [ModelBacking] { slots.compactMap { $0.backing } }

    /// Calls `body` with each backing in order, without making the list `backings` makes (an
    /// allocation, and a retain and release of each backing: a save walked its inserted
    /// objects so three times, W1).
    func forEachBacking(_ body: (ModelBacking) throws -> Void) rethrows {
        try slots.withUnsafeBufferPointer { slots in
            for slot in slots { if let backing = slot.backing { try body(backing) } }
        }
    }

    mutating func append(_ backing: ModelBacking) {
        let id = ObjectKey(backing.object)
        // One lookup: an object already there (rare) gets its position back.
        if let position = positions.updateValue(slots.count, forKey: id) {
            positions[id] = position
            return
        }
        slots.append(Slot(object: backing.object, backing: backing))
    }

    mutating func remove(_ object: AnyObject) {
        guard let p = positions.removeValue(forKey: ObjectKey(object)) else { return }
        slots[p] = Slot(object: nil, backing: nil)
        if positions.isEmpty { slots.removeAll() }
    }

    func contains(_ object: AnyObject) -> Bool { positions[ObjectKey(object)] != nil }

    /// Empties the list; a small one keeps its memory for the next objects (a loop of one
    /// insert and one save made the list and its map anew each time, W2), a large one lets go.
    mutating func removeAll() {
        let keeps = slots.capacity <= OrderedObjects.keptCapacity && positions.capacity <= OrderedObjects.keptCapacity
        slots.removeAll(keepingCapacity: keeps)
        positions.removeAll(keepingCapacity: keeps)
    }

    /// The most room (in objects) `removeAll` keeps.
    static let keptCapacity = 64
}

/// An object's identity as a dictionary key, hashed with one multiplication of its address:
/// addresses are not chosen by an adversary, and SipHash was most of the cost of inserting
/// an object into a context (the save's inserts are all in `OrderedObjects`).
struct ObjectKey: Hashable {
    let id: ObjectIdentifier
    @inline(__always) init(_ object: AnyObject) { id = ObjectIdentifier(object) }
    @inline(__always) init(_ id: ObjectIdentifier) { self.id = id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    func _rawHashValue(seed: Int) -> Int {
        let address = UInt64(UInt(bitPattern: id))
        return Int(truncatingIfNeeded: ((address ^ UInt64(truncatingIfNeeded: seed)) &* 0x9E37_79B9_7F4A_7C15) >> 29)
    }
}
