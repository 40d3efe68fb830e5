import Foundation
import StrataEngine

/// The 16 bytes of `uuid`.
extension UUID: StoredValue {
    @inlinable
    package static func encode(_ value: UUID, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> UUID {
        guard field.count == 16 else { throw decodingFailure("a UUID of \(field.count) bytes") }
        // A `UUID` is its 16 bytes (swift-foundation's stores only `uuid`): loaded as one, not
        // made by `UUID(uuid:)`, a call into Foundation per value (W7; `UUIDLayoutTests`
        // holds the two equal).
        if MemoryLayout<UUID>.size == MemoryLayout<uuid_t>.size { return field.loadUnaligned(as: UUID.self) }
        return UUID(uuid: field.loadUnaligned(as: uuid_t.self))
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: UUID, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @usableFromInline package static func json(_ value: UUID) -> JSONValue { .string(value.uuidString) }
}
