import Foundation

// The planner's fast path for the most common predicate node: a stored property compared with
// a constant (`$0.duration > limit`, `$0.count == 3`, `$0.name == "Ada"`). The general path
// (the object layer's Query/RowPredicate.swift) makes a closure for each side and one for the comparison; this
// makes one closure that reads the field's bytes and compares them with the constant as the
// concrete type, with the same answer as Foundation's operators on that type. Each value type
// that has one says so in its `ModelValue` conformance (`scalarTest`), in the object layer.

/// A test of one record.
package typealias RowTest = (RecordView) throws -> Bool

/// The comparison of a predicate node.
@usableFromInline
package enum ComparisonOperator: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

    /// The same comparison with its two sides swapped (`c < x` is `x > c`).
    package var swapped: ComparisonOperator {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        }
    }
}

/// How a scalar test reads its field's value: a static function, so that each test is one
/// closure that reads the field itself (a reader passed as a closure cost a call per record).
@usableFromInline
package protocol ScalarField {
    associatedtype Value: Comparable
    static func read(_ field: UnsafeRawBufferPointer) throws -> Value
}

/// A scalar test as data: field `field` of a record compared with a constant. A predicate made
/// of such tests joined by `&&` (`$0.duration > x && $0.isPublished`) runs as a list of them in
/// the scan's own loop (`RowFilter.checks`), where each test as a closure cost a call, and each
/// `&&` another (W4, Docs/Benchmarks.md). The answers are those of the type's own operators, as
/// the type's `scalarTest`.
@usableFromInline
package struct FieldCheck: Sendable {
    @usableFromInline
    package enum Kind: UInt8, Sendable {
        /// A `Double` field, or a `Date`'s (its interval since the reference date).
        case double, date
        /// An `Int` field (8 bytes).
        case int
        /// A `Bool` field, equal (`.equal`) to the constant or not.
        case bool
    }

    @usableFromInline package let field: Int
    @usableFromInline package let kind: Kind
    @usableFromInline package let op: ComparisonOperator
    /// The constant's bits: a `Double`'s pattern, an `Int`'s, or 1 for `true`.
    @usableFromInline package let bits: UInt64

    package init(field: Int, op: ComparisonOperator, double: Double, isDate: Bool = false) {
        self.field = field
        kind = isDate ? .date : .double
        self.op = op
        bits = double.bitPattern
    }

    package init(field: Int, op: ComparisonOperator, int: Int) {
        self.field = field
        kind = .int
        self.op = op
        bits = UInt64(bitPattern: Int64(int))
    }

    /// A `Bool` field that passes when it is `wanted`.
    package init(field: Int, passesWhen wanted: Bool) {
        self.field = field
        kind = .bool
        op = .equal
        bits = wanted ? 1 : 0
    }

    @inlinable @inline(__always)
    package func passes(_ view: RecordView) throws -> Bool {
        let f = try view.field(field)
        switch kind {
        case .double, .date:
            guard f.count == 8 else { throw decodingFailure("\(kind == .date ? "a Date" : "a Double") of \(f.count) bytes") }
            return op.holds(Double(bitPattern: UInt64(littleEndian: f.loadUnaligned(as: UInt64.self))), Double(bitPattern: bits))
        case .int:
            guard f.count == 8 else { throw decodingFailure("an integer of \(f.count) bytes") }
            return op.holds(Int(littleEndian: f.loadUnaligned(as: Int.self)), Int(Int64(bitPattern: bits)))
        case .bool:
            guard f.count == 1 else { throw decodingFailure("a Bool of \(f.count) bytes") }
            return (f.load(as: UInt8.self) != 0) == (bits != 0)
        }
    }
}

extension Array where Element == FieldCheck {
    /// True when every check passes, tried in order (as `&&` tries them).
    @inlinable @inline(__always)
    package func allPass(_ view: RecordView) throws -> Bool {
        for check in self where try !check.passes(view) { return false }
        return true
    }
}

extension ComparisonOperator {
    /// `value op constant`, with the type's own operator.
    @inlinable @inline(__always)
    package func holds<T: Comparable>(_ value: T, _ constant: T) -> Bool {
        switch self {
        case .equal: value == constant
        case .notEqual: value != constant
        case .less: value < constant
        case .lessOrEqual: value <= constant
        case .greater: value > constant
        case .greaterOrEqual: value >= constant
        }
    }
}
