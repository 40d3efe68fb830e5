import Foundation
import StrataEngine

// The query planner's second half: which rows to look at. Conditions on indexed properties
// at the top of the predicate (joined by `&&`) narrow the rows read to an index lookup or
// range; the whole predicate is then still checked on every row read, so an index only ever
// saves work and never changes an answer.

/// A condition the predicate puts on one property, usable with an index.
enum IndexHint {
    case equal(AnyProperty, Any)
    case oneOf(AnyProperty, [Any])
    case range(AnyProperty, lower: Any?, lowerInclusive: Bool, upper: Any?, upperInclusive: Bool)
    case prefix(AnyProperty, String)
    /// The object's `persistentModelID` is one of these.
    case identifiers([PersistentIdentifier])

    var property: AnyProperty? {
        switch self {
        case .equal(let p, _), .oneOf(let p, _), .range(let p, _, _, _, _), .prefix(let p, _): p
        case .identifiers: nil
        }
    }
}

protocol IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint]
}

extension PredicateExpressions.Conjunction: IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint] {
        ((lhs as? any IndexHinting)?.indexHints(c) ?? []) + ((rhs as? any IndexHinting)?.indexHints(c) ?? [])
    }
}

extension PredicateExpressions.Equal: IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint] {
        if c.isIdentifier(lhs), let v = c.constant(rhs) { return [.identifiers((v as? PersistentIdentifier).map { [$0] } ?? [])] }
        if c.isIdentifier(rhs), let v = c.constant(lhs) { return [.identifiers((v as? PersistentIdentifier).map { [$0] } ?? [])] }
        if let p = c.inputProperty(lhs), let v = c.constant(rhs), let value = v { return [.equal(p, value)] }
        if let p = c.inputProperty(rhs), let v = c.constant(lhs), let value = v { return [.equal(p, value)] }
        return []
    }
}

extension PredicateExpressions.Comparison: IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint] {
        if let p = c.inputProperty(lhs), let v = c.constant(rhs), let value = v {
            switch op {
            case .lessThan: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: false)]
            case .lessThanOrEqual: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: true)]
            case .greaterThan: return [.range(p, lower: value, lowerInclusive: false, upper: nil, upperInclusive: false)]
            case .greaterThanOrEqual: return [.range(p, lower: value, lowerInclusive: true, upper: nil, upperInclusive: false)]
            @unknown default: return []
            }
        }
        if let p = c.inputProperty(rhs), let v = c.constant(lhs), let value = v {
            switch op {
            case .lessThan: return [.range(p, lower: value, lowerInclusive: false, upper: nil, upperInclusive: false)]
            case .lessThanOrEqual: return [.range(p, lower: value, lowerInclusive: true, upper: nil, upperInclusive: false)]
            case .greaterThan: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: false)]
            case .greaterThanOrEqual: return [.range(p, lower: nil, lowerInclusive: true, upper: value, upperInclusive: true)]
            @unknown default: return []
            }
        }
        return []
    }
}

extension PredicateExpressions.SequenceContains: IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint] {
        if c.isIdentifier(element), let v = c.constant(sequence), let seq = v as? any Sequence {
            return [.identifiers(anyElements(seq).compactMap { $0 as? PersistentIdentifier })]
        }
        guard let p = c.inputProperty(element), let v = c.constant(sequence), let seq = v as? any Sequence else { return [] }
        return [.oneOf(p, anyElements(seq))]
    }
}

extension PredicateExpressions.SequenceStartsWith: IndexHinting {
    func indexHints(_ c: RowCompiler) -> [IndexHint] {
        guard let p = c.inputProperty(base), let v = c.constant(prefix), let s = v as? String else { return [] }
        return [.prefix(p, s)]
    }
}

/// Where the candidate rows of a query come from.
enum RowSource {
    /// Every row of the collection, in row order.
    case scan
    /// These rows (from unique-index lookups), in row order.
    case rows([RowID])
    /// The rows of these index ranges (merged and put in row order).
    case ranges(IndexID, [KeyRange])
}

enum QueryPlanner {
    /// The cheapest source the hints allow. `storeIdentifier` names the table's store, for
    /// identifiers.
    static func source(hints: [IndexHint], table: Table, storeIdentifier: String?, tx: ReadTransaction) throws -> RowSource {
        var best: (cost: Int, source: () throws -> RowSource)? = nil
        func consider(_ cost: Int, _ make: @escaping () throws -> RowSource) {
            if cost < (best?.cost ?? Int.max) { best = (cost, make) }
        }
        for hint in hints {
            if case .identifiers(let ids) = hint {
                // The rows these identifiers name in this model's table of this store.
                let rows = ids.filter { $0.entityName == table.entity.name && $0.storeIdentifier == storeIdentifier && $0.rowID > 0 }
                    .map { RowID($0.rowID) }
                consider(0) { .rows(Array(Set(rows)).sorted()) }
                continue
            }
            guard let p = hint.property, let (index, unique) = table.singleIndex[p.index] else { continue }
            switch hint {
            case .equal(_, let value):
                guard let key = p.indexKey(forAny: value) else { continue }
                if unique {
                    consider(1) { try tx.lookup(key, in: index).map { .rows([$0]) } ?? .rows([]) }
                } else {
                    consider(10) { .ranges(index, [.exact(key)]) }
                }
            case .oneOf(_, let values):
                let keys = values.compactMap { p.indexKey(forAny: $0) }
                guard keys.count == values.count else { continue }
                if unique {
                    consider(keys.count + 1) {
                        .rows(Array(Set(try keys.compactMap { try tx.lookup($0, in: index) })).sorted())
                    }
                } else {
                    consider(10 * keys.count + 10) { .ranges(index, keys.map { KeyRange.exact($0) }) }
                }
            case .range(_, let lower, let li, let upper, let ui):
                guard p.keyPreservesOrder else { continue }
                let lk = lower.flatMap { p.indexKey(forAny: $0) }
                let uk = upper.flatMap { p.indexKey(forAny: $0) }
                if (lower != nil && lk == nil) || (upper != nil && uk == nil) { continue }
                consider(1000) { .ranges(index, [KeyRange(lower: lk, lowerInclusive: li, upper: uk, upperInclusive: ui)]) }
            case .prefix(_, let prefix):
                guard p.valueType == String.self, prefix.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
                consider(500) { .ranges(index, [KeyRange(prefix: KeyEncoding.encode(prefix, asPrefix: true))]) }
            case .identifiers:
                continue
            }
        }
        return try best?.source() ?? .scan
    }
}

private func anyElements<S: Sequence>(_ sequence: S) -> [Any] { sequence.map { $0 as Any } }
