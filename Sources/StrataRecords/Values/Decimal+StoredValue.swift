import Foundation
import StrataEngine

/// The exact description ("9.99"), which `Decimal(string:)` reads back.
extension Decimal: StoredValue {
    @inlinable
    package static func encode(_ value: Decimal, into bytes: inout [UInt8]) { bytes.append(contentsOf: value.description.utf8) }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Decimal {
        let text = String(decoding: field, as: UTF8.self)
        if text == "NaN" { return .nan }   // Decimal.nan's description, which Decimal(string:) does not parse
        guard let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw decodingFailure("an invalid Decimal")
        }
        return d
    }
    @usableFromInline package static func json(_ value: Decimal) -> JSONValue {
        let text = value.description
        return Double(text) != nil && !text.contains(where: { $0.isLetter }) ? .number(text) : .string(text)
    }
}
