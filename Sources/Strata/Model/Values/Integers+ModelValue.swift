import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelValue where Self: StoredInteger {
    static var placeholder: Self { 0 }
    @inline(__always)
    static func snapshot(_ value: Self) -> SnapshotValue {
        if let v = Int64(exactly: value) { return .int(v) }
        return .uint(UInt64(truncatingIfNeeded: value))
    }
}
extension Int: ModelValue {
    static func marker(_ variant: Int) -> Int? { 0x5EED_0000 + variant }
    static var accesses: AttributeAccesses { AttributeAccesses(Int.self) }
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Int.self) else { return nil }
        return ScalarComparison.compare(c, op, field: i, IntField.self)
    }

    static var hasFieldCheck: Bool { true }
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> FieldCheck? {
        constant.value(as: Int.self).map { FieldCheck(field: i, op: op, int: $0) }
    }
}

/// An `Int` field, for scalar tests.
enum IntField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Int { try Int.decode(field) }
}
extension Int64: ModelValue {
    static func marker(_ variant: Int) -> Int64? { Int64(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int64.self) }
}
extension Int32: ModelValue {
    static func marker(_ variant: Int) -> Int32? { Int32(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int32.self) }
}
extension Int16: ModelValue {
    static func marker(_ variant: Int) -> Int16? { Int16(0x5EED + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int16.self) }
}
extension Int8: ModelValue {
    static func marker(_ variant: Int) -> Int8? { Int8(0x5E + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(Int8.self) }
}
extension UInt: ModelValue {
    static func marker(_ variant: Int) -> UInt? { UInt(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt.self) }
}
extension UInt64: ModelValue {
    static func marker(_ variant: Int) -> UInt64? { UInt64(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt64.self) }
}
extension UInt32: ModelValue {
    static func marker(_ variant: Int) -> UInt32? { UInt32(0x5EED_0000 + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt32.self) }
}
extension UInt16: ModelValue {
    static func marker(_ variant: Int) -> UInt16? { UInt16(0x5EED + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt16.self) }
}
extension UInt8: ModelValue {
    static func marker(_ variant: Int) -> UInt8? { UInt8(0x5E + variant) }
    static var accesses: AttributeAccesses { AttributeAccesses(UInt8.self) }
}
