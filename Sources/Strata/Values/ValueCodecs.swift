import Foundation
import StrataEngine

/// Encodes one property's values in records: compact binary for the value types API.md lists,
/// JSON for any other `Codable` type. Docs/FileFormat.md ("Object records") lists each encoding.
class Codec<V>: @unchecked Sendable {
    func encode(_ value: V, into bytes: inout [UInt8]) throws { preconditionFailure("abstract") }
    func decode(_ raw: UnsafeRawBufferPointer) throws -> V { preconditionFailure("abstract") }
}

/// A record that does not decode as the schema says: a damaged store or a schema mismatch.
struct ValueDecodingFailure: Error {
    let message: String
}

@inline(__always)
func decodingFailure(_ what: String) -> ValueDecodingFailure { ValueDecodingFailure(message: what) }

enum Codecs {
    /// The codec for `V`, chosen once per property when the schema is discovered.
    static func make<V>(_ type: V.Type) throws -> Codec<V> {
        if let c = primitive(type) { return c }
        if let marker = V.self as? any ContainerCodecMaker.Type, let c = try marker.makeContainerCodec() as? Codec<V> {
            return c
        }
        if let codable = V.self as? any Codable.Type, let c = jsonCodec(codable) as? Codec<V> {
            return c
        }
        throw SchemaProblem("the type \(V.self) is not Codable, so it cannot be persisted")
    }

    private static func jsonCodec<T: Codable>(_ type: T.Type) -> AnyObject { JSONCodec<T>() }

    private static func primitive<V>(_ type: V.Type) -> Codec<V>? {
        let c: AnyObject?
        switch type {
        case is String.Type: c = StringCodec()
        case is Int.Type: c = IntegerCodec<Int>()
        case is Int64.Type: c = IntegerCodec<Int64>()
        case is Int32.Type: c = IntegerCodec<Int32>()
        case is Int16.Type: c = IntegerCodec<Int16>()
        case is Int8.Type: c = IntegerCodec<Int8>()
        case is UInt.Type: c = IntegerCodec<UInt>()
        case is UInt64.Type: c = IntegerCodec<UInt64>()
        case is UInt32.Type: c = IntegerCodec<UInt32>()
        case is UInt16.Type: c = IntegerCodec<UInt16>()
        case is UInt8.Type: c = IntegerCodec<UInt8>()
        case is Bool.Type: c = BoolCodec()
        case is Double.Type: c = DoubleCodec()
        case is Float.Type: c = FloatCodec()
        case is Date.Type: c = DateCodec()
        case is Data.Type: c = DataCodec()
        case is UUID.Type: c = UUIDCodec()
        case is URL.Type: c = URLCodec()
        case is Decimal.Type: c = DecimalCodec()
        default: c = nil
        }
        return c as? Codec<V>
    }
}

final class StringCodec: Codec<String>, @unchecked Sendable {
    override func encode(_ value: String, into bytes: inout [UInt8]) {
        if let done = value.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) { return done }
        bytes.append(contentsOf: value.utf8)
    }
    override func decode(_ raw: UnsafeRawBufferPointer) -> String { String(decoding: raw, as: UTF8.self) }
}

final class IntegerCodec<I: FixedWidthInteger>: Codec<I>, @unchecked Sendable {
    override func encode(_ value: I, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> I {
        guard raw.count == MemoryLayout<I>.size else { throw decodingFailure("an integer of \(raw.count) bytes") }
        return I(littleEndian: raw.loadUnaligned(as: I.self))
    }
}

final class BoolCodec: Codec<Bool>, @unchecked Sendable {
    override func encode(_ value: Bool, into bytes: inout [UInt8]) { bytes.append(value ? 1 : 0) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Bool {
        guard raw.count == 1 else { throw decodingFailure("a Bool of \(raw.count) bytes") }
        return raw[0] != 0
    }
}

final class DoubleCodec: Codec<Double>, @unchecked Sendable {
    override func encode(_ value: Double, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Double {
        guard raw.count == 8 else { throw decodingFailure("a Double of \(raw.count) bytes") }
        return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)))
    }
}

final class FloatCodec: Codec<Float>, @unchecked Sendable {
    override func encode(_ value: Float, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Float {
        guard raw.count == 4 else { throw decodingFailure("a Float of \(raw.count) bytes") }
        return Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(as: UInt32.self)))
    }
}

/// A date as its `timeIntervalSinceReferenceDate` bits: exact to the last bit.
final class DateCodec: Codec<Date>, @unchecked Sendable {
    override func encode(_ value: Date, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Date {
        guard raw.count == 8 else { throw decodingFailure("a Date of \(raw.count) bytes") }
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))))
    }
}

final class DataCodec: Codec<Data>, @unchecked Sendable {
    override func encode(_ value: Data, into bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
    override func decode(_ raw: UnsafeRawBufferPointer) -> Data { Data(raw) }
}

final class UUIDCodec: Codec<UUID>, @unchecked Sendable {
    override func encode(_ value: UUID, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> UUID {
        guard raw.count == 16 else { throw decodingFailure("a UUID of \(raw.count) bytes") }
        return UUID(uuid: raw.loadUnaligned(as: uuid_t.self))
    }
}

final class URLCodec: Codec<URL>, @unchecked Sendable {
    override func encode(_ value: URL, into bytes: inout [UInt8]) { bytes.append(contentsOf: value.absoluteString.utf8) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> URL {
        guard let url = URL(string: String(decoding: raw, as: UTF8.self)) else { throw decodingFailure("an invalid URL") }
        return url
    }
}

/// A decimal as its exact description ("9.99").
final class DecimalCodec: Codec<Decimal>, @unchecked Sendable {
    override func encode(_ value: Decimal, into bytes: inout [UInt8]) { bytes.append(contentsOf: value.description.utf8) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Decimal {
        let text = String(decoding: raw, as: UTF8.self)
        if text == "NaN" { return .nan }   // Decimal.nan's description, which Decimal(string:) does not parse
        guard let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw decodingFailure("an invalid Decimal")
        }
        return d
    }
}

final class JSONCodec<T: Codable>: Codec<T>, @unchecked Sendable {
    override func encode(_ value: T, into bytes: inout [UInt8]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        bytes.append(contentsOf: try encoder.encode(value))
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(raw))
    }
}

// MARK: Containers

/// Types whose codec is built from their element types' codecs.
protocol ContainerCodecMaker {
    static func makeContainerCodec() throws -> AnyObject
}

extension Optional: ContainerCodecMaker {
    static func makeContainerCodec() throws -> AnyObject { OptionalCodec<Wrapped>(try Codecs.make(Wrapped.self)) }
}
extension Array: ContainerCodecMaker {
    static func makeContainerCodec() throws -> AnyObject { ArrayCodec<Element>(try Codecs.make(Element.self)) }
}
extension Set: ContainerCodecMaker {
    static func makeContainerCodec() throws -> AnyObject { SetCodec<Element>(try Codecs.make(Element.self)) }
}
extension Dictionary: ContainerCodecMaker {
    static func makeContainerCodec() throws -> AnyObject {
        DictionaryCodec<Key, Value>(try Codecs.make(Key.self), try Codecs.make(Value.self))
    }
}

/// `0x00` for nil, `0x01` then the value.
final class OptionalCodec<W>: Codec<W?>, @unchecked Sendable {
    let wrapped: Codec<W>
    init(_ wrapped: Codec<W>) { self.wrapped = wrapped }
    override func encode(_ value: W?, into bytes: inout [UInt8]) throws {
        guard let value else { bytes.append(0); return }
        bytes.append(1)
        try wrapped.encode(value, into: &bytes)
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> W? {
        guard let tag = raw.first else { throw decodingFailure("an empty optional") }
        if tag == 0 { return nil }
        return try wrapped.decode(UnsafeRawBufferPointer(rebasing: raw[1...]))
    }
}

/// Elements (and keys and values) as `[varint length][bytes]`, after a varint count.
enum Varint {
    static func append(_ value: Int, to bytes: inout [UInt8]) {
        var v = UInt64(value)
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    static func read(_ raw: UnsafeRawBufferPointer, _ position: inout Int) throws -> Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < raw.count {
            let byte = raw[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                guard result <= UInt64(Int.max) else { break }
                return Int(result)
            }
            shift += 7
            if shift > 63 { break }
        }
        throw decodingFailure("a malformed length")
    }

    /// Encodes an element in place: reserves the length after the fact (elements are short).
    static func appendElement(into bytes: inout [UInt8], _ body: (inout [UInt8]) throws -> Void) rethrows {
        var element: [UInt8] = []
        try body(&element)
        append(element.count, to: &bytes)
        bytes.append(contentsOf: element)
    }

    static func readElement(_ raw: UnsafeRawBufferPointer, _ position: inout Int) throws -> UnsafeRawBufferPointer {
        let length = try read(raw, &position)
        guard length <= raw.count - position else { throw decodingFailure("an element past the end") }
        defer { position += length }
        return UnsafeRawBufferPointer(rebasing: raw[position..<(position + length)])
    }
}

final class ArrayCodec<E>: Codec<[E]>, @unchecked Sendable {
    let element: Codec<E>
    init(_ element: Codec<E>) { self.element = element }
    override func encode(_ value: [E], into bytes: inout [UInt8]) throws {
        Varint.append(value.count, to: &bytes)
        for e in value { try Varint.appendElement(into: &bytes) { try element.encode(e, into: &$0) } }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> [E] {
        var p = 0
        let n = try Varint.read(raw, &p)
        guard n <= raw.count else { throw decodingFailure("an array count past the end") }
        var out: [E] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try element.decode(try Varint.readElement(raw, &p))) }
        return out
    }
}

final class SetCodec<E: Hashable>: Codec<Set<E>>, @unchecked Sendable {
    let array: ArrayCodec<E>
    init(_ element: Codec<E>) { array = ArrayCodec(element) }
    override func encode(_ value: Set<E>, into bytes: inout [UInt8]) throws { try array.encode(Array(value), into: &bytes) }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> Set<E> { Set(try array.decode(raw)) }
}

final class DictionaryCodec<K: Hashable, V>: Codec<[K: V]>, @unchecked Sendable {
    let key: Codec<K>
    let value: Codec<V>
    init(_ key: Codec<K>, _ value: Codec<V>) { self.key = key; self.value = value }
    override func encode(_ dict: [K: V], into bytes: inout [UInt8]) throws {
        Varint.append(dict.count, to: &bytes)
        for (k, v) in dict {
            try Varint.appendElement(into: &bytes) { try key.encode(k, into: &$0) }
            try Varint.appendElement(into: &bytes) { try value.encode(v, into: &$0) }
        }
    }
    override func decode(_ raw: UnsafeRawBufferPointer) throws -> [K: V] {
        var p = 0
        let n = try Varint.read(raw, &p)
        guard n <= raw.count else { throw decodingFailure("a dictionary count past the end") }
        var out: [K: V] = [:]
        out.reserveCapacity(n)
        for _ in 0..<n {
            let k = try key.decode(try Varint.readElement(raw, &p))
            out[k] = try value.decode(try Varint.readElement(raw, &p))
        }
        return out
    }
}

// MARK: Index keys

/// Turns a property's value into an index key (see `KeyEncoding`), and tells whether the key
/// order is the value order (so that ranges and sorts may use the index).
struct IndexKeyMaker<V> {
    let make: (V) -> [UInt8]
    /// True when `a < b` ⇔ key(a) < key(b) for every pair of values (numbers, dates, Bool).
    let preservesOrder: Bool

    static func forType(_ type: V.Type, codec: Codec<V>) -> IndexKeyMaker<V> {
        if V.self == String.self {
            return IndexKeyMaker(make: { v in KeyEncoding.encode(normalizedKey(v as? String ?? "")) }, preservesOrder: false)
        }
        if V.self == String?.self {
            return IndexKeyMaker(make: { v in
                let s = v as? String? ?? nil
                return KeyEncoding.encode(s.map(normalizedKey))
            }, preservesOrder: false)
        }
        if let encodable = V.self as? any KeyEncodable.Type {
            let ordered = orderedTypes.contains { ObjectIdentifier($0) == ObjectIdentifier(encodable) }
            return IndexKeyMaker(make: { v in
                guard let e = v as? any KeyEncodable else { return [] }
                var key: [UInt8] = []
                e.encodeKey(into: &key)
                return key
            }, preservesOrder: ordered)
        }
        if let raw = V.self as? any RawRepresentable.Type, raw.rawValueType is any KeyEncodable.Type {
            return IndexKeyMaker(make: { v in
                guard let r = (v as? any RawRepresentable)?.rawKeyValue else { return [] }
                var key: [UInt8] = []
                r.encodeKey(into: &key)
                return key
            }, preservesOrder: false)
        }
        return IndexKeyMaker(make: { v in
            var bytes: [UInt8] = []
            try? codec.encode(v, into: &bytes)
            return KeyEncoding.encode(Data(bytes))
        }, preservesOrder: false)
    }

    private static var orderedTypes: [Any.Type] {
        [Int.self, Int64.self, Int32.self, Int16.self, Int8.self, UInt.self, UInt64.self, UInt32.self, UInt16.self,
         UInt8.self, Double.self, Float.self, Date.self, Bool.self]
    }
}

/// Strings are indexed in their canonical composed form, so that index equality is Swift's
/// `==` (canonical equivalence).
func normalizedKey(_ s: String) -> String {
    var copy = s
    let ascii = copy.withUTF8 { $0.allSatisfy { $0 < 0x80 } }
    return ascii ? s : s.precomposedStringWithCanonicalMapping
}

extension RawRepresentable {
    static var rawValueType: Any.Type { RawValue.self }
    var rawKeyValue: (any KeyEncodable)? { rawValue as? any KeyEncodable }
}
