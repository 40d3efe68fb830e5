import Foundation
import StrataEngine

// The query planner's first half: turning Foundation's predicate expression tree into a
// closure that evaluates it on an encoded record, without making an object. One small
// conformance per `PredicateExpressions` type (as swift-foundation's NSPredicate conversion
// does). A tree with any node that has no conformance is evaluated the slow way instead:
// `Predicate.evaluate` on an object decoded from the record. Either way, the answer is
// Foundation's.

/// Compiles predicate expressions over one entity's records.
final class RowCompiler {
    let entity: Entity
    let input: PredicateExpressions.VariableID
    /// `\T.persistentModelID` for the predicate's model `T`.
    let identifierKeyPath: AnyKeyPath

    init<T: PersistentModel>(entity: Entity, input: PredicateExpressions.VariableID, model: T.Type) {
        self.entity = entity
        self.input = input
        self.identifierKeyPath = \T.persistentModelID
    }

    /// True if `expression` is the input's `persistentModelID`.
    func isIdentifier<E: PredicateExpression>(_ expression: E) -> Bool {
        (expression as? any InputKeyPath)?.isIdentifier(self) ?? false
    }

    /// A closure computing `expression` from a record, or nil if some part cannot.
    func compile<E: PredicateExpression>(_ expression: E) -> ((RecordView) throws -> E.Output)? {
        guard let evaluable = expression as? any RowEvaluable else { return nil }
        return open(evaluable) as? (RecordView) throws -> E.Output
    }

    private func open<R: RowEvaluable>(_ r: R) -> Any? {
        guard let f = r.rowFunction(self) else { return nil }
        return f
    }

    /// The property that `expression` reads directly from the predicate's input, if any.
    func inputProperty<E: PredicateExpression>(_ expression: E) -> AnyProperty? {
        (expression as? any InputKeyPath)?.inputProperty(self)
    }

    /// The constant value of `expression`, if it is one.
    func constant<E: PredicateExpression>(_ expression: E) -> Any?? {
        (expression as? any ConstantExpression).map { $0.constantValue }
    }
}

protocol RowEvaluable: PredicateExpression {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)?
}

protocol InputKeyPath {
    func inputProperty(_ c: RowCompiler) -> AnyProperty?
    func isIdentifier(_ c: RowCompiler) -> Bool
}

protocol ConstantExpression {
    var constantValue: Any? { get }
}


extension PredicateExpressions.Value: RowEvaluable, ConstantExpression {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        let v = value
        return { _ in v }
    }
    var constantValue: Any? { value }
}

extension PredicateExpressions.KeyPath: RowEvaluable, InputKeyPath {
    func inputProperty(_ c: RowCompiler) -> AnyProperty? {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, variable.key == c.input else { return nil }
        return c.entity.property(for: keyPath)
    }

    func isIdentifier(_ c: RowCompiler) -> Bool {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, variable.key == c.input else { return false }
        return keyPath as AnyKeyPath == c.identifierKeyPath
    }

    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        if let property = inputProperty(c) {
            return property.anyRowReader() as? (RecordView) throws -> Output
        }
        guard let base = c.compile(root) else { return nil }
        let path = keyPath
        return { try base($0)[keyPath: path] }
    }
}

extension PredicateExpressions.Equal: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        if let fast = c.scalarComparison(lhs, rhs, .equal) { return fast }
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { try l($0) == r($0) }
    }
}

extension PredicateExpressions.NotEqual: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        if let fast = c.scalarComparison(lhs, rhs, .notEqual) { return fast }
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { try l($0) != r($0) }
    }
}

extension PredicateExpressions.Comparison: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        let scalar: ScalarComparison.Operator?
        switch op {
        case .lessThan: scalar = .less
        case .lessThanOrEqual: scalar = .lessOrEqual
        case .greaterThan: scalar = .greater
        case .greaterThanOrEqual: scalar = .greaterOrEqual
        @unknown default: scalar = nil
        }
        if let scalar, let fast = c.scalarComparison(lhs, rhs, scalar) { return fast }
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        switch op {
        case .lessThan: return { try l($0) < r($0) }
        case .lessThanOrEqual: return { try l($0) <= r($0) }
        case .greaterThan: return { try l($0) > r($0) }
        case .greaterThanOrEqual: return { try l($0) >= r($0) }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.Conjunction: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { try l($0) && r($0) }
    }
}

extension PredicateExpressions.Disjunction: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { try l($0) || r($0) }
    }
}

extension PredicateExpressions.Negation: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let w = c.compile(wrapped) else { return nil }
        return { try !w($0) }
    }
}

extension PredicateExpressions.Arithmetic: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        switch op {
        case .add: return { try l($0) + r($0) }
        case .subtract: return { try l($0) - r($0) }
        case .multiply: return { try l($0) * r($0) }
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.UnaryMinus: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        guard let w = c.compile(wrapped) else { return nil }
        return { try -w($0) }
    }
}

extension PredicateExpressions.NilCoalesce: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { try l($0) ?? r($0) }
    }
}

extension PredicateExpressions.NilLiteral: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        { _ in nil }
    }
}

extension PredicateExpressions.Conditional: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        guard let t = c.compile(test), let a = c.compile(trueBranch), let b = c.compile(falseBranch) else { return nil }
        return { try t($0) ? a($0) : b($0) }
    }
}

extension PredicateExpressions.SequenceContains: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let s = c.compile(sequence), let e = c.compile(element) else { return nil }
        return { try s($0).contains(try e($0)) }
    }
}

extension PredicateExpressions.SequenceStartsWith: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let b = c.compile(base), let p = c.compile(prefix) else { return nil }
        return { try b($0).starts(with: try p($0)) }
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let r = c.compile(root), let o = c.compile(other) else { return nil }
        return { LocalizedStandard.contains(try r($0), try o($0)) }
    }
}

extension PredicateExpressions.CollectionContainsCollection: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Bool)? {
        guard let b = c.compile(base), let o = c.compile(other) else { return nil }
        return { try b($0).contains(try o($0)) }
    }
}

extension PredicateExpressions.ForcedUnwrap: RowEvaluable {
    func rowFunction(_ c: RowCompiler) -> ((RecordView) throws -> Output)? {
        // Foundation throws for nil; the slow path gives exactly its error.
        nil
    }
}
