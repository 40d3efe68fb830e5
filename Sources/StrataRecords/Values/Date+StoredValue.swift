import Foundation
import StrataEngine

/// The bits of `timeIntervalSinceReferenceDate`: exact to the last bit. Date's operators compare
/// that interval, so a record's bytes answer comparisons as `Date` does.
extension Date: StoredValue {
    @inlinable
    package static func encode(_ value: Date, into bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { bytes.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try FieldBytes.double(field, "a Date"))
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: Date, to key: inout [UInt8]) { value.encodeKey(into: &key) }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { true }
    @usableFromInline package static func json(_ value: Date) -> JSONValue { .string(value.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))) }
}
