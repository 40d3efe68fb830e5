import Foundation
import StrataEngine

/// The bytes as they are.
extension Data: StoredValue {
    package static func encode(_ value: Data, into bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
    package static func decode(_ field: UnsafeRawBufferPointer) -> Data { Data(field) }
    package static var hasValueKey: Bool { true }
    package static func appendKey(_ value: Data, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    package static func json(_ value: Data) -> JSONValue { .string(value.base64EncodedString()) }
}
