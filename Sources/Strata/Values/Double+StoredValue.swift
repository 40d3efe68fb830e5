import StrataEngine

/// The IEEE 754 bits, little-endian: exact to the last bit, NaN payloads included.
extension Double: StoredValue {
    static func encode(_ value: Double, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> Double { try ScalarComparison.double(field, "a Double") }

    static var hasValueKey: Bool { true }
    static func appendKey(_ value: Double, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var keyOrderIsValueOrder: Bool { true }
    static var placeholder: Double { 0 }
    static func marker(_ variant: Int) -> Double? { 1234.5678 + Double(variant) }
    static func json(_ value: Double) -> JSONValue { .double(value) }
    static func snapshot(_ value: Double) -> SnapshotValue { .double(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Double.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Double.self) else { return nil }
        return ScalarComparison.compare(c, op, field: i, DoubleField.self)
    }
}

/// A `Double` field, for scalar tests.
enum DoubleField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Double { try ScalarComparison.double(field, "a Double") }
}
