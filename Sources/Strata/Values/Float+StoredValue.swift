import StrataEngine

/// The IEEE 754 bits, little-endian. Index keys are those of the same `Double`.
extension Float: StoredValue {
    static func encode(_ value: Float, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> Float {
        guard field.count == 4 else { throw decodingFailure("a Float of \(field.count) bytes") }
        return Float(bitPattern: UInt32(littleEndian: field.loadUnaligned(as: UInt32.self)))
    }

    static var hasValueKey: Bool { true }
    static func appendKey(_ value: Float, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var keyOrderIsValueOrder: Bool { true }
    static var placeholder: Float { 0 }
    static func marker(_ variant: Int) -> Float? { Float(1234.5 + Double(variant)) }
    static func json(_ value: Float) -> JSONValue { .double(Double(value)) }
    static func snapshot(_ value: Float) -> SnapshotValue { .double(Double(value)) }
    static var accesses: AttributeAccesses { AttributeAccesses(Float.self) }
}
