/// A map by identity (of a model class, an entity): a list searched in order while it is short,
/// a dictionary beyond. The lookups made per object (the entity of a class, its table in a
/// container) cost less in a short list than through `ObjectIdentifier`'s hashing (W1), and the
/// few models most processes have make no dictionary, whose first in a fresh process costs a
/// scan of every conformance loaded (W8, Docs/Benchmarks.md).
struct TypeMap<Value> {
    private var list: [(key: ObjectIdentifier, value: Value)] = []
    private var index: [ObjectIdentifier: Value]? = nil
    /// Past this many entries, the map is a dictionary.
    static var listLimit: Int { 16 }

    init() {}

    subscript(key: ObjectIdentifier) -> Value? {
        get {
            if let index { return index[key] }
            for entry in list where entry.key == key { return entry.value }
            return nil
        }
        set {
            if index != nil {
                index?[key] = newValue
                return
            }
            if let i = list.firstIndex(where: { $0.key == key }) {
                if let newValue { list[i].value = newValue } else { list.remove(at: i) }
                return
            }
            guard let newValue else { return }
            list.append((key, newValue))
            if list.count > Self.listLimit {
                var dictionary = [ObjectIdentifier: Value](minimumCapacity: list.count * 2)
                for entry in list { dictionary[entry.key] = entry.value }
                index = dictionary
                list = []
            }
        }
    }

    /// Every value, in no particular order.
    var values: [Value] { index.map { Array($0.values) } ?? list.map(\.value) }
}
