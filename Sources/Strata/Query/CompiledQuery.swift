import Foundation
import StrataEngine

/// A fetch compiled for one shape (QueryShape.swift): for each model it reads (the model and,
/// for a base class, the subclasses in the schema), the plan of its predicate, and what its
/// sort can use. Compiling looks up key paths and chooses fast paths; `runs` checks that a
/// fetch has this shape and binds its own constants. The runs it makes are not generic.
final class CompiledQuery<T: PersistentModel>: @unchecked Sendable {
    private let locations: [(handle: StoreHandle, table: Table)]
    /// For a predicate of the compiled shape: each part's test on records (nil: the predicate
    /// is evaluated on objects) and hints; nil for a predicate of another shape.
    private let bindPredicate: ((PredicateParts) -> [BoundPart]?)?
    private let sortBy: [SortDescriptor<T>]
    private let isSorted: Bool
    /// Per part: what the sort can use (its descriptors' properties, an index).
    private let sorts: [(properties: [Int]?, indexOrder: (index: IndexID, reverse: Bool)?)]
    /// Per part: the properties `propertiesToFetch` names (nil: all), and the key paths it was compiled for.
    private let loading: [[Int]?]
    private let propertiesToFetch: [AnyKeyPath]

    init(_ descriptor: FetchDescriptor<T>, container: ModelContainer, includeSubclasses: Bool) throws {
        let locations = try container.locations(of: T.self, includeSubclasses: includeSubclasses)
        self.locations = locations.map { (handle: $0.0, table: $0.1) }
        bindPredicate = descriptor.predicate.map { CompiledQuery.compile($0, tables: locations.map(\.1)) }
        sortBy = descriptor.sortBy
        isSorted = descriptor.sortCount > 0
        sorts = locations.map { _, table in
            (CompiledQuery.sortProperties(descriptor.sortBy, entity: table.entity), CompiledQuery.indexOrder(descriptor.sortBy, table: table))
        }
        propertiesToFetch = descriptor.loadedKeyPaths
        loading = locations.map { _, table in CompiledQuery.loading(descriptor.loadedKeyPaths, entity: table.entity) }
    }

    /// The properties a partial fetch loads: those `propertiesToFetch` names (key paths that
    /// name no property are ignored, as SwiftData ignores them); nil for all.
    private static func loading(_ keyPaths: [AnyKeyPath], entity: Entity) -> [Int]? {
        guard !keyPaths.isEmpty else { return nil }
        var indexes: [Int] = []
        for keyPath in keyPaths {
            if let p = entity.property(for: keyPath), !indexes.contains(p.index) { indexes.append(p.index) }
        }
        return indexes.count == entity.properties.count ? nil : indexes.sorted()
    }

    /// The plans of a predicate, as a function binding any predicate of its shape: compiled
    /// for each part (its model), they check the shape and read the constants at the offsets
    /// compiling recorded.
    private static func compile(_ predicate: Predicate<T>, tables: [Table]) -> (PredicateParts) -> [BoundPart]? {
        func plan<E: StandardPredicateExpression<Bool>>(_ expression: E) -> [PartPlan] {
            tables.map { table in
                let compiler = RowCompiler(entity: table.entity, input: predicate.variable.key, model: T.self)
                let test = compiler.test(expression, at: 0), hints = compiler.hints(expression, at: 0)
                return PartPlan(layout: compiler.layout, test: test, hints: hints)
            }
        }
        let parts = plan(predicate.expression)
        return { predicate in
            withTreeBytes(predicate.expression) { tree in
                guard parts.allSatisfy({ $0.layout.matches(tree, input: predicate.input) }) else { return nil }
                return parts.map { part in
                    let bindings = part.layout.bindings(tree)
                    return BoundPart(test: part.test?(bindings), hints: part.hints?(bindings) ?? [])
                }
            }
        }
    }

    /// The runs of `descriptor` (whose predicate is `predicate`) in `context`, or nil when the
    /// descriptor has another shape.
    func runs(_ descriptor: FetchDescriptor<T>, predicate: PredicateParts?, context: ModelContext) -> [QueryRun]? {
        // The descriptor's generic parts are read once (each read of a generic value looks up
        // its type's metadata); the runs are not generic.
        var bound: [BoundPart]? = nil
        if let predicate {
            guard let made = bindPredicate?(predicate) else { return nil }
            bound = made
        } else if bindPredicate != nil {
            return nil
        }
        // Counts kept beside the generic arrays: counting a `[SortDescriptor<T>]` here would
        // look up its element type's metadata.
        let sorted = descriptor.sortCount > 0
        if sorted || isSorted {
            guard descriptor.sortBy == self.sortBy else { return nil }
        }
        if !propertiesToFetch.isEmpty, descriptor.loadedKeyPaths != propertiesToFetch { return nil }
        let compare = sorted ? CompiledQuery.compare(descriptor.sortBy) : nil
        // Only a context with unsaved inserts or changes evaluates the predicate on objects.
        var pendingTest: ((AnyObject) throws -> Bool)? = nil
        if let predicate, !context.inserted.isEmpty || !context.changed.isEmpty { pendingTest = predicate.evaluator(T.self) }
        let paging = Paging(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit), includePendingChanges = descriptor.includePendingChanges
        return locations.indices.map { i in
            let (handle, table) = locations[i]
            let test = bound?[i].test, hints = bound?[i].hints ?? []
            var filter = RowFilter.all
            if let test { filter = .record(test) } else if let predicate {
                filter = .object(CompiledQuery.objectFilter(predicate.evaluator(T.self), table: table, handle: handle, context: context))
            }
            return QueryRun(handle: handle, table: table, filter: filter,
                            source: QueryPlanner.source(hints: hints, table: table, storeIdentifier: handle.identifier),
                            sort: compare.map { ResultSort(compare: $0, properties: sorts[i].properties, indexOrder: sorts[i].indexOrder) },
                            paging: paging, includePendingChanges: includePendingChanges, pendingTest: pendingTest,
                            loading: loading[i],
                            storageQuery: handle.storage.evaluatesQueries ? QueryPlanner.storageQuery(hints: hints, table: table) : nil)
        }
    }

    /// Foundation's order of two objects by the descriptors.
    private static func compare(_ sortBy: [SortDescriptor<T>]) -> (AnyObject, AnyObject) -> ComparisonResult {
        { a, b in
            let x = unsafeDowncast(a, to: T.self), y = unsafeDowncast(b, to: T.self)
            for d in sortBy {
                let order = d.compare(x, y)
                if order != .orderedSame { return order }
            }
            return .orderedSame
        }
    }

    /// The slow path: Foundation's `Predicate.evaluate` on an object made from the record. A
    /// model with relationships or external values is evaluated on its registered object, so
    /// that key paths through relationships can load the related objects.
    private static func objectFilter(_ evaluate: @escaping (AnyObject) throws -> Bool, table: Table, handle: StoreHandle,
                                     context: ModelContext) -> (RowID, RecordView) throws -> Bool {
        if table.entity.needsRegisteredObjects {
            return { [unowned context] row, view in try evaluate(try context.object(row, view: view, table: table, handle: handle)) }
        }
        return { row, view in try evaluate(try ModelContext.scratchObject(row, view: view, entity: table.entity, handle: handle)) }
    }

    /// The properties the sort descriptors read, when each reads one property directly.
    private static func sortProperties(_ sortBy: [SortDescriptor<T>], entity: Entity) -> [Int]? {
        var indexes: [Int] = []
        for d in sortBy {
            guard let keyPath = d.keyPath, let property = entity.property(for: keyPath) else { return nil }
            if !indexes.contains(property.index) { indexes.append(property.index) }
        }
        return indexes
    }

    /// Results in the order of an index, when one sort descriptor names an indexed property
    /// whose index order is Foundation's order.
    private static func indexOrder(_ sortBy: [SortDescriptor<T>], table: Table) -> (index: IndexID, reverse: Bool)? {
        guard sortBy.count == 1, let sort = sortBy.first, let keyPath = sort.keyPath,
              let property = table.entity.property(for: keyPath), property.keyOrderIsValueOrder,
              let (index, _) = table.singleIndex[property.index] else { return nil }
        return (index, sort.order == .reverse)
    }
}

// One model's part of a compiled predicate, and the same bound to a fetch's constants. Structs,
// not tuples: a function kept in an array of tuples is stored at its most general abstraction,
// and every record's test then went through six reabstraction thunks.
private struct PartPlan {
    let layout: TreeLayout
    let test: ((Bindings) -> RowTest)?
    let hints: HintPlan?
}

struct BoundPart {
    let test: RowTest?
    let hints: [IndexHint]
}

/// The compiled queries of a container: by model, the subclasses flag, the type of the
/// predicate's expression tree and the number of sort descriptors; each candidate then checks
/// the rest of the shape itself. At most `capacity`, the oldest going first.
final class QueryCache: @unchecked Sendable {
    static let capacity = 256

    struct Key: Hashable {
        let model: ObjectIdentifier
        let includeSubclasses: Bool
        let expression: ObjectIdentifier?
        let sortCount: Int
        let partial: Bool
    }

    private let lock = NSLock()
    private var entries: [Key: [AnyObject]] = [:]
    private var order: [Key] = []
    private var total = 0

    /// The runs of `descriptor`, with the plan compiled for its shape (compiled now if none is cached).
    func runs<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool, context: ModelContext) throws -> [QueryRun] {
        let predicate = descriptor.predicateParts
        let key = Key(model: ObjectIdentifier(T.self), includeSubclasses: includeSubclasses,
                      expression: predicate?.expressionType, sortCount: descriptor.sortCount,
                      partial: !descriptor.loadedKeyPaths.isEmpty)
        lock.lock()
        let candidates = entries[key] ?? []
        lock.unlock()
        for candidate in candidates {
            if let runs = unsafeDowncast(candidate, to: CompiledQuery<T>.self).runs(descriptor, predicate: predicate, context: context) { return runs }
        }
        let made = try CompiledQuery(descriptor, container: context.container, includeSubclasses: includeSubclasses)
        guard let runs = made.runs(descriptor, predicate: predicate, context: context) else {
            preconditionFailure("A query compiled for a fetch does not answer for it.")
        }
        insert(made, key)
        return runs
    }

    private func insert(_ query: AnyObject, _ key: Key) {
        lock.lock()
        defer { lock.unlock() }
        entries[key, default: []].append(query)
        order.append(key)
        total += 1
        while total > QueryCache.capacity, !order.isEmpty {
            let oldest = order.removeFirst()
            if entries[oldest]?.isEmpty == false { entries[oldest]?.removeFirst(); total -= 1 }
            if entries[oldest]?.isEmpty == true { entries.removeValue(forKey: oldest) }
        }
    }

    /// How many compiled queries are cached (for tests).
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return total
    }
}
