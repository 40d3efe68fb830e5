import Foundation
import StrataEngine

/// Fixed-width integers: little-endian, their own width. Index keys are `KeyEncoding`
/// integers, in value order.
@usableFromInline
package protocol StoredInteger: StoredValue, FixedWidthInteger, KeyEncodable {}

extension StoredInteger {
    @inlinable @inline(__always)
    package static func encode(_ value: Self, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inlinable @inline(__always)
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Self {
        guard field.count == MemoryLayout<Self>.size else { throw decodingFailure("an integer of \(field.count) bytes") }
        return Self(littleEndian: field.loadUnaligned(as: Self.self))
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable @inline(__always)
    package static func appendKey(_ value: Self, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { true }
    @usableFromInline package static func json(_ value: Self) -> JSONValue {
        Self.isSigned ? .integer(Int64(truncatingIfNeeded: value)) : .unsigned(UInt64(truncatingIfNeeded: value))
    }
}
extension Int: StoredInteger {}
extension Int8: StoredInteger {}
extension Int16: StoredInteger {}
extension Int32: StoredInteger {}
extension Int64: StoredInteger {}
extension UInt: StoredInteger {}
extension UInt8: StoredInteger {}
extension UInt16: StoredInteger {}
extension UInt32: StoredInteger {}
extension UInt64: StoredInteger {}
