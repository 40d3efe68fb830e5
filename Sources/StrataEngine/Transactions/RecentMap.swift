/// A dictionary of objects that keeps the entries last looked up at hand.
///
/// A write transaction asks for the same few trees, and the same indexes' held-back entries,
/// row after row (a put: the rows tree, then each index in turn). A dictionary lookup hashes
/// its key each time, which was a tenth of a put's own instructions; comparing with four
/// recent keys costs a few. A key found missing is remembered too (an index whose tree the
/// transaction has not changed yet is looked up once per put). Any change forgets the recent
/// entries, so a lookup never answers with a value the dictionary no longer holds, or misses
/// one it holds.
struct RecentMap<Key: Hashable, Value: AnyObject> {
    private(set) var all: [Key: Value] = [:]
    private var s0: (key: Key, value: Value?)?
    private var s1: (key: Key, value: Value?)?
    private var s2: (key: Key, value: Value?)?
    private var s3: (key: Key, value: Value?)?
    private var next = 0
    /// Room made at the first entry (0: the dictionary grows from empty).
    private let firstCapacity: Int

    init(firstCapacity: Int = 0) { self.firstCapacity = firstCapacity }

    /// The value for `key`, remembered as recent.
    @inline(__always)
    mutating func lookup(_ key: Key) -> Value? {
        if let s = s0, s.key == key { return s.value }
        if let s = s1, s.key == key { return s.value }
        if let s = s2, s.key == key { return s.value }
        if let s = s3, s.key == key { return s.value }
        let value = all[key]
        switch next & 3 {
        case 0: s0 = (key, value)
        case 1: s1 = (key, value)
        case 2: s2 = (key, value)
        default: s3 = (key, value)
        }
        next &+= 1
        return value
    }

    /// Sets (or, with nil, removes) the value for `key`.
    mutating func set(_ key: Key, _ value: Value?) {
        // Room at the first entry (a transaction's trees: a one-object save changes about
        // eight, which a dictionary grown from empty reallocated and rehashed three times).
        if all.capacity == 0, value != nil, firstCapacity > 0 { all.reserveCapacity(firstCapacity) }
        all[key] = value
        forgetRecent()
    }

    mutating func removeAll() {
        all = [:]
        forgetRecent()
    }

    var isEmpty: Bool { all.isEmpty }
    var keys: Dictionary<Key, Value>.Keys { all.keys }
    var values: Dictionary<Key, Value>.Values { all.values }

    private mutating func forgetRecent() {
        s0 = nil; s1 = nil; s2 = nil; s3 = nil
    }
}
