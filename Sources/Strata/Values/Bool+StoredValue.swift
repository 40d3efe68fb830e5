import StrataEngine

/// One byte, 0 or 1. Index keys order `false` before `true`.
extension Bool: StoredValue {
    static func encode(_ value: Bool, into bytes: inout [UInt8]) { bytes.append(value ? 1 : 0) }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> Bool {
        guard field.count == 1 else { throw decodingFailure("a Bool of \(field.count) bytes") }
        return field[0] != 0
    }

    static var hasValueKey: Bool { true }
    static func appendKey(_ value: Bool, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var keyOrderIsValueOrder: Bool { true }
    static var placeholder: Bool { false }
    static func marker(_ variant: Int) -> Bool? { variant == 1 }
    static func json(_ value: Bool) -> JSONValue { .bool(value) }
    static func snapshot(_ value: Bool) -> SnapshotValue { .bool(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Bool.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Bool.self), op == .equal || op == .notEqual else { return nil }
        let wanted = op == .equal
        return { view in try (Bool.decode(try view.field(i)) == c) == wanted }
    }
}
