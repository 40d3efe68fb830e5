import Foundation
import StrataEngine

/// `0x00` for nil, `0x01` then the value. Index keys: nil sorts before every value when the
/// wrapped type has value keys; otherwise the field bytes.
extension Optional: StoredValue where Wrapped: StoredValue {
    @inlinable
    package static func encode(_ value: Wrapped?, into bytes: inout [UInt8]) throws {
        try OptionalFraming.encode(value, into: &bytes, Wrapped.encode)
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Wrapped? {
        try OptionalFraming.decode(field, Wrapped.decode)
    }

    @inlinable
    package static var hasValueKey: Bool { Wrapped.hasValueKey }
    @inlinable
    package static func appendKey(_ value: Wrapped?, to key: inout [UInt8]) {
        guard Wrapped.hasValueKey else {
            var bytes: [UInt8] = []
            try? encode(value, into: &bytes)
            return Data(bytes).encodeKey(into: &key)
        }
        guard let value else { return key.append(KeyTag.null) }
        Wrapped.appendKey(value, to: &key)
    }
    @usableFromInline package static func json(_ value: Wrapped?) -> JSONValue { value.map(Wrapped.json) ?? .null }
}

/// The bytes of an optional, for stored values and for any `Codable` wrapped type alike.
@usableFromInline
package enum OptionalFraming {
    @inlinable @inline(__always)
    package static func encode<W>(_ value: W?, into bytes: inout [UInt8], _ wrapped: (W, inout [UInt8]) throws -> Void) throws {
        guard let value else { return bytes.append(0) }
        bytes.append(1)
        try wrapped(value, &bytes)
    }

    @inlinable @inline(__always)
    package static func decode<W>(_ field: UnsafeRawBufferPointer, _ wrapped: (UnsafeRawBufferPointer) throws -> W) throws -> W? {
        guard let tag = field.first else { throw decodingFailure("an empty optional") }
        if tag == 0 { return nil }
        return try wrapped(UnsafeRawBufferPointer(rebasing: field[1...]))
    }
}
