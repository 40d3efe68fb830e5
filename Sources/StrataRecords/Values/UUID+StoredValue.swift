import Foundation
import StrataEngine

/// The 16 bytes of `uuid`.
extension UUID: StoredValue {
    package static func encode(_ value: UUID, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) }
    }

    package static func decode(_ field: UnsafeRawBufferPointer) throws -> UUID {
        guard field.count == 16 else { throw decodingFailure("a UUID of \(field.count) bytes") }
        return UUID(uuid: field.loadUnaligned(as: uuid_t.self))
    }

    package static var hasValueKey: Bool { true }
    package static func appendKey(_ value: UUID, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    package static func json(_ value: UUID) -> JSONValue { .string(value.uuidString) }
}
