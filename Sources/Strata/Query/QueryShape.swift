import Foundation
@_spi(StorageBackend) import StrataRecords

// The shape of a fetch: what stays the same between two fetches that differ only in the
// values a predicate captured. It is the model, whether subclasses are included, the type of
// the predicate's expression tree (which spells out every node type; the cache's key), what
// the tree's compiled nodes hold besides children and constants (key paths, operators, that a
// key path starts at the predicate's input), the sort descriptors and `propertiesToFetch`. A
// plan compiled for a shape answers for any fetch of that shape, with the fetch's own
// constants bound (CompiledQuery.swift); for a fetch of another shape it answers nothing.
//
// An expression tree is one value laid out inline in memory. Compiling records the offset of
// each constant and of each thing the shape holds, so that checking a later tree and reading
// its constants read bytes at known offsets, without walking generic node types.

/// Where a compiled expression tree keeps its constants, and what it must hold to have the
/// shape it was compiled for.
struct TreeLayout {
    /// What the shape holds at an offset.
    enum Check {
        /// The predicate's input variable (a key path starts there).
        case input
        case keyPath(AnyKeyPath)
        case comparison(PredicateExpressions.ComparisonOperator)
        case arithmetic(PredicateExpressions.ArithmeticOperator)
    }

    /// A constant of the tree: where it is and its type. (No closure to read it: copying a
    /// constant, as a bound plan does a few times, then retains nothing.)
    typealias Constant = ConstantSlot


    private(set) var constants: [Constant] = []
    /// What `matches` checks, and where in the tree: two lists side by side (a list of pairs
    /// was two more metadata for a fresh process's first fetch to make, W8).
    private var checkOffsets: [Int] = []
    private var checks: [Check] = []

    /// The slot of the constant of type `T` at `offset`.
    mutating func constant<T>(_ type: T.Type, at offset: Int) -> Int {
        if let slot = constants.firstIndex(where: { $0.offset == offset }) { return slot }
        constants.append(Constant(offset: offset, type: T.self, readsInPlace: !_isOptional(T.self)))
        return constants.count - 1
    }

    mutating func expect(_ check: Check, at offset: Int) {
        if !checkOffsets.contains(offset) {
            checkOffsets.append(offset)
            checks.append(check)
        }
    }

    /// True when the tree at `tree` (of the compiled type) holds what the shape holds.
    func matches(_ tree: UnsafeRawPointer, input: PredicateExpressions.VariableID) -> Bool {
        for (offset, check) in zip(checkOffsets, checks) {
            let at = tree + offset
            switch check {
            case .input:
                guard at.assumingMemoryBound(to: PredicateExpressions.VariableID.self).pointee == input else { return false }
            case .keyPath(let expected):
                let found = at.assumingMemoryBound(to: AnyKeyPath.self).pointee
                guard found === expected || found == expected else { return false }
            case .comparison(let op):
                guard at.assumingMemoryBound(to: PredicateExpressions.ComparisonOperator.self).pointee == op else { return false }
            case .arithmetic(let op):
                guard at.assumingMemoryBound(to: PredicateExpressions.ArithmeticOperator.self).pointee == op else { return false }
            }
        }
        return true
    }

    /// The constants of the tree at `tree` (which must have this shape).
    func bindings(_ tree: UnsafeRawPointer) -> Bindings {
        Bindings(tree: tree, constants: constants)
    }
}

/// The constants of one predicate, in the slots compiling gave them: read from its expression
/// tree when a plan asks for them, so only while the tree's bytes are lent (`withTreeBytes`).
/// A plan reads them when it is bound, never from the record functions it returns.
struct Bindings {
    let tree: UnsafeRawPointer
    let constants: [TreeLayout.Constant]

    /// The constant in `slot`, as `Any`.
    func value(_ slot: Int) -> Any? { constants[slot].read(tree) }

    /// The constant in `slot`, to be read as the type a plan wants.
    func constant(_ slot: Int) -> ConstantValue { ConstantValue(tree + constants[slot].offset, constants[slot]) }

    /// The constant in `slot`, which has type `C` (the type compiling found there).
    func read<C>(_ slot: Int, as _: C.Type) -> C {
        (tree + constants[slot].offset).assumingMemoryBound(to: C.self).pointee
    }
}

/// Calls `body` with the bytes of a predicate's expression tree.
func withTreeBytes<R>(_ expression: any StandardPredicateExpression<Bool>, _ body: (UnsafeRawPointer) -> R) -> R {
    func open<E: StandardPredicateExpression<Bool>>(_ e: E) -> R {
        withUnsafePointer(to: e) { body(UnsafeRawPointer($0)) }
    }
    return open(expression)
}
