import Foundation

// Record functions of the predicate nodes that compute values: arithmetic, optionals,
// conditionals, sequences and strings.

extension PredicateExpressions.Arithmetic: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        switch op {
        case .add: return { node in let lf = l(node.lhs), rf = r(node.rhs); return { try lf($0) + rf($0) } }
        case .subtract: return { node in let lf = l(node.lhs), rf = r(node.rhs); return { try lf($0) - rf($0) } }
        case .multiply: return { node in let lf = l(node.lhs), rf = r(node.rhs); return { try lf($0) * rf($0) } }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.UnaryMinus: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        guard let w = c.compile(wrapped) else { return nil }
        return { node in let wf = w(node.wrapped); return { try -wf($0) } }
    }
}

extension PredicateExpressions.NilCoalesce: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in let lf = l(node.lhs), rf = r(node.rhs); return { try lf($0) ?? rf($0) } }
    }
}

extension PredicateExpressions.NilLiteral: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        { _ in { _ in nil } }
    }
}

extension PredicateExpressions.Conditional: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        guard let t = c.compile(test), let a = c.compile(trueBranch), let b = c.compile(falseBranch) else { return nil }
        return { node in
            let tf = t(node.test), af = a(node.trueBranch), bf = b(node.falseBranch)
            return { try tf($0) ? af($0) : bf($0) }
        }
    }
}

extension PredicateExpressions.SequenceContains: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let s = c.compile(sequence), let e = c.compile(element) else { return nil }
        return { node in let sf = s(node.sequence), ef = e(node.element); return { try sf($0).contains(try ef($0)) } }
    }
}

extension PredicateExpressions.SequenceStartsWith: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let b = c.compile(base), let p = c.compile(prefix) else { return nil }
        return { node in let bf = b(node.base), pf = p(node.prefix); return { try bf($0).starts(with: try pf($0)) } }
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let r = c.compile(root), let o = c.compile(other) else { return nil }
        return { node in let rf = r(node.root), of = o(node.other); return { LocalizedStandard.contains(try rf($0), try of($0)) } }
    }
}

extension PredicateExpressions.CollectionContainsCollection: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let b = c.compile(base), let o = c.compile(other) else { return nil }
        return { node in let bf = b(node.base), of = o(node.other); return { try bf($0).contains(try of($0)) } }
    }
}

extension PredicateExpressions.ForcedUnwrap: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        // Foundation throws for nil; the slow path gives exactly its error.
        nil
    }
}
