import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The query planner's second half: which rows to look at. Conditions on indexed properties at
// the top of the predicate (IndexHints.swift) narrow the rows read to index lookups or ranges;
// the whole predicate is then still checked on every row read, so an index only ever saves
// work and never changes an answer. (One exception, where the check could not fail: a
// predicate that is only `property == constant`, on a unique index whose keys are equal
// exactly when the values are; `QueryPart.directLookup`.) Planning reads nothing: the executor
// (QueryExecutor.swift) does the lookups. Which conditions have an index is the shape's, and is
// settled when the shape is compiled (`SourcePlan`); a fetch binds only those, and picks the
// cheapest its values allow.

/// Where the candidate rows of a query come from.
enum RowSource {
    /// Every row of the collection, in row order.
    case scan
    /// These rows (from identifiers), in row order.
    case rows([RowID])
    /// The row a unique index holds for this key, if any.
    case lookup(IndexID, [UInt8])
    /// The rows a unique index holds for these keys (each at most one).
    case lookups(IndexID, [[UInt8]])
    /// The rows of these index ranges (merged and put in row order).
    case ranges(IndexID, [KeyRange])
}

/// One model's conditions that an index can answer, found when a shape is compiled: each with
/// the index of its property in this model's table (none for identifiers, which name rows).
struct SourcePlan {
    struct Candidate {
        let hint: HintPlan
        let index: (id: IndexID, unique: Bool)?
    }
    let candidates: [Candidate]

    init(hints: [HintPlan], table: Table) {
        candidates = hints.compactMap { hint in
            guard let p = hint.property else { return Candidate(hint: hint, index: nil) }
            return table.singleIndex[p.index].map { Candidate(hint: hint, index: $0) }
        }
    }

    /// The hints of a fetch's constants, for a backend that evaluates queries.
    func hints(_ b: Bindings) -> [IndexHint] { candidates.compactMap { $0.hint.bind(b) } }
}

enum QueryPlanner {
    /// The cheapest source `plan` allows with a fetch's constants, for `table` of the store
    /// `handle`. (The store's identifier is read only for identifiers: a string retained and
    /// released per fetch otherwise, W3.)
    static func source(_ plan: SourcePlan, _ b: Bindings, table: Table, handle: StoreHandle) -> RowSource {
        // One candidate (a fetch by one indexed property, the usual case): its source, not
        // weighed against others (the copies of the best so far cost a point fetch about 100
        // instructions, W3).
        if plan.candidates.count == 1 {
            let candidate = plan.candidates[0]
            guard let hint = candidate.hint.bind(b),
                  let (_, source) = choice(hint, candidate.index, table: table, handle: handle) else { return .scan }
            return source
        }
        var best: (cost: Int, source: RowSource)? = nil
        for candidate in plan.candidates {
            guard let hint = candidate.hint.bind(b),
                  let (cost, source) = choice(hint, candidate.index, table: table, handle: handle),
                  cost < (best?.cost ?? Int.max) else { continue }
            best = (cost, source)
        }
        return best?.source ?? .scan
    }

    /// The source a hint gives and what it costs (roughly, in rows read); nil if its values
    /// cannot be keys of the index.
    private static func choice(_ hint: IndexHint, _ index: (id: IndexID, unique: Bool)?, table: Table,
                               handle: StoreHandle) -> (Int, RowSource)? {
        // One switch: each look at the hint's payload (an `if case`, `hint.property`) copied it.
        switch hint {
        case .identifiers(let ids):
            // The rows these identifiers name in this model's table of this store.
            let storeIdentifier = handle.identifier
            let rows = ids.filter { $0.entityName == table.entity.name && $0.storeIdentifier == storeIdentifier && $0.rowID > 0 }
                .map { RowID($0.rowID) }
            return (0, .rows(Array(Set(rows)).sorted()))
        case .equal(let p, let value):
            // (Keys as the index holds them: a long one in its form, equal only for equal values,
            // a SHA-256 collision aside, which the predicate checked on the row would catch.)
            guard let (index, unique) = index, let exact = p.keyOfConstant(value) else { return nil }
            let key = KeyEncoding.storedForm(exact)
            return unique ? (1, .lookup(index, key)) : (10, .ranges(index, [.exact(key)]))
        case .oneOf(let p, let values):
            guard let (index, unique) = index else { return nil }
            let keys = values.compactMap { p.keyOfConstant(ConstantValue($0)).map(KeyEncoding.storedForm) }
            guard keys.count == values.count else { return nil }
            return unique ? (keys.count + 1, .lookups(index, keys)) : (10 * keys.count + 10, .ranges(index, keys.map { KeyRange.exact($0) }))
        case .range(let p, let lower, let li, let upper, let ui):
            guard let (index, _) = index, p.keyOrderIsValueOrder else { return nil }
            let lk = lower.flatMap { p.keyOfConstant($0) }
            let uk = upper.flatMap { p.keyOfConstant($0) }
            if (lower != nil && lk == nil) || (upper != nil && uk == nil) { return nil }
            // A bound longer than 2016 bytes is widened to the keys sharing its first 2016 (the
            // predicate, checked on every row, keeps the right ones). Types whose key order is
            // value order have keys of a few bytes, so this is for completeness.
            return (1000, .ranges(index, [KeyEncoding.storedRange(KeyRange(lower: lk, lowerInclusive: li, upper: uk, upperInclusive: ui))]))
        case .prefix(let p, let prefix):
            guard let (index, _) = index, p.valueType == String.self, prefix.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
            // Up to 2016 bytes exactly the keys (long forms keep their first 2016); a longer
            // prefix, those sharing its first 2016 bytes, checked by the predicate.
            return (500, .ranges(index, [KeyRange(prefix: KeyEncoding.storedPrefix(KeyEncoding.encode(prefix, asPrefix: true)))]))
        }
    }

    /// The hints as terms a backend that evaluates queries can select rows with (nil: none).
    static func storageQuery(hints: [IndexHint], table: Table) -> StorageQuery? {
        guard let collection = table.collection else { return nil }
        var terms: [StorageQuery.Term] = []
        for hint in hints {
            guard let p = hint.property, let (index, _) = table.singleIndex[p.index] else { continue }
            func term(_ comparison: StorageQuery.Term.Comparison, _ keys: [[UInt8]]) {
                terms.append(StorageQuery.Term(index: index, property: p.name, comparison: comparison, keys: keys))
            }
            switch hint {
            case .equal(_, let value):
                if let key = p.keyOfConstant(value) { term(.equal, [KeyEncoding.storedForm(key)]) }
            case .oneOf(_, let values):
                let keys = values.compactMap { p.keyOfConstant(ConstantValue($0)).map(KeyEncoding.storedForm) }
                if keys.count == values.count { term(.oneOf, keys) }
            case .range(_, let lower, let li, let upper, let ui):
                guard p.keyOrderIsValueOrder else { continue }
                let range = KeyEncoding.storedRange(KeyRange(lower: lower.flatMap { p.keyOfConstant($0) }, lowerInclusive: li,
                                                             upper: upper.flatMap { p.keyOfConstant($0) }, upperInclusive: ui))
                if let key = range.lower { term(range.lowerInclusive ? .greaterOrEqual : .greater, [key]) }
                if let key = range.upper { term(range.upperInclusive ? .lessOrEqual : .less, [key]) }
            case .prefix(_, let prefix):
                guard p.valueType == String.self, prefix.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
                term(.prefix, [KeyEncoding.storedPrefix(KeyEncoding.encode(prefix, asPrefix: true))])
            case .identifiers:
                continue
            }
        }
        return terms.isEmpty ? nil : StorageQuery(collection: collection, terms: terms)
    }
}
