import Foundation
import StrataEngine

/// The bytes as they are.
extension Data: StoredValue {
    static func encode(_ value: Data, into bytes: inout [UInt8]) { bytes.append(contentsOf: value) }
    static func decode(_ field: UnsafeRawBufferPointer) -> Data { Data(field) }
    static var hasValueKey: Bool { true }
    static func appendKey(_ value: Data, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var placeholder: Data { Data() }
    static func marker(_ variant: Int) -> Data? { Data([0x5E, 0xED, UInt8(variant)]) }
    static func json(_ value: Data) -> JSONValue { .string(value.base64EncodedString()) }
    static func snapshot(_ value: Data) -> SnapshotValue { .data(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Data.self) }
}
