import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The conditions at the top of a predicate (joined by `&&`) that an index can answer. Like the
// record functions, they are compiled once per shape: which conditions there are, and on which
// properties, is the shape's; a condition's values are read from a fetch's constants. The
// planner (QueryPlanner.swift) sets aside those with an index when the shape is compiled, and
// chooses among them per fetch.

/// A condition the predicate puts on one property, usable with an index. Its constants are
/// read in place (`ConstantValue`), so a hint lives only while its predicate is being bound.
enum IndexHint {
    case equal(PersistedProperty, ConstantValue)
    case oneOf(PersistedProperty, [Any])
    case range(PersistedProperty, lower: ConstantValue?, lowerInclusive: Bool, upper: ConstantValue?, upperInclusive: Bool)
    case prefix(PersistedProperty, String)
    /// The object's `persistentModelID` is one of these.
    case identifiers([PersistentIdentifier])

    var property: PersistedProperty? {
        switch self {
        case .equal(let p, _), .oneOf(let p, _), .range(let p, _, _, _, _), .prefix(let p, _): p
        case .identifiers: nil
        }
    }
}

/// One condition at the top of a predicate, compiled once per shape: the property it is on
/// (nil: identifiers) and, from a predicate's constants, the hint (nil when a constant gives
/// none, such as a nil or another type's value).
struct HintPlan {
    let property: PersistedProperty?
    /// For `property == constant` as the whole predicate, on a type whose index keys are equal
    /// exactly when the values are (`keysAreExactValues`): the constant's slot. A unique index's
    /// row for the key is then the answer, with nothing left to test on it. Nil otherwise.
    var wholeExactEqualitySlot: Int? = nil
    let bind: (Bindings) -> IndexHint?

    var isWholeExactEquality: Bool { wholeExactEqualitySlot != nil }
}

extension RowCompiler {
    /// The conditions of `expression` an index may answer.
    func hints<E: PredicateExpression>(_ expression: E, at base: Int) -> [HintPlan] {
        evaluable(expression)?.hintPlans(self, at: base) ?? []
    }

    /// `property op constant` with the constant on either side (the sides found at `lAt` and
    /// `rAt`): the property, whether the constant is on the left, and its slot.
    func propertyAndConstant<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, at lAt: Int, _ rhs: R, at rAt: Int)
        -> (property: PersistedProperty, swapped: Bool, slot: Int)? {
        if let p = inputProperty(lhs, at: lAt), let slot = constantSlot(rhs, at: rAt) { return (p, false, slot) }
        if let p = inputProperty(rhs, at: rAt), let slot = constantSlot(lhs, at: lAt) { return (p, true, slot) }
        return nil
    }

    /// `persistentModelID == constant` on either side (found at `lAt` and `rAt`): the
    /// constant's slot.
    func identifierConstant<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, at lAt: Int, _ rhs: R, at rAt: Int) -> Int? {
        if isIdentifier(lhs, at: lAt) { return constantSlot(rhs, at: rAt) }
        if isIdentifier(rhs, at: rAt) { return constantSlot(lhs, at: lAt) }
        return nil
    }
}

extension PredicateExpressions.Conjunction {
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] {
        let (lAt, rAt) = Self.sides
        // Neither side is the whole predicate. (A left side begins where its conjunction does, at
        // offset 0 for the root's, so `Equal` cannot tell from its offset alone.)
        return (c.hints(lhs, at: base + lAt) + c.hints(rhs, at: base + rAt)).map { hint in
            var part = hint
            part.wholeExactEqualitySlot = nil
            return part
        }
    }
}

extension PredicateExpressions.Equal {
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] {
        let (lAt, rAt) = Self.sides
        if let slot = c.identifierConstant(lhs, at: base + lAt, rhs, at: base + rAt) {
            return [HintPlan(property: nil) { b in .identifiers((b.value(slot) as? PersistentIdentifier).map { [$0] } ?? []) }]
        }
        guard let (p, _, slot) = c.propertyAndConstant(lhs, at: base + lAt, rhs, at: base + rAt) else { return [] }
        // At 0, this node is the predicate's root, or the left side of a conjunction there (whose
        // hints the conjunction marks as parts).
        return [HintPlan(property: p, wholeExactEqualitySlot: base == 0 && p.keysAreExactValues ? slot : nil) { b in .equal(p, b.constant(slot)) }]
    }
}

extension PredicateExpressions.Comparison {
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] {
        let (opAt, lAt, rAt) = Self.fields
        guard var op = ComparisonOperator(op),
              let (p, swapped, slot) = c.propertyAndConstant(lhs, at: base + lAt, rhs, at: base + rAt) else { return [] }
        c.expect(.comparison(self.op), at: base + opAt)
        if swapped { op = op.swapped }
        return [HintPlan(property: p) { [op] b in
            let value = b.constant(slot)
            switch op {
            case .less: return .range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: false)
            case .lessOrEqual: return .range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: true)
            case .greater: return .range(p, lower: value, lowerInclusive: false, upper: nil, upperInclusive: false)
            case .greaterOrEqual: return .range(p, lower: value, lowerInclusive: true, upper: nil, upperInclusive: false)
            case .equal, .notEqual: return nil
            }
        }]
    }
}

extension PredicateExpressions.SequenceContains {
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] {
        guard let sAt = c.at(base, \Self.sequence), let eAt = c.at(base, \Self.element),
              let slot = c.constantSlot(sequence, at: sAt) else { return [] }
        if c.isIdentifier(element, at: eAt) {
            return [HintPlan(property: nil) { b in
                guard let seq = b.value(slot) as? any Sequence else { return nil }
                return .identifiers(anyElements(seq).compactMap { $0 as? PersistentIdentifier })
            }]
        }
        guard let p = c.inputProperty(element, at: eAt) else { return [] }
        return [HintPlan(property: p) { b in
            guard let seq = b.value(slot) as? any Sequence else { return nil }
            return .oneOf(p, anyElements(seq))
        }]
    }
}

extension PredicateExpressions.SequenceStartsWith {
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] {
        guard let bAt = c.at(base, \Self.base), let pAt = c.at(base, \Self.prefix),
              let p = c.inputProperty(self.base, at: bAt), let slot = c.constantSlot(prefix, at: pAt) else { return [] }
        return [HintPlan(property: p) { b in
            guard let s = b.value(slot) as? String else { return nil }
            return .prefix(p, s)
        }]
    }
}

private func anyElements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
