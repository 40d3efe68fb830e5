import Foundation
import Testing
@testable import Strata

/// The planner reads the common predicate nodes' children at offsets it computes from their
/// types (`FieldLayout`), not with key paths. These must be Foundation's own layout of each
/// node, for children of every size and alignment: a wrong offset would read a constant from
/// the wrong bytes.
@Suite struct FieldLayoutTests {
    final class Item {
        var flag = false
        var small: Int8 = 0
        var count = 0
        var name = ""
        var when = Date()
        var id = UUID()
    }

    typealias E = PredicateExpressions
    typealias Input = E.Variable<Item>
    // Children of several sizes and alignments: 1 byte, 8, 16 (a String), 16 (a UUID, 1-aligned).
    typealias FlagPath = E.KeyPath<Input, Bool>
    typealias SmallPath = E.KeyPath<Input, Int8>
    typealias NamePath = E.KeyPath<Input, String>
    typealias IDPath = E.KeyPath<Input, UUID>
    typealias CountPath = E.KeyPath<Input, Int>
    typealias FlagValue = E.Value<Bool>
    typealias SmallValue = E.Value<Int8>
    typealias CountValue = E.Value<Int>
    typealias NameValue = E.Value<String>
    typealias IDValue = E.Value<UUID>
    typealias OptionalValue = E.Value<Int?>

    static func offset<S, F>(_ keyPath: KeyPath<S, F>) -> Int? { MemoryLayout<S>.offset(of: keyPath) }

    static func checkSides<L, R>(_: L.Type, _: R.Type) where L: PredicateExpression, R: PredicateExpression, L.Output: Equatable, L.Output == R.Output {
        typealias Eq = E.Equal<L, R>
        #expect(Eq.sides.lhs == offset(\Eq.lhs) && Eq.sides.rhs == offset(\Eq.rhs), "Equal<\(L.self), \(R.self)>")
        typealias Ne = E.NotEqual<L, R>
        #expect(Ne.sides.lhs == offset(\Ne.lhs) && Ne.sides.rhs == offset(\Ne.rhs), "NotEqual<\(L.self), \(R.self)>")
    }

    static func checkComparison<L, R>(_: L.Type, _: R.Type) where L: PredicateExpression, R: PredicateExpression, L.Output: Comparable, L.Output == R.Output {
        typealias C = E.Comparison<L, R>
        let f = C.fields
        #expect(f.op == offset(\C.op) && f.lhs == offset(\C.lhs) && f.rhs == offset(\C.rhs), "Comparison<\(L.self), \(R.self)>")
    }

    static func checkLogic<L, R>(_: L.Type, _: R.Type) where L: PredicateExpression, R: PredicateExpression, L.Output == Bool, R.Output == Bool {
        typealias And = E.Conjunction<L, R>
        #expect(And.sides.lhs == offset(\And.lhs) && And.sides.rhs == offset(\And.rhs), "Conjunction<\(L.self), \(R.self)>")
        typealias Or = E.Disjunction<L, R>
        #expect(Or.sides.lhs == offset(\Or.lhs) && Or.sides.rhs == offset(\Or.rhs), "Disjunction<\(L.self), \(R.self)>")
    }

    @Test func computedOffsetsAreFoundationsLayout() {
        Self.checkSides(SmallPath.self, SmallValue.self)
        Self.checkSides(SmallValue.self, SmallPath.self)
        Self.checkSides(NamePath.self, NameValue.self)
        Self.checkSides(NameValue.self, NamePath.self)
        Self.checkSides(IDValue.self, IDPath.self)
        Self.checkSides(IDPath.self, IDValue.self)
        Self.checkSides(OptionalValue.self, OptionalValue.self)
        Self.checkSides(CountPath.self, CountValue.self)

        Self.checkComparison(SmallPath.self, SmallValue.self)
        Self.checkComparison(SmallValue.self, SmallPath.self)
        Self.checkComparison(NamePath.self, NameValue.self)
        Self.checkComparison(NameValue.self, NamePath.self)
        Self.checkComparison(CountValue.self, CountValue.self)

        typealias FlagEq = E.Equal<FlagPath, FlagValue>
        typealias SmallLess = E.Comparison<SmallValue, SmallPath>
        typealias NameEq = E.Equal<NamePath, NameValue>
        Self.checkLogic(FlagPath.self, FlagValue.self)
        Self.checkLogic(FlagValue.self, FlagPath.self)
        Self.checkLogic(FlagEq.self, SmallLess.self)
        Self.checkLogic(SmallLess.self, NameEq.self)
        Self.checkLogic(E.Negation<FlagPath>.self, NameEq.self)

        #expect(FlagPath.fields.root == Self.offset(\FlagPath.root) && FlagPath.fields.keyPath == Self.offset(\FlagPath.keyPath))
        #expect(NamePath.fields.root == Self.offset(\NamePath.root) && NamePath.fields.keyPath == Self.offset(\NamePath.keyPath))
        // Roots other than the input: a 16-byte value, a 1-byte one.
        typealias OfString = E.KeyPath<NameValue, Int>
        #expect(OfString.fields.root == Self.offset(\OfString.root) && OfString.fields.keyPath == Self.offset(\OfString.keyPath))
        typealias OfSmall = E.KeyPath<SmallValue, Int8>
        #expect(OfSmall.fields.root == Self.offset(\OfSmall.root) && OfSmall.fields.keyPath == Self.offset(\OfSmall.keyPath))

        // The nodes read at offset 0: their only stored property.
        #expect(Self.offset(\Input.key) == 0)
        #expect(Self.offset(\NameValue.value) == 0 && Self.offset(\SmallValue.value) == 0)
        #expect(Self.offset(\E.Negation<FlagPath>.wrapped) == 0)
    }
}
