import Synchronization

/// A bounded cache shared by every transaction of a store file.
///
/// Two generations approximate least-recently-used at the cost of a dictionary lookup:
/// entries go into the young generation; when it passes half the budget, the old generation
/// is dropped and the young one becomes old. A hit in the old generation moves the entry back
/// to the young one. Memory stays under `capacity` bytes (plus one entry).
final class TwoGenerationCache<Value: Sendable>: Sendable {
    private struct State {
        var young: [UInt64: (value: Value, cost: Int)] = [:]
        var old: [UInt64: (value: Value, cost: Int)] = [:]
        var youngCost = 0
    }
    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = Swift.max(capacity, 64 * 1024) }

    func get(_ key: UInt64) -> Value? {
        state.withLock { s in
            if let hit = s.young[key] { return hit.value }
            guard let hit = s.old.removeValue(forKey: key) else { return nil }
            Self.insert(&s, key, hit.value, hit.cost, capacity)
            return hit.value
        }
    }

    func put(_ key: UInt64, _ value: Value, cost: Int) {
        state.withLock { s in Self.insert(&s, key, value, cost, capacity) }
    }

    func removeAll() {
        state.withLock { s in s = State() }
    }

    private static func insert(_ s: inout State, _ key: UInt64, _ value: Value, _ cost: Int, _ capacity: Int) {
        if let previous = s.young.updateValue((value, cost), forKey: key) {
            s.youngCost -= previous.cost
        }
        s.youngCost += cost
        if s.youngCost > capacity / 2 {
            s.old = s.young
            s.young = [:]
            s.youngCost = 0
        }
    }
}
