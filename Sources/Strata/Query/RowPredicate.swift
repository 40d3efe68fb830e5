import Foundation
import StrataEngine

// The query planner's first half: turning Foundation's predicate expression tree into a
// function that evaluates it on an encoded record, without making an object. One small
// conformance per `PredicateExpressions` type (as swift-foundation's NSPredicate conversion
// does). A tree with any node that has no conformance is evaluated the slow way instead:
// `Predicate.evaluate` on an object made from the record. Either way, the answer is
// Foundation's.
//
// A tree is compiled once per shape (QueryShape.swift): the compiled plan of a node is a
// function from a node of the same shape, with any constants, to the record function with
// those constants bound. Key paths are looked up and fast paths chosen when compiling; binding
// reads the constants and makes the closures.

/// A function of a record.
typealias RowFunction<Output> = (RecordView) throws -> Output

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

    /// The plan of `expression`: from a node of its shape to a function of a record; nil if
    /// some part has no record function.
    func compile<E: PredicateExpression>(_ expression: E) -> ((E) -> RowFunction<E.Output>)? {
        guard let evaluable = expression as? any RowEvaluable else { return nil }
        return open(evaluable) as? (E) -> RowFunction<E.Output>
    }

    private func open<R: RowEvaluable>(_ r: R) -> Any? {
        guard let plan = r.rowPlan(self) else { return nil }
        return plan
    }

    /// True if `expression` is the input's `persistentModelID`.
    func isIdentifier<E: PredicateExpression>(_ expression: E) -> Bool {
        (expression as? any InputKeyPath)?.isIdentifier(self) ?? false
    }

    /// The property that `expression` reads directly from the predicate's input, if any.
    func inputProperty<E: PredicateExpression>(_ expression: E) -> PersistedProperty? {
        (expression as? any InputKeyPath)?.inputProperty(self)
    }

    /// True when `expression` is a constant (its value is bound at execution).
    func isConstant<E: PredicateExpression>(_ expression: E) -> Bool { expression is any ConstantExpression }

    /// How to read the value of constants of `expression`'s type (nil when it is not a
    /// constant): found once, so that binding does no dynamic cast.
    func constantReader<E: PredicateExpression>(_ expression: E) -> ((E) -> Any?)? {
        guard let constant = expression as? any ConstantExpression else { return nil }
        return RowCompiler.reader(constant) as? (E) -> Any?
    }

    private static func reader<C: ConstantExpression>(_ sample: C) -> Any {
        let read: (C) -> Any? = { $0.constantValue }
        return read
    }

    /// The fast path of `lhs op rhs` when one side reads a stored property and the other is a
    /// constant: bound to a test on the field's bytes when the constant has a fast path.
    func scalarPlan<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, _ rhs: R, _ op: ComparisonOperator) -> ((L, R) -> RowTest?)? {
        if let property = inputProperty(lhs), let read = constantReader(rhs) {
            return { _, r in read(r).flatMap { property.scalarTest($0, op) } }
        }
        if let property = inputProperty(rhs), let read = constantReader(lhs) {
            return { l, _ in read(l).flatMap { property.scalarTest($0, op.swapped) } }
        }
        return nil
    }
}

protocol RowEvaluable: PredicateExpression {
    /// This node's plan, compiled from it once per shape.
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)?
}

protocol InputKeyPath {
    func inputProperty(_ c: RowCompiler) -> PersistedProperty?
    func isIdentifier(_ c: RowCompiler) -> Bool
}

protocol ConstantExpression {
    var constantValue: Any? { get }
}

extension PredicateExpressions.Value: RowEvaluable, ConstantExpression {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        { node in
            let v = node.value
            return { _ in v }
        }
    }
    var constantValue: Any? { value }
}

extension PredicateExpressions.KeyPath: RowEvaluable, InputKeyPath {
    func inputProperty(_ c: RowCompiler) -> PersistedProperty? {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, variable.key == c.input else { return nil }
        return c.entity.property(for: keyPath)
    }

    func isIdentifier(_ c: RowCompiler) -> Bool {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, variable.key == c.input else { return false }
        return keyPath as AnyKeyPath == c.identifierKeyPath
    }

    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Output>)? {
        if let property = inputProperty(c) {
            guard let reader = property.rowReader() as? RowFunction<Output> else { return nil }
            return { _ in reader }
        }
        guard let base = c.compile(root) else { return nil }
        return { node in
            let root = base(node.root)
            let path = node.keyPath
            return { try root($0)[keyPath: path] }
        }
    }
}

extension PredicateExpressions.Equal: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        let scalar = c.scalarPlan(lhs, rhs, .equal)
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in
            if let fast = scalar?(node.lhs, node.rhs) { return fast }
            let lf = l(node.lhs), rf = r(node.rhs)
            return { try lf($0) == rf($0) }
        }
    }
}

extension PredicateExpressions.NotEqual: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        let scalar = c.scalarPlan(lhs, rhs, .notEqual)
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in
            if let fast = scalar?(node.lhs, node.rhs) { return fast }
            let lf = l(node.lhs), rf = r(node.rhs)
            return { try lf($0) != rf($0) }
        }
    }
}

extension PredicateExpressions.Comparison: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let op = ComparisonOperator(op) else { return nil }
        let scalar = c.scalarPlan(lhs, rhs, op)
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in
            if let fast = scalar?(node.lhs, node.rhs) { return fast }
            let lf = l(node.lhs), rf = r(node.rhs)
            switch op {
            case .less: return { try lf($0) < rf($0) }
            case .lessOrEqual: return { try lf($0) <= rf($0) }
            case .greater: return { try lf($0) > rf($0) }
            case .greaterOrEqual: return { try lf($0) >= rf($0) }
            case .equal: return { try lf($0) == rf($0) }
            case .notEqual: return { try lf($0) != rf($0) }
            }
        }
    }
}

extension ComparisonOperator {
    init?(_ op: PredicateExpressions.ComparisonOperator) {
        switch op {
        case .lessThan: self = .less
        case .lessThanOrEqual: self = .lessOrEqual
        case .greaterThan: self = .greater
        case .greaterThanOrEqual: self = .greaterOrEqual
        @unknown default: return nil
        }
    }
}

extension PredicateExpressions.Conjunction: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in
            let lf = l(node.lhs), rf = r(node.rhs)
            return { try lf($0) && rf($0) }
        }
    }
}

extension PredicateExpressions.Disjunction: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let l = c.compile(lhs), let r = c.compile(rhs) else { return nil }
        return { node in
            let lf = l(node.lhs), rf = r(node.rhs)
            return { try lf($0) || rf($0) }
        }
    }
}

extension PredicateExpressions.Negation: RowEvaluable {
    func rowPlan(_ c: RowCompiler) -> ((Self) -> RowFunction<Bool>)? {
        guard let w = c.compile(wrapped) else { return nil }
        return { node in
            let wf = w(node.wrapped)
            return { try !wf($0) }
        }
    }
}
