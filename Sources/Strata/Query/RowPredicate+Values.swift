import Foundation
@_spi(StorageBackend) import StrataRecords

// Record functions of the predicate nodes that compute values: arithmetic, optionals,
// conditionals, sequences and strings.

extension PredicateExpressions.Arithmetic: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        guard let opAt = c.at(base, \Self.op), let (l, _, r, _) = c.children(self, at: base, \.lhs, \.rhs) else { return nil }
        c.expect(.arithmetic(op), at: opAt)
        switch op {
        case .add: return { b in let lf = l(b), rf = r(b); return { try lf($0) + rf($0) } }
        case .subtract: return { b in let lf = l(b), rf = r(b); return { try lf($0) - rf($0) } }
        case .multiply: return { b in let lf = l(b), rf = r(b); return { try lf($0) * rf($0) } }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.UnaryMinus: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        guard let wAt = c.at(base, \Self.wrapped), let w = c.compile(wrapped, at: wAt) else { return nil }
        return { b in let wf = w(b); return { try -wf($0) } }
    }
}

extension PredicateExpressions.NilCoalesce: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        guard let (l, _, r, _) = c.children(self, at: base, \.lhs, \.rhs) else { return nil }
        return { b in let lf = l(b), rf = r(b); return { try lf($0) ?? rf($0) } }
    }
}

extension PredicateExpressions.NilLiteral: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        { _ in { _ in nil } }
    }
}

extension PredicateExpressions.Conditional: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        guard let tAt = c.at(base, \Self.test), let (a, _, e, _) = c.children(self, at: base, \.trueBranch, \.falseBranch),
              let t = c.test(test, at: tAt) else { return nil }
        return { b in
            let tf = t(b), af = a(b), ef = e(b)
            return { try tf($0) ? af($0) : ef($0) }
        }
    }
}

extension PredicateExpressions.SequenceContains: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? {
        guard let (s, _, e, _) = c.children(self, at: base, \.sequence, \.element) else { return nil }
        return { b in let sf = s(b), ef = e(b); return { try sf($0).contains(try ef($0)) } }
    }
}

extension PredicateExpressions.SequenceStartsWith: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? {
        guard let (s, _, p, _) = c.children(self, at: base, \.base, \.prefix) else { return nil }
        return { b in let sf = s(b), pf = p(b); return { try sf($0).starts(with: try pf($0)) } }
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? {
        guard let (r, _, o, _) = c.children(self, at: base, \.root, \.other) else { return nil }
        return { b in let rf = r(b), of = o(b); return { LocalizedStandard.contains(try rf($0), try of($0)) } }
    }
}

extension PredicateExpressions.CollectionContainsCollection: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? {
        guard let (s, _, o, _) = c.children(self, at: base, \.base, \.other) else { return nil }
        return { b in let sf = s(b), of = o(b); return { try sf($0).contains(try of($0)) } }
    }
}

extension PredicateExpressions.ForcedUnwrap: RowEvaluable {
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        // Foundation throws for nil; the slow path gives exactly its error.
        nil
    }
}
