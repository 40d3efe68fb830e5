import Foundation

/// A value of any type, for the key-path probe only: it reads a property on an empty object
/// and throws the value away. Known types get their natural empty value; `Decodable` types are
/// decoded from an all-defaults decoder; enums use their first case when `CaseIterable`.
enum Placeholder {
    static func make<V>(_ type: V.Type) -> V {
        if let known = known(type) { return known }
        if let maker = V.self as? any PlaceholderMaking.Type, let v = maker.makePlaceholder() as? V { return v }
        if let iterable = V.self as? any CaseIterable.Type, let first = firstCase(iterable) as? V { return first }
        if let decodable = V.self as? any Decodable.Type, let v = decoded(decodable) as? V { return v }
        return zeroed(type)
    }

    private static func known<V>(_ type: V.Type) -> V? {
        let v: Any?
        switch type {
        case is String.Type: v = ""
        case is Int.Type: v = 0 as Int
        case is Int64.Type: v = 0 as Int64
        case is Int32.Type: v = 0 as Int32
        case is Int16.Type: v = 0 as Int16
        case is Int8.Type: v = 0 as Int8
        case is UInt.Type: v = 0 as UInt
        case is UInt64.Type: v = 0 as UInt64
        case is UInt32.Type: v = 0 as UInt32
        case is UInt16.Type: v = 0 as UInt16
        case is UInt8.Type: v = 0 as UInt8
        case is Bool.Type: v = false
        case is Double.Type: v = 0.0 as Double
        case is Float.Type: v = 0 as Float
        case is Date.Type: v = Date(timeIntervalSinceReferenceDate: 0)
        case is Data.Type: v = Data()
        case is UUID.Type: v = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case is URL.Type: v = URL(string: "about:blank")
        case is Decimal.Type: v = Decimal(0)
        default: v = nil
        }
        return v as? V
    }

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
            if let v = Placeholder.knownValue(type) { return v }
            return try T(from: DefaultsDecoder())
        }
    }
}

extension Placeholder {
    static func knownValue<V>(_ type: V.Type) -> V? { known(type) }
}

/// Two distinct values of a type, for checking a key path against a property.
enum Marker {
    static func make<V>(_ type: V.Type, _ variant: Int) -> V? {
        let v: Any?
        switch type {
        case is String.Type: v = "\u{1}strata-marker-\(variant)"
        case is Int.Type: v = 0x5EED_0000 + variant
        case is Int64.Type: v = Int64(0x5EED_0000 + variant)
        case is Int32.Type: v = Int32(0x5EED_0000 + variant)
        case is Int16.Type: v = Int16(0x5EED + variant)
        case is Int8.Type: v = Int8(0x5E + variant)
        case is UInt.Type: v = UInt(0x5EED_0000 + variant)
        case is UInt64.Type: v = UInt64(0x5EED_0000 + variant)
        case is UInt32.Type: v = UInt32(0x5EED_0000 + variant)
        case is UInt16.Type: v = UInt16(0x5EED + variant)
        case is UInt8.Type: v = UInt8(0x5E + variant)
        case is Bool.Type: v = variant == 1
        case is Double.Type: v = 1234.5678 + Double(variant)
        case is Float.Type: v = Float(1234.5 + Double(variant))
        case is Date.Type: v = Date(timeIntervalSinceReferenceDate: 123_456.789 + Double(variant))
        case is Data.Type: v = Data([0x5E, 0xED, UInt8(variant)])
        case is UUID.Type: v = UUID(uuid: (0x5E, 0xED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(variant)))
        case is URL.Type: v = URL(string: "strata-marker:\(variant)")
        case is Decimal.Type: v = Decimal(1234 + variant)
        default: v = nil
        }
        if let v { return v as? V }
        if let container = V.self as? any MarkerMaking.Type { return container.makeMarker(variant) as? V }
        if let iterable = V.self as? any CaseIterable.Type { return nthCase(iterable, variant) as? V }
        return nil
    }

    private static func nthCase<C: CaseIterable>(_ type: C.Type, _ n: Int) -> Any? {
        let all = Array(C.allCases)
        return n < all.count ? all[n] : nil
    }
}

protocol MarkerMaking { static func makeMarker(_ variant: Int) -> Any? }
extension Optional: MarkerMaking {
    static func makeMarker(_ variant: Int) -> Any? { Marker.make(Wrapped.self, variant).map { Optional($0) as Any } }
}
extension Array: MarkerMaking {
    static func makeMarker(_ variant: Int) -> Any? { Marker.make(Element.self, variant).map { [$0] as Any } }
}
