import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Double: ModelValue {
    static var placeholder: Double { 0 }
    static func marker(_ variant: Int) -> Double? { 1234.5678 + Double(variant) }
    static func snapshot(_ value: Double) -> SnapshotValue { .double(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Double.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Double.self) else { return nil }
        return ScalarComparison.compare(c, op, field: i, DoubleField.self)
    }

    static var hasFieldCheck: Bool { true }
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> FieldCheck? {
        constant.value(as: Double.self).map { FieldCheck(field: i, op: op, double: $0) }
    }
}

/// A `Double` field, for scalar tests.
enum DoubleField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Double { try FieldBytes.double(field, "a Double") }
}
