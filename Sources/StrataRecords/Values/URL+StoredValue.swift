import Foundation
import StrataEngine

/// The UTF-8 of `absoluteString`.
extension URL: StoredValue {
    @inlinable
    package static func encode(_ value: URL, into bytes: inout [UInt8]) { bytes.append(contentsOf: value.absoluteString.utf8) }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> URL {
        guard let url = URL(string: String(decoding: field, as: UTF8.self)) else { throw decodingFailure("an invalid URL") }
        return url
    }
    @usableFromInline package static func json(_ value: URL) -> JSONValue { .string(value.absoluteString) }
}
