import Foundation
@_spi(StorageBackend) import StrataRecords

/// A value of any type, for the key-path probe only: it reads a property on an empty object
/// and throws the value away. Stored values give their own (`StoredValue.placeholder`);
/// containers are empty; enums use their first case when `CaseIterable`; other `Decodable`
/// types are decoded from an all-defaults decoder.
enum Placeholder {
    static func make<V>(_ type: V.Type) -> V {
        if let stored = V.self as? any ModelValue.Type, let v = storedPlaceholder(stored) as? V { return v }
        if let maker = V.self as? any PlaceholderMaking.Type, let v = maker.makePlaceholder() as? V { return v }
        if let iterable = V.self as? any CaseIterable.Type, let first = firstCase(iterable) as? V { return first }
        if let decodable = V.self as? any Decodable.Type, let v = decoded(decodable) as? V { return v }
        return zeroed(type)
    }

    private static func storedPlaceholder<T: ModelValue>(_ type: T.Type) -> Any { T.placeholder }
    private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }
    private static func decoded<D: Decodable>(_ type: D.Type) -> Any? { try? D(from: DefaultsDecoder()) }

    /// Last resort: a value whose bytes are all zero, kept forever so it is never destroyed.
    private static func zeroed<V>(_ type: V.Type) -> V {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(MemoryLayout<V>.size, 1), alignment: MemoryLayout<V>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: Swift.max(MemoryLayout<V>.size, 1))
        return raw.assumingMemoryBound(to: V.self).pointee
    }
}

protocol PlaceholderMaking { static func makePlaceholder() -> Any }
extension Optional: PlaceholderMaking { static func makePlaceholder() -> Any { Optional<Wrapped>.none as Any } }
extension Array: PlaceholderMaking { static func makePlaceholder() -> Any { [Element]() } }
extension Set: PlaceholderMaking { static func makePlaceholder() -> Any { Set<Element>() } }
extension Dictionary: PlaceholderMaking { static func makePlaceholder() -> Any { [Key: Value]() } }

/// A decoder that answers every question with an empty or zero value.
struct DefaultsDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>())
    }
    func unkeyedContainer() -> any UnkeyedDecodingContainer { Unkeyed() }
    func singleValueContainer() -> any SingleValueDecodingContainer { Single() }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] = []
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try Single().decode(type) }
        func nestedContainer<N: CodingKey>(keyedBy type: N.Type, forKey key: Key) -> KeyedDecodingContainer<N> { KeyedDecodingContainer(Keyed<N>()) }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer { Unkeyed() }
        func superDecoder() -> any Decoder { DefaultsDecoder() }
        func superDecoder(forKey key: Key) -> any Decoder { DefaultsDecoder() }
    }

    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] = []
        var count: Int? = 0
        var isAtEnd: Bool { true }
        var currentIndex = 0
        mutating func decodeNil() -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try Single().decode(type) }
        mutating func nestedContainer<N: CodingKey>(keyedBy type: N.Type) -> KeyedDecodingContainer<N> { KeyedDecodingContainer(Keyed<N>()) }
        mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer { Unkeyed() }
        mutating func superDecoder() -> any Decoder { DefaultsDecoder() }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] = []
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            if let stored = T.self as? any ModelValue.Type, let v = Placeholder.make(stored) as? T { return v }
            return try T(from: DefaultsDecoder())
        }
    }
}

/// Two distinct values of a type, for checking a key path against a property.
enum Marker {
    static func make<V>(_ type: V.Type, _ variant: Int) -> V? {
        if let stored = V.self as? any ModelValue.Type { return storedMarker(stored, variant) as? V }
        if let container = V.self as? any MarkerMaking.Type { return container.makeMarker(variant) as? V }
        if let iterable = V.self as? any CaseIterable.Type { return nthCase(iterable, variant) as? V }
        return nil
    }

    private static func storedMarker<T: ModelValue>(_ type: T.Type, _ variant: Int) -> Any? { T.marker(variant) }

    /// How many markers `make` gives for the type: every case of a `CaseIterable` enum (up to
    /// 256), so that a computed property changing only a later case is not taken for the
    /// property; the stored types' own counts; else 2.
    static func count<V>(_ type: V.Type) -> Int {
        if let stored = V.self as? any ModelValue.Type { return storedCount(stored) }
        if let container = V.self as? any MarkerMaking.Type { return container.markerCount }
        if let iterable = V.self as? any CaseIterable.Type { return caseCount(iterable) }
        return 2
    }

    private static func storedCount<T: ModelValue>(_ type: T.Type) -> Int { T.markerCount }

    private static func caseCount<C: CaseIterable>(_ type: C.Type) -> Int { min(256, C.allCases.count) }

    private static func nthCase<C: CaseIterable>(_ type: C.Type, _ n: Int) -> Any? {
        let all = Array(C.allCases)
        return n < all.count ? all[n] : nil
    }
}

protocol MarkerMaking {
    static func makeMarker(_ variant: Int) -> Any?
    static var markerCount: Int { get }
}
extension Optional: MarkerMaking {
    static func makeMarker(_ variant: Int) -> Any? { Marker.make(Wrapped.self, variant).map { Optional($0) as Any } }
    static var markerCount: Int { Marker.count(Wrapped.self) }
}
extension Array: MarkerMaking {
    static func makeMarker(_ variant: Int) -> Any? { Marker.make(Element.self, variant).map { [$0] as Any } }
    static var markerCount: Int { Marker.count(Element.self) }
}
