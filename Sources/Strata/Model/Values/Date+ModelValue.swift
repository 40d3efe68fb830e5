import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Date: ModelValue {
    static var placeholder: Date { Date(timeIntervalSinceReferenceDate: 0) }
    static func marker(_ variant: Int) -> Date? { Date(timeIntervalSinceReferenceDate: 123_456.789 + Double(variant)) }
    static func snapshot(_ value: Date) -> SnapshotValue { .date(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Date.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Date.self) else { return nil }
        return ScalarComparison.compare(c.timeIntervalSinceReferenceDate, op, field: i, DateIntervalField.self)
    }

    static var hasFieldCheck: Bool { true }
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> FieldCheck? {
        constant.value(as: Date.self).map { FieldCheck(field: i, op: op, double: $0.timeIntervalSinceReferenceDate, isDate: true) }
    }
}

/// A `Date` field read as its interval since the reference date, for scalar tests.
enum DateIntervalField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Double { try FieldBytes.double(field, "a Date") }
}
