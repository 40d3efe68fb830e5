import Foundation
import StrataEngine

/// A varint count, then each key and value as `[varint length][bytes]`.
extension Dictionary: StoredValue where Key: StoredValue, Value: StoredValue {
    @inlinable
    package static func encode(_ dict: [Key: Value], into bytes: inout [UInt8]) throws {
        try DictionaryFraming.encode(dict, into: &bytes, Key.encode, Value.encode)
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> [Key: Value] {
        try DictionaryFraming.decode(field, Key.decode, Value.decode)
    }
    @usableFromInline package static func json(_ dict: [Key: Value]) -> JSONValue {
        .object(dict.map { k, v -> (String, JSONValue) in
            let key = Key.json(k)
            if case .string(let s) = key { return (s, Value.json(v)) }
            return (key.serialized, Value.json(v))
        }.sorted { $0.0 < $1.0 })
    }
}

/// The bytes of a dictionary, for stored values and for any `Codable` keys and values alike.
@usableFromInline
package enum DictionaryFraming {
    @inlinable
    package static func encode<K, V>(_ dict: [K: V], into bytes: inout [UInt8], _ key: (K, inout [UInt8]) throws -> Void,
                             _ value: (V, inout [UInt8]) throws -> Void) throws {
        Varint.append(dict.count, to: &bytes)
        for (k, v) in dict {
            try Varint.appendElement(into: &bytes) { try key(k, &$0) }
            try Varint.appendElement(into: &bytes) { try value(v, &$0) }
        }
    }

    @inlinable
    package static func decode<K, V>(_ field: UnsafeRawBufferPointer, _ key: (UnsafeRawBufferPointer) throws -> K,
                             _ value: (UnsafeRawBufferPointer) throws -> V) throws -> [K: V] {
        var p = 0
        let n = try Varint.readCount(field, &p, "a dictionary")
        var out: [K: V] = [:]
        out.reserveCapacity(n)
        for _ in 0..<n {
            let k = try key(try Varint.readElement(field, &p))
            out[k] = try value(try Varint.readElement(field, &p))
        }
        return out
    }
}
