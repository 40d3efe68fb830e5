import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The query planner's first half: turning Foundation's predicate expression tree into a
// function that evaluates it on an encoded record, without making an object. One small
// conformance per `PredicateExpressions` type (as swift-foundation's NSPredicate conversion
// does). A tree with any node that has no conformance is evaluated the slow way instead:
// `Predicate.evaluate` on an object made from the record. Either way, the answer is
// Foundation's.
//
// A tree is compiled once per shape (QueryShape.swift). Compiling walks the tree's types and
// records where, in the tree's memory, each constant is (a `Value` node's value) and what the
// shape holds (key paths, variables, operators); the plan of each node is a function from the
// constants (`Bindings`) to the record function. Binding a later predicate of the same shape
// reads its constants at those offsets: no generic code runs per node.

/// A function of a record.
typealias RowFunction<Output> = (RecordView) throws -> Output

/// Compiles predicate expressions over one entity's records.
final class RowCompiler {
    let entity: Entity
    let input: PredicateExpressions.VariableID
    /// `\T.persistentModelID` for the predicate's model `T`, made when a key path to a
    /// `PersistentIdentifier` is compared with it. (Made for every compiled predicate, it was
    /// about 18k instructions of a fresh process's first fetch, W8: a key path's first
    /// instantiation makes its class's metadata.)
    private(set) lazy var identifierKeyPath: AnyKeyPath = {
        func identifier<T: PersistentModel>(_: T.Type) -> AnyKeyPath { \T.persistentModelID }
        return identifier(model)
    }()
    /// The predicate's model (its input's type).
    private let model: any PersistentModel.Type
    /// Where the constants are, by slot, and what a predicate must hold to have this shape.
    private(set) var layout = TreeLayout()

    init<T: PersistentModel>(entity: Entity, input: PredicateExpressions.VariableID, model: T.Type) {
        self.entity = entity
        self.input = input
        self.model = model
    }

    /// `expression` as a node the planner knows, if it is one. A cast to `RowEvaluable` is
    /// answered, the first time in a process for each node type, by a scan of every protocol
    /// conformance loaded (about 250k instructions: three for `$0.id == key`, a fifth of a fresh
    /// process's first fetch, W8). The leaves of most predicates, a constant and a key path of
    /// the input, are found first by casts to their concrete types, which compare metadata.
    func evaluable<E: PredicateExpression>(_ expression: E) -> (any RowEvaluable)? {
        if let constant = expression as? PredicateExpressions.Value<E.Output> { return constant }
        func ofInput<T: PersistentModel>(_: T.Type) -> (any RowEvaluable)? {
            if let keyPath = expression as? PredicateExpressions.KeyPath<PredicateExpressions.Variable<T>, E.Output> { return keyPath }
            return RowCompiler.propertyEqualsConstant(expression, T.self)
        }
        if let node = ofInput(model) { return node }
        return expression as? any RowEvaluable
    }

    /// The most common predicate of all, a property compared with a constant for equality
    /// (`$0.id == key`), for the property types most often looked up by, found by casts to
    /// concrete types: a few metadata comparisons where the cast to `RowEvaluable` scanned
    /// every conformance in the process (W8: 258k of a fresh process's 2.5M instructions).
    private static func propertyEqualsConstant<E: PredicateExpression, T: PersistentModel>(_ expression: E, _: T.Type) -> (any RowEvaluable)? {
        guard E.Output.self == Bool.self else { return nil }
        func equal<V: Equatable>(_: V.Type) -> (any RowEvaluable)? {
            expression as? PredicateExpressions.Equal<PredicateExpressions.KeyPath<PredicateExpressions.Variable<T>, V>, PredicateExpressions.Value<V>>
        }
        return equal(UUID.self) ?? equal(String.self) ?? equal(Int.self)
    }

    /// The plan of `expression`, found `base` bytes into the tree: from the constants to a
    /// function of a record; nil if some part has no record function.
    func compile<E: PredicateExpression>(_ expression: E, at base: Int) -> ((Bindings) -> RowFunction<E.Output>)? {
        guard let evaluable = evaluable(expression) else { return nil }
        return open(evaluable, base) as? (Bindings) -> RowFunction<E.Output>
    }

    private func open<R: RowEvaluable>(_ r: R, _ base: Int) -> Any? {
        guard let plan = r.rowPlan(self, at: base) else { return nil }
        return plan
    }

    /// The offset of a node's stored property (a child) from the tree's start.
    func at<S, F>(_ base: Int, _ field: KeyPath<S, F>) -> Int? {
        MemoryLayout<S>.offset(of: field).map { base + $0 }
    }

    /// True if `expression` is the input's `persistentModelID`.
    func isIdentifier<E: PredicateExpression>(_ expression: E, at base: Int) -> Bool {
        evaluable(expression)?.isIdentifier(self, at: base) ?? false
    }

    /// The property that `expression` reads directly from the predicate's input, if any.
    func inputProperty<E: PredicateExpression>(_ expression: E, at base: Int) -> PersistedProperty? {
        evaluable(expression)?.inputProperty(self, at: base)
    }

    /// The slot of a constant `expression` (nil when it is not a constant).
    func constantSlot<E: PredicateExpression>(_ expression: E, at base: Int) -> Int? {
        evaluable(expression)?.slot(self, at: base)
    }

    /// Records a constant of type `T` at `offset`; its slot.
    func constant<T>(_ type: T.Type, at offset: Int) -> Int {
        layout.constant(T.self, at: offset)
    }

    /// Records something a predicate must hold at `offset` to have this shape.
    func expect(_ check: TreeLayout.Check, at offset: Int) { layout.expect(check, at: offset) }

    /// The fast path of `lhs op rhs` when one side reads a stored property and the other is a
    /// constant: bound to a test on the field's bytes when the constant has a fast path.
    func scalarPlan<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, at l: Int, _ rhs: R, at r: Int,
                                                                   _ op: ComparisonOperator) -> ((Bindings) -> RowTest?)? {
        if let property = inputProperty(lhs, at: l), let slot = constantSlot(rhs, at: r) {
            return { b in property.scalarTest(b.constant(slot), op) }
        }
        if let property = inputProperty(rhs, at: r), let slot = constantSlot(lhs, at: l) {
            return { b in property.scalarTest(b.constant(slot), op.swapped) }
        }
        return nil
    }

    /// `scalarPlan` as data: the comparison as a `FieldCheck`, when its type has one.
    func checkPlan<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, at l: Int, _ rhs: R, at r: Int,
                                                                  _ op: ComparisonOperator) -> ((Bindings) -> [FieldCheck]?)? {
        if let property = inputProperty(lhs, at: l), property.hasFieldCheck, let slot = constantSlot(rhs, at: r) {
            return { b in property.fieldCheck(b.constant(slot), op).map { [$0] } }
        }
        if let property = inputProperty(rhs, at: r), property.hasFieldCheck, let slot = constantSlot(lhs, at: l) {
            return { b in property.fieldCheck(b.constant(slot), op.swapped).map { [$0] } }
        }
        return nil
    }

    /// The plan of a `Bool` expression as a list of field checks that must all pass; nil when
    /// some part is not such a check (bound: nil when a constant has no check).
    func checks<E: PredicateExpression>(_ expression: E, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        evaluable(expression)?.checkPlan(self, at: base)
    }
}

/// A predicate node Strata plans, and what the planner asks of it. One protocol, with defaults
/// for what most nodes are not (a test, the input's property, a constant, an index condition):
/// a cast to a protocol is answered, the first time in a process for each node type, by a scan
/// of every conformance record loaded, and five protocols cost a fresh process's first fetch
/// five scans per node type (Docs/Benchmarks.md, "Costs that shaped the code").
protocol RowEvaluable: PredicateExpression {
    /// This node's plan, compiled from it once per shape; `base` is where it is in the tree.
    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)?
    /// True for a node whose output is `Bool` and that is planned as a `RowTest` (`testPlan`): a
    /// function of a concrete type. A plan of generic output passes through `Any` and comes back
    /// wrapped in reabstraction thunks; a tree of `&&`, `||`, `!` and comparisons planned as
    /// tests calls its closures directly.
    var isRowTest: Bool { get }
    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)?
    /// This node as comparisons of fields with constants that must all pass (`FieldCheck`), for
    /// a scan to test in its own loop (`RowFilter.checks`); nil when it is not one.
    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)?
    /// The property this node reads directly from the predicate's input (a key path node).
    func inputProperty(_ c: RowCompiler, at base: Int) -> PersistedProperty?
    /// True when this node is the input's `persistentModelID`.
    func isIdentifier(_ c: RowCompiler, at base: Int) -> Bool
    /// The slot of this node's constant (a value node).
    func slot(_ c: RowCompiler, at base: Int) -> Int?
    /// The conditions of this node an index may answer (IndexHints.swift).
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan]
}

extension RowEvaluable {
    var isRowTest: Bool { false }
    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? { nil }
    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? { nil }
    func inputProperty(_ c: RowCompiler, at base: Int) -> PersistedProperty? { nil }
    func isIdentifier(_ c: RowCompiler, at base: Int) -> Bool { false }
    func slot(_ c: RowCompiler, at base: Int) -> Int? { nil }
    func hintPlans(_ c: RowCompiler, at base: Int) -> [HintPlan] { [] }
}

extension RowCompiler {
    /// The plan of a `Bool` expression, as a test; nil if some part has no record function
    /// (or the expression is not a `Bool` one).
    func test<E: PredicateExpression>(_ expression: E, at base: Int) -> ((Bindings) -> RowTest)? {
        guard let node = evaluable(expression) else { return nil }
        if node.isRowTest { return node.testPlan(self, at: base) }
        return compile(expression, at: base) as? (Bindings) -> RowTest
    }
}

extension PredicateExpressions.Value: RowEvaluable {
    func slot(_ c: RowCompiler, at base: Int) -> Int? {
        c.constant(Output.self, at: base)   // `value`, its only stored property
    }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        guard let slot = slot(c, at: base) else { return nil }
        return { b in
            let v = b.read(slot, as: Output.self)
            return { _ in v }
        }
    }
}

extension PredicateExpressions.KeyPath: RowEvaluable {
    /// True when the root is the predicate's input variable (recorded as part of the shape).
    private func rootIsInput(_ c: RowCompiler, at base: Int) -> Bool {
        guard let variable = root as? PredicateExpressions.Variable<Root.Output>, variable.key == c.input else { return false }
        // The variable's `key` is its only stored property.
        let (rootAt, keyAt) = Self.fields
        c.expect(.input, at: base + rootAt)
        c.expect(.keyPath(keyPath), at: base + keyAt)
        return true
    }

    func inputProperty(_ c: RowCompiler, at base: Int) -> PersistedProperty? {
        guard rootIsInput(c, at: base) else { return nil }
        return c.entity.property(for: keyPath)
    }

    func isIdentifier(_ c: RowCompiler, at base: Int) -> Bool {
        rootIsInput(c, at: base) && Output.self == PersistentIdentifier.self && keyPath as AnyKeyPath == c.identifierKeyPath
    }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Output>)? {
        if let property = inputProperty(c, at: base) {
            guard let reader = property.rowReader() as? RowFunction<Output> else { return nil }
            return { _ in reader }
        }
        let (rootAt, keyAt) = Self.fields
        guard let root = c.compile(self.root, at: base + rootAt) else { return nil }
        c.expect(.keyPath(keyPath), at: base + keyAt)
        let path = keyPath
        return { b in
            let rf = root(b)
            return { try rf($0)[keyPath: path] }
        }
    }
}

extension PredicateExpressions.KeyPath {
    var isRowTest: Bool { Output.self == Bool.self }

    /// A `Bool` property of the input: the test of its byte.
    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        guard Output.self == Bool.self else { return nil }
        if let property = inputProperty(c, at: base), let test = property.scalarTest(ConstantValue(true), .equal) { return { _ in test } }
        return rowPlan(c, at: base) as? (Bindings) -> RowTest
    }

    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        guard Output.self == Bool.self, let property = inputProperty(c, at: base),
              let check = property.fieldCheck(ConstantValue(true), .equal) else { return nil }
        return { _ in [check] }
    }
}

/// Where Swift puts a struct's stored properties: in declaration order, each at the first
/// multiple of its alignment past the one before (resilient types too, as Foundation's are).
/// The planner reads the common nodes' children at offsets computed so: `MemoryLayout.offset(of:)`
/// took a key path, which a fresh process instantiated, with its generic arguments and their
/// conformances, for each node of each shape (W8, Docs/Benchmarks.md). FieldLayoutTests
/// checks each node read this way against `MemoryLayout.offset(of:)`.
enum FieldLayout {
    /// The offset of a field of type `B` that follows a field of type `A` at offset `a`.
    @inline(__always)
    static func after<A, B>(_ a: Int, _: A.Type, _: B.Type) -> Int {
        let end = a + MemoryLayout<A>.size, align = MemoryLayout<B>.alignment
        return (end + align - 1) / align * align
    }
}

extension PredicateExpressions.Equal {
    /// `lhs`, `rhs`: the offsets of the two sides.
    static var sides: (lhs: Int, rhs: Int) { (0, FieldLayout.after(0, LHS.self, RHS.self)) }
}
extension PredicateExpressions.NotEqual {
    static var sides: (lhs: Int, rhs: Int) { (0, FieldLayout.after(0, LHS.self, RHS.self)) }
}
extension PredicateExpressions.Conjunction {
    static var sides: (lhs: Int, rhs: Int) { (0, FieldLayout.after(0, LHS.self, RHS.self)) }
}
extension PredicateExpressions.Disjunction {
    static var sides: (lhs: Int, rhs: Int) { (0, FieldLayout.after(0, LHS.self, RHS.self)) }
}
extension PredicateExpressions.Comparison {
    /// `op`, `lhs`, `rhs`, declared in that order.
    static var fields: (op: Int, lhs: Int, rhs: Int) {
        let l = FieldLayout.after(0, PredicateExpressions.ComparisonOperator.self, LHS.self)
        return (0, l, FieldLayout.after(l, LHS.self, RHS.self))
    }
}
extension PredicateExpressions.KeyPath {
    /// `root`, `keyPath`.
    static var fields: (root: Int, keyPath: Int) { (0, FieldLayout.after(0, Root.self, Swift.KeyPath<Root.Output, Output>.self)) }
}

/// Nodes with two children, for their plans.
extension RowCompiler {
    /// The plans of two children found at `lAt` and `rAt`.
    func children<L: PredicateExpression, R: PredicateExpression>(_ lhs: L, at lAt: Int, _ rhs: R, at rAt: Int)
        -> (lhs: (Bindings) -> RowFunction<L.Output>, l: Int, rhs: (Bindings) -> RowFunction<R.Output>, r: Int)? {
        guard let lf = compile(lhs, at: lAt), let rf = compile(rhs, at: rAt) else { return nil }
        return (lf, lAt, rf, rAt)
    }

    func children<S, L: PredicateExpression, R: PredicateExpression>(_ node: S, at base: Int, _ l: KeyPath<S, L>, _ r: KeyPath<S, R>)
        -> (lhs: (Bindings) -> RowFunction<L.Output>, l: Int, rhs: (Bindings) -> RowFunction<R.Output>, r: Int)? {
        guard let lAt = at(base, l), let rAt = at(base, r),
              let lf = compile(node[keyPath: l], at: lAt), let rf = compile(node[keyPath: r], at: rAt) else { return nil }
        return (lf, lAt, rf, rAt)
    }
}

extension PredicateExpressions.Equal: RowEvaluable {
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        let (lOff, rOff) = Self.sides
        guard let (l, lAt, r, rAt) = c.children(lhs, at: base + lOff, rhs, at: base + rOff) else { return nil }
        let scalar = c.scalarPlan(lhs, at: lAt, rhs, at: rAt, .equal)
        return { b in
            if let fast = scalar?(b) { return fast }
            let lf = l(b), rf = r(b)
            return { try lf($0) == rf($0) }
        }
    }

    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        let (lAt, rAt) = Self.sides
        return c.checkPlan(lhs, at: base + lAt, rhs, at: base + rAt, .equal)
    }
}

extension PredicateExpressions.NotEqual: RowEvaluable {
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        let (lOff, rOff) = Self.sides
        guard let (l, lAt, r, rAt) = c.children(lhs, at: base + lOff, rhs, at: base + rOff) else { return nil }
        let scalar = c.scalarPlan(lhs, at: lAt, rhs, at: rAt, .notEqual)
        return { b in
            if let fast = scalar?(b) { return fast }
            let lf = l(b), rf = r(b)
            return { try lf($0) != rf($0) }
        }
    }

    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        let (lAt, rAt) = Self.sides
        return c.checkPlan(lhs, at: base + lAt, rhs, at: base + rAt, .notEqual)
    }
}

extension PredicateExpressions.Comparison: RowEvaluable {
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        let (opAt, lOff, rOff) = Self.fields
        guard let op = ComparisonOperator(op),
              let (l, lAt, r, rAt) = c.children(lhs, at: base + lOff, rhs, at: base + rOff) else { return nil }
        c.expect(.comparison(self.op), at: base + opAt)
        let scalar = c.scalarPlan(lhs, at: lAt, rhs, at: rAt, op)
        return { b in
            if let fast = scalar?(b) { return fast }
            let lf = l(b), rf = r(b)
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

    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        let (opAt, lAt, rAt) = Self.fields
        guard let op = ComparisonOperator(op) else { return nil }
        c.expect(.comparison(self.op), at: base + opAt)
        return c.checkPlan(lhs, at: base + lAt, rhs, at: base + rAt, op)
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
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        let (lAt, rAt) = Self.sides
        guard let l = c.test(lhs, at: base + lAt), let r = c.test(rhs, at: base + rAt) else { return nil }
        return { b in
            let lf = l(b), rf = r(b)
            return { try lf($0) && rf($0) }
        }
    }

    /// Both sides' checks, in order, when both are made of them.
    func checkPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> [FieldCheck]?)? {
        let (lAt, rAt) = Self.sides
        guard let l = c.checks(lhs, at: base + lAt), let r = c.checks(rhs, at: base + rAt) else { return nil }
        return { b in
            guard let lc = l(b), let rc = r(b) else { return nil }
            return lc + rc
        }
    }
}

extension PredicateExpressions.Disjunction: RowEvaluable {
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        let (lAt, rAt) = Self.sides
        guard let l = c.test(lhs, at: base + lAt), let r = c.test(rhs, at: base + rAt) else { return nil }
        return { b in
            let lf = l(b), rf = r(b)
            return { try lf($0) || rf($0) }
        }
    }
}

extension PredicateExpressions.Negation: RowEvaluable {
    var isRowTest: Bool { true }

    func rowPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowFunction<Bool>)? { testPlan(c, at: base) }

    func testPlan(_ c: RowCompiler, at base: Int) -> ((Bindings) -> RowTest)? {
        guard let w = c.test(wrapped, at: base) else { return nil }   // `wrapped`, its only stored property
        return { b in
            let wf = w(b)
            return { try !wf($0) }
        }
    }
}
