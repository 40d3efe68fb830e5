import Foundation

/// The UTF-8 of `absoluteString`.
extension URL: StoredValue {
    static func encode(_ value: URL, into bytes: inout [UInt8]) { bytes.append(contentsOf: value.absoluteString.utf8) }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> URL {
        guard let url = URL(string: String(decoding: field, as: UTF8.self)) else { throw decodingFailure("an invalid URL") }
        return url
    }

    static var placeholder: URL { URL(string: "about:blank") ?? URL(fileURLWithPath: "/") }
    static func marker(_ variant: Int) -> URL? { URL(string: "strata-marker:\(variant)") }
    static func json(_ value: URL) -> JSONValue { .string(value.absoluteString) }
    static func snapshot(_ value: URL) -> SnapshotValue { .url(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(URL.self) }
}
