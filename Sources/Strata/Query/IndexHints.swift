import Foundation
import StrataEngine

// The conditions at the top of a predicate (joined by `&&`) that an index can answer. Like the
// record functions, they are compiled once per shape into functions that read a node's
// constants; the planner (QueryPlanner.swift) then chooses among them.

/// A condition the predicate puts on one property, usable with an index.
enum IndexHint {
    case equal(PersistedProperty, Any)
    case oneOf(PersistedProperty, [Any])
    case range(PersistedProperty, lower: Any?, lowerInclusive: Bool, upper: Any?, upperInclusive: Bool)
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

/// The hints of a node, compiled once per shape.
typealias HintPlan<E> = (E) -> [IndexHint]

protocol IndexHinting: PredicateExpression {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>?
}

extension RowCompiler {
    /// The hint plan of `expression`, if it gives hints.
    func hints<E: PredicateExpression>(_ expression: E) -> HintPlan<E>? {
        guard let hinting = expression as? any IndexHinting else { return nil }
        return openHints(hinting) as? HintPlan<E>
    }

    private func openHints<H: IndexHinting>(_ h: H) -> Any? { h.hintPlan(self) }

    /// `property op constant` with the constant on either side: the property, whether the
    /// constant is on the left, and how to read it from a node of this shape.
    func propertyAndConstant<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, _ rhs: R)
        -> (property: PersistedProperty, swapped: Bool, read: (L, R) -> Any?)? {
        if let p = inputProperty(lhs), let read = constantReader(rhs) { return (p, false, { read($1) }) }
        if let p = inputProperty(rhs), let read = constantReader(lhs) { return (p, true, { l, _ in read(l) }) }
        return nil
    }
}

extension PredicateExpressions.Conjunction: IndexHinting {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>? {
        let l = c.hints(lhs), r = c.hints(rhs)
        if l == nil && r == nil { return nil }
        return { node in (l?(node.lhs) ?? []) + (r?(node.rhs) ?? []) }
    }
}

extension PredicateExpressions.Equal: IndexHinting {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>? {
        if c.isIdentifier(lhs), let read = c.constantReader(rhs) {
            return { node in [.identifiers((read(node.rhs) as? PersistentIdentifier).map { [$0] } ?? [])] }
        }
        if c.isIdentifier(rhs), let read = c.constantReader(lhs) {
            return { node in [.identifiers((read(node.lhs) as? PersistentIdentifier).map { [$0] } ?? [])] }
        }
        guard let (p, _, read) = c.propertyAndConstant(lhs, rhs) else { return nil }
        return { node in
            guard let value = read(node.lhs, node.rhs) else { return [] }
            return [.equal(p, value)]
        }
    }
}

extension PredicateExpressions.Comparison: IndexHinting {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>? {
        guard var op = ComparisonOperator(op), let (p, swapped, read) = c.propertyAndConstant(lhs, rhs) else { return nil }
        if swapped { op = op.swapped }
        return { node in
            guard let value = read(node.lhs, node.rhs) else { return [] }
            switch op {
            case .less: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: false)]
            case .lessOrEqual: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: true)]
            case .greater: return [.range(p, lower: value, lowerInclusive: false, upper: nil, upperInclusive: false)]
            case .greaterOrEqual: return [.range(p, lower: value, lowerInclusive: true, upper: nil, upperInclusive: false)]
            case .equal, .notEqual: return []
            }
        }
    }
}

extension PredicateExpressions.SequenceContains: IndexHinting {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>? {
        guard let read = c.constantReader(sequence) else { return nil }
        if c.isIdentifier(element) {
            return { node in
                guard let seq = read(node.sequence) as? any Sequence else { return [] }
                return [.identifiers(anyElements(seq).compactMap { $0 as? PersistentIdentifier })]
            }
        }
        guard let p = c.inputProperty(element) else { return nil }
        return { node in
            guard let seq = read(node.sequence) as? any Sequence else { return [] }
            return [.oneOf(p, anyElements(seq))]
        }
    }
}

extension PredicateExpressions.SequenceStartsWith: IndexHinting {
    func hintPlan(_ c: RowCompiler) -> HintPlan<Self>? {
        guard let p = c.inputProperty(base), let read = c.constantReader(prefix) else { return nil }
        return { node in
            guard let s = read(node.prefix) as? String else { return [] }
            return [.prefix(p, s)]
        }
    }
}

private func anyElements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
