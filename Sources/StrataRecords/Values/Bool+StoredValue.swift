import Foundation
import StrataEngine

/// One byte, 0 or 1. Index keys order `false` before `true`.
extension Bool: StoredValue {
    package static func encode(_ value: Bool, into bytes: inout [UInt8]) { bytes.append(value ? 1 : 0) }

    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Bool {
        guard field.count == 1 else { throw decodingFailure("a Bool of \(field.count) bytes") }
        return field[0] != 0
    }

    package static var hasValueKey: Bool { true }
    package static func appendKey(_ value: Bool, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    package static var keyOrderIsValueOrder: Bool { true }
    package static func json(_ value: Bool) -> JSONValue { .bool(value) }
}
