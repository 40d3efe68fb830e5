import Foundation
import StrataEngine

/// The bytes as they are.
extension Data: StoredValue {
    @inlinable
    package static func encode(_ value: Data, into bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) -> Data { Data(field) }
    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: Data, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @usableFromInline package static func json(_ value: Data) -> JSONValue { .string(value.base64EncodedString()) }
}
