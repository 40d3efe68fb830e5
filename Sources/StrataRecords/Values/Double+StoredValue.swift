import Foundation
import StrataEngine

/// The IEEE 754 bits, little-endian: exact to the last bit, NaN payloads included.
extension Double: StoredValue {
    @inlinable
    package static func encode(_ value: Double, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Double { try FieldBytes.double(field, "a Double") }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: Double, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { true }
    @usableFromInline package static func json(_ value: Double) -> JSONValue { .double(value) }
}
