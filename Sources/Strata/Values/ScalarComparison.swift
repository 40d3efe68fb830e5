import Foundation

// The planner's fast path for the most common predicate node: a stored property compared with
// a constant (`$0.duration > limit`, `$0.count == 3`, `$0.name == "Ada"`). The general path
// (RowPredicate.swift) makes a closure for each side and one for the comparison, and moves the
// values through generic witnesses; this makes one closure that reads the field's bytes and
// compares them with the constant as the concrete type, with the same answer as Foundation's
// operators on that type.

enum ScalarComparison {
    enum Operator {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

        /// The same comparison with its two sides swapped (`c < x` is `x > c`).
        var swapped: Operator {
            switch self {
            case .equal, .notEqual: self
            case .less: .greater
            case .lessOrEqual: .greaterOrEqual
            case .greater: .less
            case .greaterOrEqual: .lessOrEqual
            }
        }
    }

    /// The property types with a fast path.
    enum Kind {
        case double, int, date, bool, string

        init?(_ type: Any.Type) {
            switch type {
            case is Double.Type: self = .double
            case is Int.Type: self = .int
            case is Date.Type: self = .date
            case is Bool.Type: self = .bool
            case is String.Type: self = .string
            default: return nil
            }
        }
    }

    /// A closure comparing `property`'s field of a record with `constant`, or nil when the
    /// property's type has no fast path (the general path then does it).
    static func make(_ property: AnyProperty, _ constant: Any, _ op: Operator) -> ((RecordView) throws -> Bool)? {
        guard let kind = property.scalarKind else { return nil }
        let i = property.index
        switch kind {
        case .double:
            guard let c = constant as? Double else { return nil }
            return compare(c, op) { view in try double(view.field(i), "a Double") }
        case .int:
            guard let c = constant as? Int else { return nil }
            return compare(c, op) { view in
                let f = try view.field(i)
                guard f.count == 8 else { throw decodingFailure("an integer of \(f.count) bytes") }
                return Int(littleEndian: f.loadUnaligned(as: Int.self))
            }
        case .date:
            // Date's operators compare `timeIntervalSinceReferenceDate`, which is what is stored.
            guard let c = constant as? Date else { return nil }
            return compare(c.timeIntervalSinceReferenceDate, op) { view in try double(view.field(i), "a Date") }
        case .bool:
            guard let c = constant as? Bool, op == .equal || op == .notEqual else { return nil }
            let wanted = op == .equal
            return { view in
                let f = try view.field(i)
                guard f.count == 1 else { throw decodingFailure("a Bool of \(f.count) bytes") }
                return ((f[0] != 0) == c) == wanted
            }
        case .string:
            guard let c = constant as? String, op == .equal || op == .notEqual else { return nil }
            return stringEquality(i, c, wanted: op == .equal)
        }
    }

    @inline(__always)
    private static func double(_ f: UnsafeRawBufferPointer, _ what: String) throws -> Double {
        guard f.count == 8 else { throw decodingFailure("\(what) of \(f.count) bytes") }
        return Double(bitPattern: UInt64(littleEndian: f.loadUnaligned(as: UInt64.self)))
    }

    /// One closure per operator, so that the operator is not chosen again for each record.
    private static func compare<T: Comparable>(_ c: T, _ op: Operator, _ read: @escaping (RecordView) throws -> T) -> (RecordView) throws -> Bool {
        switch op {
        case .equal: { try read($0) == c }
        case .notEqual: { try read($0) != c }
        case .less: { try read($0) < c }
        case .lessOrEqual: { try read($0) <= c }
        case .greater: { try read($0) > c }
        case .greaterOrEqual: { try read($0) >= c }
        }
    }

    /// String equality is Unicode canonical equivalence ("é" as one scalar or two, the Kelvin
    /// sign and "K"), so bytes decide only when both sides are ASCII; otherwise the field is
    /// decoded and compared as a String.
    private static func stringEquality(_ i: Int, _ c: String, wanted: Bool) -> (RecordView) throws -> Bool {
        let bytes = Array(c.utf8)
        let asciiConstant = bytes.allSatisfy { $0 < 0x80 }
        return { view in
            let f = try view.field(i)
            if asciiConstant {
                if f.count == bytes.count, bytes.withUnsafeBytes({ $0.elementsEqual(f) }) { return wanted }
                if !f.contains(where: { $0 >= 0x80 }) { return !wanted }
            }
            return (String(decoding: f, as: UTF8.self) == c) == wanted
        }
    }
}

extension RowCompiler {
    /// The fast path for `lhs op rhs` when one side reads a stored property and the other is a
    /// constant that is not nil.
    func scalarComparison<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, _ rhs: R, _ op: ScalarComparison.Operator) -> ((RecordView) throws -> Bool)? {
        // Cheapest test first: predicates are compiled at every fetch.
        guard ScalarComparison.Kind(L.Output.self) != nil else { return nil }
        if let property = inputProperty(lhs), property.scalarKind != nil, let constant = constant(rhs), let value = constant {
            return ScalarComparison.make(property, value, op)
        }
        if let property = inputProperty(rhs), property.scalarKind != nil, let constant = constant(lhs), let value = constant {
            return ScalarComparison.make(property, value, op.swapped)
        }
        return nil
    }
}
