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
    /// The field's type and the comparison in one: a check is one switch, not one on the type
    /// and another on the operator (W4).
    @usableFromInline
    package enum Test: UInt8, Sendable {
        /// A `Double` field, or a `Date`'s (its interval since the reference date).
        case doubleEqual, doubleNotEqual, doubleLess, doubleLessOrEqual, doubleGreater, doubleGreaterOrEqual
        /// An `Int` field (8 bytes).
        case intEqual, intNotEqual, intLess, intLessOrEqual, intGreater, intGreaterOrEqual
        /// A `Bool` field equal to the constant.
        case boolEqual

        init(double op: ComparisonOperator) {
            switch op {
            case .equal: self = .doubleEqual
            case .notEqual: self = .doubleNotEqual
            case .less: self = .doubleLess
            case .lessOrEqual: self = .doubleLessOrEqual
            case .greater: self = .doubleGreater
            case .greaterOrEqual: self = .doubleGreaterOrEqual
            }
        }

        init(int op: ComparisonOperator) {
            switch op {
            case .equal: self = .intEqual
            case .notEqual: self = .intNotEqual
            case .less: self = .intLess
            case .lessOrEqual: self = .intLessOrEqual
            case .greater: self = .intGreater
            case .greaterOrEqual: self = .intGreaterOrEqual
            }
        }
    }

    @usableFromInline package let field: Int
    @usableFromInline package let test: Test
    /// The constant's bits: a `Double`'s pattern, an `Int`'s, or 1 for `true`.
    @usableFromInline package let bits: UInt64
    /// For messages only: the field is a `Date`'s.
    @usableFromInline package let isDate: Bool

    package init(field: Int, op: ComparisonOperator, double: Double, isDate: Bool = false) {
        self.field = field
        test = Test(double: op)
        bits = double.bitPattern
        self.isDate = isDate
    }

    package init(field: Int, op: ComparisonOperator, int: Int) {
        self.field = field
        test = Test(int: op)
        bits = UInt64(bitPattern: Int64(int))
        isDate = false
    }

    /// A `Bool` field that passes when it is `wanted`.
    package init(field: Int, passesWhen wanted: Bool) {
        self.field = field
        test = .boolEqual
        bits = wanted ? 1 : 0
        isDate = false
    }

    @inlinable @inline(__always)
    package func passes(_ view: RecordView) throws -> Bool {
        try holds(view.field(field))
    }

    /// The test on the field's bytes `f`.
    @inlinable @inline(__always)
    package func holds(_ f: UnsafeRawBufferPointer) throws -> Bool {
        let isBool = test == .boolEqual
        guard f.count == (isBool ? 1 : 8) else { throw wrongSize(f.count) }
        let p = f.baseAddress.unsafelyUnwrapped
        if isBool { return (p.load(as: UInt8.self) != 0) == (bits != 0) }
        let raw = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
        let d = Double(bitPattern: raw), c = Double(bitPattern: bits)
        let i = Int64(bitPattern: raw), k = Int64(bitPattern: bits)
        switch test {
        case .doubleEqual: return d == c
        case .doubleNotEqual: return d != c
        case .doubleLess: return d < c
        case .doubleLessOrEqual: return d <= c
        case .doubleGreater: return d > c
        case .doubleGreaterOrEqual: return d >= c
        case .intEqual: return i == k
        case .intNotEqual: return i != k
        case .intLess: return i < k
        case .intLessOrEqual: return i <= k
        case .intGreater: return i > k
        case .intGreaterOrEqual: return i >= k
        case .boolEqual: return (raw & 0xFF != 0) == (bits != 0)
        }
    }

    @usableFromInline
    func wrongSize(_ count: Int) -> Error {
        switch test {
        case .boolEqual: decodingFailure("a Bool of \(count) bytes")
        case .intEqual, .intNotEqual, .intLess, .intLessOrEqual, .intGreater, .intGreaterOrEqual: decodingFailure("an integer of \(count) bytes")
        default: decodingFailure(isDate ? "a Date of \(count) bytes" : "a Double of \(count) bytes")
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

    /// `allPass` of a record's bytes, for a scan: a record of the current layout has its fields
    /// read at offsets of the width it was written with, chosen once per record, not per field.
    @inlinable
    package func allPass(_ raw: UnsafeRawBufferPointer, lent layouts: Unmanaged<EntityLayouts>?) throws -> Bool {
        try withUnsafeBufferPointer { try FieldCheck.allPass($0, raw, lent: layouts) }
    }
}

extension FieldCheck {
    /// `[FieldCheck].allPass(_:lent:)` on checks whose buffer a scan took once, not once per
    /// record (taking it, and the closure around it, cost about a tenth of a counted row).
    /// Always inlined into the scan's loop: as a call, with its prologue, it was about 25
    /// instructions of each counted row (W4).
    /// The record's format is switched on once, for its view and its fields alike.
    @inlinable @inline(__always)
    package static func allPass(_ checks: UnsafeBufferPointer<FieldCheck>, _ raw: UnsafeRawBufferPointer,
                                lent layouts: Unmanaged<EntityLayouts>?) throws -> Bool {
        switch try RecordView.format(raw) {
        case RecordLayout.short: return try allPass(checks, raw, lent: layouts, offsets: UInt8.self)
        case RecordLayout.narrow: return try allPass(checks, raw, lent: layouts, offsets: UInt16.self)
        default: return try allPass(checks, raw, lent: layouts, offsets: UInt32.self)
        }
    }

    @inlinable @inline(__always)
    static func allPass<Offset: FixedWidthInteger & UnsignedInteger>(_ checks: UnsafeBufferPointer<FieldCheck>, _ raw: UnsafeRawBufferPointer,
                                                                     lent layouts: Unmanaged<EntityLayouts>?, offsets: Offset.Type) throws -> Bool {
        let view = try RecordView(raw, lent: layouts, offsets: Offset.self)
        guard view.olderLayout == nil else { return try allPassOlder(checks, raw, lent: layouts) }
        return try allPass(checks, view, offsets: Offset.self)
    }

    /// A record of an older layout: its view made again here, out of line, so that the scan's
    /// path for current records keeps the view in registers (it was spilled to the stack for
    /// this path, about 7 instructions a counted row, W4).
    @usableFromInline @inline(never)
    static func allPassOlder(_ checks: UnsafeBufferPointer<FieldCheck>, _ raw: UnsafeRawBufferPointer,
                             lent layouts: Unmanaged<EntityLayouts>?) throws -> Bool {
        let view = try RecordView(raw, lent: layouts)
        for check in checks where try !check.passes(view) { return false }
        return true
    }

    @inlinable @inline(__always)
    static func allPass<Offset: FixedWidthInteger & UnsignedInteger>(_ checks: UnsafeBufferPointer<FieldCheck>, _ view: RecordView,
                                                                     offsets: Offset.Type) throws -> Bool {
        for check in checks where try !check.holds(view.rawField(check.field, offsets: Offset.self)) { return false }
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
