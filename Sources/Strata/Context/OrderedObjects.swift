/// Objects in the order they were added, each once, with their backings (the context's
/// inserted, changed and deleted objects: it holds them until they are saved).
struct OrderedObjects {
    private var slots: [(object: AnyObject, backing: ModelBacking)?] = []
    private var positions: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { positions.isEmpty }
    var count: Int { positions.count }
    var objects: [AnyObject] { slots.compactMap { $0?.object } }
    var backings: [ModelBacking] { slots.compactMap { $0?.backing } }

    mutating func append(_ backing: ModelBacking) {
        let id = ObjectIdentifier(backing.object)
        guard positions[id] == nil else { return }
        positions[id] = slots.count
        slots.append((backing.object, backing))
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
