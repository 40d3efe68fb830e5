import Foundation
import StrataEngine

/// Fixed-width integers: little-endian, their own width. Index keys are `KeyEncoding`
/// integers, in value order.
protocol StoredInteger: StoredValue, FixedWidthInteger, KeyEncodable {}

extension StoredInteger {
    @inline(__always)
    static func encode(_ value: Self, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    static func decode(_ field: UnsafeRawBufferPointer) throws -> Self {
        guard field.count == MemoryLayout<Self>.size else { throw decodingFailure("an integer of \(field.count) bytes") }
        return Self(littleEndian: field.loadUnaligned(as: Self.self))
    }

    static var hasValueKey: Bool { true }
    @inline(__always)
    static func appendKey(_ value: Self, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var keyOrderIsValueOrder: Bool { true }
    static var placeholder: Self { 0 }
    static func json(_ value: Self) -> JSONValue {
        Self.isSigned ? .integer(Int64(truncatingIfNeeded: value)) : .unsigned(UInt64(truncatingIfNeeded: value))
    }
    @inline(__always)
    static func snapshot(_ value: Self) -> SnapshotValue {
        if let v = Int64(exactly: value) { return .int(v) }
        return .uint(UInt64(truncatingIfNeeded: value))
    }
}

extension Int: StoredInteger {
    static func marker(_ variant: Int) -> Int? { 0x5EED_0000 + variant }
    static var accesses: AttributeAccesses { AttributeAccesses(Int.self) }
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Int.self) else { return nil }
        return ScalarComparison.compare(c, op, field: i, IntField.self)
    }
}

/// An `Int` field, for scalar tests.
enum IntField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Int { try Int.decode(field) }
}
extension Int64: StoredInteger {
    static func marker(_ variant: Int) -> Int64? { Int64(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int64.self) }
}
extension Int32: StoredInteger {
    static func marker(_ variant: Int) -> Int32? { Int32(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int32.self) }
}
extension Int16: StoredInteger {
    static func marker(_ variant: Int) -> Int16? { Int16(0x5EED + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int16.self) }
}
extension Int8: StoredInteger {
    static func marker(_ variant: Int) -> Int8? { Int8(0x5E + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int8.self) }
}
extension UInt: StoredInteger {
    static func marker(_ variant: Int) -> UInt? { UInt(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt.self) }
}
extension UInt64: StoredInteger {
    static func marker(_ variant: Int) -> UInt64? { UInt64(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt64.self) }
}
extension UInt32: StoredInteger {
    static func marker(_ variant: Int) -> UInt32? { UInt32(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt32.self) }
}
extension UInt16: StoredInteger {
    static func marker(_ variant: Int) -> UInt16? { UInt16(0x5EED + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt16.self) }
}
extension UInt8: StoredInteger {
    static func marker(_ variant: Int) -> UInt8? { UInt8(0x5E + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt8.self) }
}
