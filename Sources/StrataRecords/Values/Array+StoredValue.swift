import Foundation
import StrataEngine

/// A varint count, then each element as `[varint length][bytes]`. Index keys are the field
/// bytes.
extension Array: StoredValue where Element: StoredValue {
    @inlinable
    package static func encode(_ value: [Element], into bytes: inout [UInt8]) throws {
        try ArrayFraming.encode(value, into: &bytes, Element.encode)
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> [Element] {
        try ArrayFraming.decode(field, Element.decode)
    }
    @usableFromInline package static func json(_ value: [Element]) -> JSONValue { .array(value.map(Element.json)) }
}

/// The bytes of a sequence of elements, for stored values and for any `Codable` element alike.
@usableFromInline
package enum ArrayFraming {
    @inlinable @inline(__always)
    package static func encode<S: Collection>(_ value: S, into bytes: inout [UInt8], _ element: (S.Element, inout [UInt8]) throws -> Void) throws {
        Varint.append(value.count, to: &bytes)
        for e in value { try Varint.appendElement(into: &bytes) { try element(e, &$0) } }
    }

    @inlinable @inline(__always)
    package static func decode<E>(_ field: UnsafeRawBufferPointer, _ element: (UnsafeRawBufferPointer) throws -> E) throws -> [E] {
        var p = 0
        let n = try Varint.readCount(field, &p, "an array")
        var out: [E] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try element(try Varint.readElement(field, &p))) }
        return out
    }
}
