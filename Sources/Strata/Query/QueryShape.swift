import Foundation

// The shape of a fetch: what stays the same between two fetches that differ only in the
// values a predicate captured. It is the model, whether subclasses are included, the type of
// the predicate's expression tree (which spells out every node type), what the tree's nodes
// hold besides children and constants (key paths, operators, which variable each variable node
// is), and the sort descriptors. A plan compiled for a shape answers for any fetch of that
// shape, with the fetch's own constants bound (CompiledQuery.swift); it never answers for
// another shape.

/// Whether expressions of one type have one shape: a function comparing an expression of
/// that type (with the variable that is its input) with the shape it was made from.
enum ShapeMatcher {
    /// The matcher of `expression`'s shape; nil when the walk does not know one of its nodes
    /// (then no two predicates are taken to have the same shape).
    static func make<E: PredicateExpression>(_ expression: E, input: PredicateExpressions.VariableID) -> ((E, PredicateExpressions.VariableID) -> Bool)? {
        guard let shaped = expression as? any ShapedExpression else { return nil }
        return matcher(shaped, input: input) as? (E, PredicateExpressions.VariableID) -> Bool
    }

    private static func matcher<S: ShapedExpression>(_ sample: S, input: PredicateExpressions.VariableID) -> Any {
        var compiled = ShapeWalk(input: input)
        sample.appendShape(to: &compiled)
        let keyPaths = compiled.keyPaths, details = compiled.details
        let matches: (S, PredicateExpressions.VariableID) -> Bool = { node, input in
            var walk = ShapeWalk(input: input)
            node.appendShape(to: &walk)
            return walk.details == details && walk.keyPaths.count == keyPaths.count
                && zip(walk.keyPaths, keyPaths).allSatisfy { $0 === $1 || $0 == $1 }
        }
        return matches
    }

    static func isShaped(_ expression: (any StandardPredicateExpression<Bool>)?) -> Bool {
        expression.map { $0 is any ShapedExpression } ?? true
    }
}

/// What a walk of an expression tree collects.
struct ShapeWalk {
    var keyPaths: [AnyKeyPath] = []
    var details: [Int] = []
    private var variables: [PredicateExpressions.VariableID]

    init(input: PredicateExpressions.VariableID) { variables = [input] }

    /// A variable node: its position among the variables met so far (the input is 0).
    mutating func variable(_ id: PredicateExpressions.VariableID) {
        if let i = variables.firstIndex(of: id) { return details.append(i) }
        details.append(variables.count)
        variables.append(id)
    }
}

/// A node whose shape is known: it appends what it holds besides its children and constants,
/// then its children's shapes.
protocol ShapedExpression {
    func appendShape(to walk: inout ShapeWalk)
}

extension PredicateExpressions.Value: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {}
}
extension PredicateExpressions.NilLiteral: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {}
}
extension PredicateExpressions.Variable: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) { walk.variable(key) }
}
extension PredicateExpressions.KeyPath: ShapedExpression where Root: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {
        walk.keyPaths.append(keyPath)
        root.appendShape(to: &walk)
    }
}

/// Nodes with two children and nothing else.
protocol BinaryShapedExpression: ShapedExpression {
    associatedtype First: ShapedExpression
    associatedtype Second: ShapedExpression
    var first: First { get }
    var second: Second { get }
}
extension BinaryShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {
        first.appendShape(to: &walk)
        second.appendShape(to: &walk)
    }
}

extension PredicateExpressions.Equal: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { lhs }
    var second: RHS { rhs }
}
extension PredicateExpressions.NotEqual: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { lhs }
    var second: RHS { rhs }
}
extension PredicateExpressions.Conjunction: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { lhs }
    var second: RHS { rhs }
}
extension PredicateExpressions.Disjunction: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { lhs }
    var second: RHS { rhs }
}
extension PredicateExpressions.NilCoalesce: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { lhs }
    var second: RHS { rhs }
}
extension PredicateExpressions.SequenceContains: ShapedExpression, BinaryShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    var first: LHS { sequence }
    var second: RHS { element }
}
extension PredicateExpressions.SequenceStartsWith: ShapedExpression, BinaryShapedExpression where Base: ShapedExpression, Prefix: ShapedExpression {
    var first: Base { base }
    var second: Prefix { prefix }
}
extension PredicateExpressions.CollectionContainsCollection: ShapedExpression, BinaryShapedExpression
where Base: ShapedExpression, Other: ShapedExpression {
    var first: Base { base }
    var second: Other { other }
}
extension PredicateExpressions.StringLocalizedStandardContains: ShapedExpression, BinaryShapedExpression
where Root: ShapedExpression, Other: ShapedExpression {
    var first: Root { root }
    var second: Other { other }
}

extension PredicateExpressions.Comparison: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {
        walk.details.append(ComparisonOperator(op).map { [.less, .lessOrEqual, .greater, .greaterOrEqual].firstIndex(of: $0) ?? -1 } ?? -1)
        lhs.appendShape(to: &walk)
        rhs.appendShape(to: &walk)
    }
}
extension PredicateExpressions.Arithmetic: ShapedExpression where LHS: ShapedExpression, RHS: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {
        switch op {
        case .add: walk.details.append(0)
        case .subtract: walk.details.append(1)
        case .multiply: walk.details.append(2)
        @unknown default: walk.details.append(-1)
        }
        lhs.appendShape(to: &walk)
        rhs.appendShape(to: &walk)
    }
}
extension PredicateExpressions.Negation: ShapedExpression where Wrapped: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) { wrapped.appendShape(to: &walk) }
}
extension PredicateExpressions.UnaryMinus: ShapedExpression where Wrapped: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) { wrapped.appendShape(to: &walk) }
}
extension PredicateExpressions.ForcedUnwrap: ShapedExpression where Inner: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) { inner.appendShape(to: &walk) }
}
extension PredicateExpressions.Conditional: ShapedExpression
where Test: ShapedExpression, If: ShapedExpression, Else: ShapedExpression {
    func appendShape(to walk: inout ShapeWalk) {
        test.appendShape(to: &walk)
        trueBranch.appendShape(to: &walk)
        falseBranch.appendShape(to: &walk)
    }
}
