import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// Values of `Codable` types that are not stored values (`Codable` structs and enums, and
// optionals, arrays, sets and dictionaries of them): a codec object per property, built from
// the element codecs. Structs and enums are JSON with sorted keys. This path is generic at run
// time; the value types of `StoredValue` never take it.

/// Encodes one property's values in record fields and index keys.
class Codec<V>: @unchecked Sendable {
    func encode(_ value: V, into bytes: inout [UInt8]) throws { preconditionFailure("abstract") }
    func decode(_ raw: UnsafeRawBufferPointer) throws -> V { preconditionFailure("abstract") }
    /// The field bytes as one `bytes` key component.
    func appendKey(_ value: V, to key: inout [UInt8]) {
        var bytes: [UInt8] = []
        try? encode(value, into: &bytes)
        Data(bytes).encodeKey(into: &key)
    }
}

enum Codecs {
    /// The codec of `V`, chosen once per property when the schema is discovered.
    static func make<V>(_ type: V.Type) throws -> Codec<V> {
        if let stored = V.self as? any StoredValue.Type, let c = storedCodec(stored) as? Codec<V> { return c }
        if let container = V.self as? any GeneralContainer.Type, let c = try container.makeCodec() as? Codec<V> { return c }
        if let codable = V.self as? any Codable.Type, let c = jsonCodec(codable) as? Codec<V> { return c }
        throw SchemaProblem("the type \(V.self) is not Codable, so it cannot be persisted")
    }

    private static func storedCodec<T: StoredValue>(_ type: T.Type) -> AnyObject { StoredCodec<T>() }
    private static func jsonCodec<T: Codable>(_ type: T.Type) -> AnyObject { JSONCodec<T>() }
}

final class StoredCodec<T: StoredValue>: Codec<T>, @unchecked Sendable {
    override func encode(_ value: T, into bytes: inout [UInt8]) throws { try T.encode(value, into: &bytes) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> T { try T.decode(raw) }
    override func appendKey(_ value: T, to key: inout [UInt8]) { T.appendKey(value, to: &key) }
}

/// JSON with sorted keys. A raw-representable type (an enum with raw values) is indexed by its
/// raw value.
final class JSONCodec<T: Codable>: Codec<T>, @unchecked Sendable {
    override func encode(_ value: T, into bytes: inout [UInt8]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        bytes.append(contentsOf: try encoder.encode(value))
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(raw))
    }
    override func appendKey(_ value: T, to key: inout [UInt8]) {
        if let raw = (value as? any RawRepresentable)?.rawKeyValue { return raw.encodeKey(into: &key) }
        super.appendKey(value, to: &key)
    }
}

extension RawRepresentable {
    var rawKeyValue: (any KeyEncodable)? { rawValue as? any KeyEncodable }
}

/// Containers whose codec is built from their elements' codecs.
protocol GeneralContainer {
    static func makeCodec() throws -> AnyObject
}

extension Optional: GeneralContainer {
    static func makeCodec() throws -> AnyObject { OptionalCodec<Wrapped>(try Codecs.make(Wrapped.self)) }
}
extension Array: GeneralContainer {
    static func makeCodec() throws -> AnyObject { ArrayCodec<Element>(try Codecs.make(Element.self)) }
}
extension Set: GeneralContainer {
    static func makeCodec() throws -> AnyObject { SetCodec<Element>(try Codecs.make(Element.self)) }
}
extension Dictionary: GeneralContainer {
    static func makeCodec() throws -> AnyObject { DictionaryCodec<Key, Value>(try Codecs.make(Key.self), try Codecs.make(Value.self)) }
}

final class OptionalCodec<W>: Codec<W?>, @unchecked Sendable {
    let wrapped: Codec<W>
    init(_ wrapped: Codec<W>) { self.wrapped = wrapped }
    override func encode(_ value: W?, into bytes: inout [UInt8]) throws { try OptionalFraming.encode(value, into: &bytes, wrapped.encode) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> W? { try OptionalFraming.decode(raw, wrapped.decode) }
}

final class ArrayCodec<E>: Codec<[E]>, @unchecked Sendable {
    let element: Codec<E>
    init(_ element: Codec<E>) { self.element = element }
    override func encode(_ value: [E], into bytes: inout [UInt8]) throws { try ArrayFraming.encode(value, into: &bytes, element.encode) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> [E] { try ArrayFraming.decode(raw, element.decode) }
}

final class SetCodec<E: Hashable>: Codec<Set<E>>, @unchecked Sendable {
    let element: Codec<E>
    init(_ element: Codec<E>) { self.element = element }
    override func encode(_ value: Set<E>, into bytes: inout [UInt8]) throws { try ArrayFraming.encode(value, into: &bytes, element.encode) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Set<E> { Set(try ArrayFraming.decode(raw, element.decode)) }
}

final class DictionaryCodec<K: Hashable, V>: Codec<[K: V]>, @unchecked Sendable {
    let key: Codec<K>
    let value: Codec<V>
    init(_ key: Codec<K>, _ value: Codec<V>) { self.key = key; self.value = value }
    override func encode(_ dict: [K: V], into bytes: inout [UInt8]) throws {
        try DictionaryFraming.encode(dict, into: &bytes, key.encode, value.encode)
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> [K: V] { try DictionaryFraming.decode(raw, key.decode, value.decode) }
}
