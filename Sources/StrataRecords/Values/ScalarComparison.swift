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
package enum ComparisonOperator {
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
