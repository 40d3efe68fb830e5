import Foundation
import StrataEngine

/// The bits of `timeIntervalSinceReferenceDate`: exact to the last bit. Date's operators compare
/// that interval, so a record's bytes answer comparisons as `Date` does.
extension Date: StoredValue {
    static func encode(_ value: Date, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
    }

    static func decode(_ field: UnsafeRawBufferPointer) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try ScalarComparison.double(field, "a Date"))
    }

    static var hasValueKey: Bool { true }
    static func appendKey(_ value: Date, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    static var keyOrderIsValueOrder: Bool { true }
    static var placeholder: Date { Date(timeIntervalSinceReferenceDate: 0) }
    static func marker(_ variant: Int) -> Date? { Date(timeIntervalSinceReferenceDate: 123_456.789 + Double(variant)) }
    static func json(_ value: Date) -> JSONValue { .string(value.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))) }
    static func snapshot(_ value: Date) -> SnapshotValue { .date(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Date.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Date.self) else { return nil }
        return ScalarComparison.compare(c.timeIntervalSinceReferenceDate, op, field: i, DateIntervalField.self)
    }
}

/// A `Date` field read as its interval since the reference date, for scalar tests.
enum DateIntervalField: ScalarField {
    @inline(__always) static func read(_ field: UnsafeRawBufferPointer) throws -> Double { try ScalarComparison.double(field, "a Date") }
}
