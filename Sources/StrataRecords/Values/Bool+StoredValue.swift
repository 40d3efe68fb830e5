import Foundation
import StrataEngine

/// One byte, 0 or 1. Index keys order `false` before `true`.
extension Bool: StoredValue {
    @inlinable
    package static func encode(_ value: Bool, into bytes: inout [UInt8]) { bytes.append(value ? 1 : 0) }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Bool {
        guard field.count == 1 else { throw decodingFailure("a Bool of \(field.count) bytes") }
        return field[0] != 0
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: Bool, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { true }
    @usableFromInline package static func json(_ value: Bool) -> JSONValue { .bool(value) }
}
