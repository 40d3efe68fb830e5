import Foundation
import StrataEngine

// The query planner's second half: which rows to look at. Conditions on indexed properties at
// the top of the predicate (IndexHints.swift) narrow the rows read to index lookups or ranges;
// the whole predicate is then still checked on every row read, so an index only ever saves
// work and never changes an answer. Planning reads nothing: the executor
// (QueryExecutor.swift) does the lookups.

/// Where the candidate rows of a query come from.
enum RowSource {
    /// Every row of the collection, in row order.
    case scan
    /// These rows (from identifiers), in row order.
    case rows([RowID])
    /// The rows a unique index holds for these keys (each at most one).
    case lookups(IndexID, [[UInt8]])
    /// The rows of these index ranges (merged and put in row order).
    case ranges(IndexID, [KeyRange])
}

enum QueryPlanner {
    /// The cheapest source the hints allow for `table` of the store named `storeIdentifier`.
    static func source(hints: [IndexHint], table: Table, storeIdentifier: String?) -> RowSource {
        var best: (cost: Int, source: RowSource)? = nil
        func consider(_ cost: Int, _ source: @autoclosure () -> RowSource) {
            if cost < (best?.cost ?? Int.max) { best = (cost, source()) }
        }
        for hint in hints {
            if case .identifiers(let ids) = hint {
                // The rows these identifiers name in this model's table of this store.
                let rows = ids.filter { $0.entityName == table.entity.name && $0.storeIdentifier == storeIdentifier && $0.rowID > 0 }
                    .map { RowID($0.rowID) }
                consider(0, .rows(Array(Set(rows)).sorted()))
                continue
            }
            guard let p = hint.property, let (index, unique) = table.singleIndex[p.index] else { continue }
            switch hint {
            case .equal(_, let value):
                guard let key = p.keyOfConstant(value) else { continue }
                if unique { consider(1, .lookups(index, [key])) } else { consider(10, .ranges(index, [.exact(key)])) }
            case .oneOf(_, let values):
                let keys = values.compactMap { p.keyOfConstant($0) }
                guard keys.count == values.count else { continue }
                if unique { consider(keys.count + 1, .lookups(index, keys)) } else { consider(10 * keys.count + 10, .ranges(index, keys.map { KeyRange.exact($0) })) }
            case .range(_, let lower, let li, let upper, let ui):
                guard p.keyOrderIsValueOrder else { continue }
                let lk = lower.flatMap { p.keyOfConstant($0) }
                let uk = upper.flatMap { p.keyOfConstant($0) }
                if (lower != nil && lk == nil) || (upper != nil && uk == nil) { continue }
                consider(1000, .ranges(index, [KeyRange(lower: lk, lowerInclusive: li, upper: uk, upperInclusive: ui)]))
            case .prefix(_, let prefix):
                guard p.valueType == String.self, prefix.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
                consider(500, .ranges(index, [KeyRange(prefix: KeyEncoding.encode(prefix, asPrefix: true))]))
            case .identifiers:
                continue
            }
        }
        return best?.source ?? .scan
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
                if let key = p.keyOfConstant(value) { term(.equal, [key]) }
            case .oneOf(_, let values):
                let keys = values.compactMap { p.keyOfConstant($0) }
                if keys.count == values.count { term(.oneOf, keys) }
            case .range(_, let lower, let li, let upper, let ui):
                guard p.keyOrderIsValueOrder else { continue }
                if let lower, let key = p.keyOfConstant(lower) { term(li ? .greaterOrEqual : .greater, [key]) }
                if let upper, let key = p.keyOfConstant(upper) { term(ui ? .lessOrEqual : .less, [key]) }
            case .prefix(_, let prefix):
                guard p.valueType == String.self, prefix.utf8.allSatisfy({ $0 < 0x80 }) else { continue }
                term(.prefix, [KeyEncoding.encode(prefix, asPrefix: true)])
            case .identifiers:
                continue
            }
        }
        return terms.isEmpty ? nil : StorageQuery(collection: collection, terms: terms)
    }
}
