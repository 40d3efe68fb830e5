import Foundation
import StrataEngine

/// The IEEE 754 bits, little-endian: exact to the last bit, NaN payloads included.
extension Double: StoredValue {
    package static func encode(_ value: Double, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Double { try FieldBytes.double(field, "a Double") }

    package static var hasValueKey: Bool { true }
    package static func appendKey(_ value: Double, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    package static var keyOrderIsValueOrder: Bool { true }
    package static func json(_ value: Double) -> JSONValue { .double(value) }
}
