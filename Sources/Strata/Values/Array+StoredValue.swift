import Foundation

/// A varint count, then each element as `[varint length][bytes]`. Index keys are the field
/// bytes.
extension Array: StoredValue where Element: StoredValue {
    static func encode(_ value: [Element], into bytes: inout [UInt8]) throws {
        try ArrayFraming.encode(value, into: &bytes, Element.encode)
    }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> [Element] {
        try ArrayFraming.decode(field, Element.decode)
    }

    static var placeholder: [Element] { [] }
    static func marker(_ variant: Int) -> [Element]? { Element.marker(variant).map { [$0] } }
    static func json(_ value: [Element]) -> JSONValue { .array(value.map(Element.json)) }
    static func snapshot(_ value: [Element]) throws -> SnapshotValue {
        if let strings = value as? [String] { return .json(SnapshotValue.json(strings)) }
        return try SnapshotValue(value)
    }
    static var accesses: AttributeAccesses { AttributeAccesses([Element].self) }
}

extension Array: SpecializedContainer {
    static var specializedAccess: AttributeAccess? { (Element.self as? any StoredValue.Type)?.accesses.array }
}

/// The bytes of a sequence of elements, for stored values and for any `Codable` element alike.
enum ArrayFraming {
    @inline(__always)
    static func encode<S: Collection>(_ value: S, into bytes: inout [UInt8], _ element: (S.Element, inout [UInt8]) throws -> Void) throws {
        Varint.append(value.count, to: &bytes)
        for e in value { try Varint.appendElement(into: &bytes) { try element(e, &$0) } }
    }

    @inline(__always)
    static func decode<E>(_ field: UnsafeRawBufferPointer, _ element: (UnsafeRawBufferPointer) throws -> E) throws -> [E] {
        var p = 0
        let n = try Varint.readCount(field, &p, "an array")
        var out: [E] = []
        out.reserveCapacity(n)
        for _ in 0..<n { out.append(try element(try Varint.readElement(field, &p))) }
        return out
    }
}
