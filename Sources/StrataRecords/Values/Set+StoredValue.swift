import Foundation
import StrataEngine

/// As an array of its elements (in the set's order).
extension Set: StoredValue where Element: StoredValue {
    @inlinable
    package static func encode(_ value: Set<Element>, into bytes: inout [UInt8]) throws {
        try ArrayFraming.encode(value, into: &bytes, Element.encode)
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Set<Element> {
        Set(try ArrayFraming.decode(field, Element.decode))
    }
    @usableFromInline package static func json(_ value: Set<Element>) -> JSONValue { .array(value.map(Element.json)) }
}
