/// Objects in the order they were added, each once.
struct OrderedObjects {
    private var slots: [AnyObject?] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { positions.isEmpty }
    var count: Int { positions.count }
    var objects: [AnyObject] { slots.compactMap { $0 } }

    mutating func append(_ object: AnyObject) {
        let id = ObjectIdentifier(object)
        guard positions[id] == nil else { return }
        positions[id] = slots.count
        slots.append(object)
    }

    mutating func remove(_ object: AnyObject) {
        guard let p = positions.removeValue(forKey: ObjectIdentifier(object)) else { return }
        slots[p] = nil
        if positions.isEmpty { slots.removeAll() }
    }

    func contains(_ object: AnyObject) -> Bool { positions[ObjectIdentifier(object)] != nil }

    mutating func removeAll() {
        slots.removeAll()
        positions.removeAll()
    }
}
