import Foundation
import StrataEngine

/// The IEEE 754 bits, little-endian. Index keys are those of the same `Double`.
extension Float: StoredValue {
    @inlinable
    package static func encode(_ value: Float, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Float {
        guard field.count == 4 else { throw decodingFailure("a Float of \(field.count) bytes") }
        return Float(bitPattern: UInt32(littleEndian: field.loadUnaligned(as: UInt32.self)))
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: Float, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { true }
    @usableFromInline package static func json(_ value: Float) -> JSONValue { .double(Double(value)) }
}
