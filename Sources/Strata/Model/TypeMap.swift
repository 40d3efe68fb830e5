/// A map by identity (of a model class, an entity): a list searched in order while it is short,
/// a dictionary beyond. The lookups made per object (the entity of a class, its table in a
/// container) cost less in a short list than through `ObjectIdentifier`'s hashing (W1), and the
/// few models most processes have make no dictionary, whose first in a fresh process costs a
/// scan of every conformance loaded (W8, Docs/Benchmarks.md).
struct TypeMap<Value> {
    // The keys and the values in two lists, not one list of pairs: the first list of a new
    // element type in a process costs the runtime its metadata (W8), and `[ObjectIdentifier]`
    // is one metadata for every map, where `[(key: ObjectIdentifier, value: Value)]` was a
    // tuple and a list of it for each.
    private var keys: [ObjectIdentifier] = []
    private var list: [Value] = []
    private var index: [ObjectIdentifier: Value]? = nil
    /// Past this many entries, the map is a dictionary.
    static var listLimit: Int { 16 }

    init() {}

    subscript(key: ObjectIdentifier) -> Value? {
        get {
            if let index { return index[key] }
            for i in keys.indices where keys[i] == key { return list[i] }
            return nil
        }
        set {
            if index != nil {
                index?[key] = newValue
                return
            }
            if let i = keys.firstIndex(of: key) {
                if let newValue {
                    list[i] = newValue
                } else {
                    keys.remove(at: i)
                    list.remove(at: i)
                }
                return
            }
            guard let newValue else { return }
            keys.append(key)
            list.append(newValue)
            if keys.count > Self.listLimit {
                var dictionary = [ObjectIdentifier: Value](minimumCapacity: keys.count * 2)
                for i in keys.indices { dictionary[keys[i]] = list[i] }
                index = dictionary
                keys = []
                list = []
            }
        }
    }

    /// Every value, in no particular order.
    var values: [Value] { index.map { Array($0.values) } ?? list }
}
