import Foundation
import StrataEngine
import Synchronization
@_spi(StorageBackend) import StrataRecords

/// A fetch compiled for one shape (QueryShape.swift): for each model it reads (the model and,
/// for a base class, the subclasses in the schema), the plan of its predicate, and what its
/// sort can use. Compiling looks up key paths and chooses fast paths; `runs` checks that a
/// fetch has this shape and binds its own constants. The runs it makes are not generic.
final class CompiledQuery<T: PersistentModel>: @unchecked Sendable {
    /// Per model read: where it is, and (with a predicate) its part of the predicate's plan.
    private let parts: [QueryPart]
    /// True when a part is a custom store's (asked with the descriptor itself).
    private let hasCustomStore: Bool
    private let hasPredicate: Bool
    private let sortBy: [SortDescriptor<T>]
    private let isSorted: Bool
    /// The key paths of `propertiesToFetch` it was compiled for.
    private let propertiesToFetch: [AnyKeyPath]

    /// (`borrowing`: an initializer takes its arguments owned, and the caller's copy of the
    /// descriptor copied its key-path box's optional through metadata made for it alone, W8.)
    init(_ descriptor: borrowing FetchDescriptor<T>, container: ModelContainer, includeSubclasses: Bool) throws {
        // The predicate's parts, not `descriptor.predicate`: that is a cast to a `Predicate<T>?`,
        // whose copies went through metadata the runtime made for it alone (W8).
        let predicate = descriptor.predicateParts, sortBy = descriptor.sortBy
        var parts: [QueryPart] = []
        for (handle, table) in try container.locations(of: T.self, includeSubclasses: includeSubclasses) {
            // Not `predicate.map`: a closure that passes through a generic function's result
            // comes back wrapped in reabstraction thunks, which every record's test then ran.
            var plan = QueryPart.Plan()
            if let predicate { plan = CompiledQuery.plan(predicate, table: table, testsDirectLookup: handle.custom != nil) }
            parts.append(QueryPart(handle: handle, table: table, layout: plan.layout, test: plan.test, checks: plan.checks,
                                   source: SourcePlan(hints: plan.hints, table: table), directLookup: CompiledQuery.directLookup(plan.hints, table: table),
                                   sortProperties: CompiledQuery.sortProperties(sortBy, entity: table.entity),
                                   indexOrder: CompiledQuery.indexOrder(sortBy, table: table),
                                   loading: CompiledQuery.loading(descriptor.loadedKeyPaths, entity: table.entity)))
        }
        self.parts = parts
        hasCustomStore = parts.contains { $0.handle.custom != nil }
        hasPredicate = predicate != nil
        self.sortBy = sortBy
        isSorted = descriptor.sortCount > 0
        propertiesToFetch = descriptor.loadedKeyPaths
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

    /// A predicate's plan for one model: where its constants are, its test on records and the
    /// conditions an index may answer. Without `testsDirectLookup`, a predicate
    /// that `directLookup` answers gets no record test: its fetches read the index's row,
    /// untested, and the rare one that cannot (with a sort) tests the one row the index gives
    /// on its object. (Compiling the test was a fresh process's first fetch's largest part
    /// after the `#Predicate` itself, W8: Docs/Benchmarks.md, "Costs".) A custom store's
    /// tests are compiled always: its fetches may test the rows it answers.
    private static func plan(_ predicate: PredicateParts, table: Table, testsDirectLookup: Bool) -> QueryPart.Plan {
        func plan<E: StandardPredicateExpression<Bool>>(_ expression: E) -> QueryPart.Plan {
            let compiler = RowCompiler(entity: table.entity, input: predicate.input, model: T.self)
            let hints = compiler.hints(expression, at: 0)
            if !testsDirectLookup, directLookup(hints, table: table) != nil {
                return QueryPart.Plan(layout: compiler.layout, test: nil, checks: nil, hints: hints)
            }
            let test = compiler.test(expression, at: 0)
            let checks = test == nil ? nil : compiler.checks(expression, at: 0)
            return QueryPart.Plan(layout: compiler.layout, test: test, checks: checks, hints: hints)
        }
        return plan(predicate.expression)
    }

    /// `property == constant` as the whole predicate, on a unique index of exact keys: the row
    /// the index holds for the constant's key is the answer (when the constant makes a key;
    /// otherwise the rows are tested).
    private static func directLookup(_ hints: [HintPlan], table: Table) -> QueryPart.DirectLookup? {
        guard hints.count == 1, let p = hints[0].property, let slot = hints[0].wholeExactEqualitySlot,
              let (index, unique) = table.singleIndex[p.index], unique else { return nil }
        return QueryPart.DirectLookup(property: p, slot: slot, index: index)
    }

    /// The runs of `descriptor` (whose predicate is `predicate`) in `context`, or nil when the
    /// descriptor has another shape. A predicate's constants are read (and its runs made)
    /// while its expression tree is lent: they are read in place, at the offsets compiling found.
    func runs(_ descriptor: FetchDescriptor<T>, predicate: PredicateParts?, context: ModelContext) -> QueryRuns? {
        guard (predicate != nil) == hasPredicate else { return nil }
        // The descriptor's generic parts are read once (each read of a generic value looks up
        // its type's metadata), and only when it has them; the runs are not generic.
        let sorted = descriptor.sortCount > 0
        if sorted || isSorted {
            guard descriptor.sortBy == self.sortBy else { return nil }
        }
        if !propertiesToFetch.isEmpty, descriptor.loadedKeyPaths != propertiesToFetch { return nil }
        // Only a context with unsaved inserts or changes evaluates the predicate on objects.
        var pendingTest: ((AnyObject) throws -> Bool)? = nil
        if let predicate, !context.inserted.isEmpty || !context.changed.isEmpty { pendingTest = predicate.evaluator(T.self) }
        var common = RunCommon(compare: sorted ? CompiledQuery.compare(descriptor.sortBy) : nil, pendingTest: pendingTest,
                               paging: Paging(offset: descriptor.fetchOffset, limit: descriptor.fetchLimit),
                               includePendingChanges: descriptor.includePendingChanges)
        // Without pending changes, a predicate or sort evaluated on objects reads them, and the
        // objects their relationships reach, as the store has them: made by a context of their
        // own, which has no unsaved changes (the context's registered objects may). Needed only
        // where objects are evaluated through the context (relationships, external values).
        if !common.includePendingChanges, predicate != nil || sorted { common.asStored = asStored(context) }
        if hasCustomStore {
            // A custom store is asked with the descriptor itself (its subclasses' models whole).
            // Rows the store may answer that the context leaves out: changed, deleted, and
            // deleted by `delete(model:where:)` (asked for beyond the limit, so a page stays whole).
            common.pendingRows = context.changed.count + context.deleted.count + context.batchDeletes.values.reduce(0) { $0 + $1.count }
            // A page deep in the store's order is read as that page, where the store pages
            // fetches and nothing unsaved here can change which rows are on it.
            let pushesOffset = parts.count == 1 && parts[0].handle.custom?.box.pagesFetches == true && common.pendingRows == 0
                && context.inserted.isEmpty && context.batchDeletes.isEmpty
            // A predicate or sort that reads through relationships, in a context with unsaved
            // changes to a model they reach, is evaluated here on the objects: the store would
            // read the related rows as saved (a pet whose owner was renamed, unsaved, is not
            // found by the owner's new name), and no object it leaves out would be tested again.
            let evaluatesHere = descriptor.includePendingChanges && (predicate != nil || sorted)
                && context.hasPendingChanges(reachableFrom: parts[0].table.entity)
            common.storeFetch = DescriptorFetch(descriptor: descriptor, pushesOffset: pushesOffset && !evaluatesHere, evaluatesHere: evaluatesHere)
        }
        guard let predicate else {
            return QueryRuns(count: parts.count) { parts[$0].run(nil, pointRun: &context.pointRun, filter: { .all }, common, ownModel: $0 == 0) }
        }
        // (The parts lent, not retained and released per fetch: the query holds them.)
        return withTreeBytes(predicate.expression) { tree in
            for i in parts.indices where !Unmanaged.passUnretained(parts[i])._withUnsafeGuaranteedRef({ $0.layout.matches(tree, input: predicate.input) }) {
                return nil
            }
            return QueryRuns(count: parts.count) { i in Unmanaged.passUnretained(parts[i])._withUnsafeGuaranteedRef { part in
                let b = part.layout.bindings(tree)
                return part.run(b, pointRun: &context.pointRun, filter: {
                    if let checks = part.checks?(b) { return .checks(checks) }
                    if let test = part.test { return .record(test(b)) }
                    return .object(CompiledQuery.objectFilter(predicate.evaluator(T.self), table: part.table, handle: part.handle,
                                                              context: context, asStored: common.asStored))
                }, common, ownModel: i == 0)
            } }
        }
    }

    /// A context with no unsaved changes, for a fetch without pending changes in `context`,
    /// when `context` has unsaved changes and objects are evaluated through a context; else nil.
    /// (Out of line: most fetches include pending changes and never call it.)
    @inline(never)
    private func asStored(_ context: ModelContext) -> ModelContext? {
        guard context.hasChanges, parts.contains(where: { $0.table.entity.needsRegisteredObjects }) else { return nil }
        return ModelContext(context.container)
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
    /// that key paths through relationships can load the related objects: `context`'s, or, for
    /// a fetch without pending changes, `asStored`'s (its objects are as stored).
    private static func objectFilter(_ evaluate: @escaping (AnyObject) throws -> Bool, table: Table, handle: StoreHandle,
                                     context: ModelContext, asStored: ModelContext?) -> (RowID, RecordView) throws -> Bool {
        if table.entity.needsRegisteredObjects {
            if let asStored { return { row, view in try evaluate(try asStored.object(row, view: view, table: table, handle: handle)) } }
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
    /// whose index order is Foundation's order. (Those are numbers, dates and Bool, whose keys
    /// are a few bytes: never in the long form, where keys that share their first 2016 bytes
    /// sort by digest, not by value. Strings, data and arrays are sorted from their values.)
    private static func indexOrder(_ sortBy: [SortDescriptor<T>], table: Table) -> (index: IndexID, reverse: Bool)? {
        guard sortBy.count == 1, let sort = sortBy.first, let keyPath = sort.keyPath,
              let property = table.entity.property(for: keyPath), property.keyOrderIsValueOrder,
              let (index, _) = table.singleIndex[property.index] else { return nil }
        return (index, sort.order == .reverse)
    }
}

/// One model's part of a compiled query: outside the generic class, so that reading it needs
/// no type metadata; a class, so that a fetch takes it with one retain (a struct of this many
/// references was a retain and a release of each); not a tuple, since a function kept in an
/// array of tuples is stored at its most general abstraction, and every record's test then
/// went through six reabstraction thunks.
private final class QueryPart {
    let handle: StoreHandle
    let table: Table
    /// Where the predicate's constants are and what the shape holds (empty without one).
    let layout: TreeLayout
    /// The predicate's test on records, from its constants (nil: evaluated on objects).
    let test: ((Bindings) -> RowTest)?
    /// The same test as a list of field checks, when the predicate is one (bound: nil when a
    /// constant has no check; `test` is then used).
    let checks: ((Bindings) -> [FieldCheck]?)?
    let source: SourcePlan
    /// What the sort can use (its descriptors' properties, an index).
    let sortProperties: [Int]?
    let indexOrder: (index: IndexID, reverse: Bool)?
    /// The properties `propertiesToFetch` names (nil: all).
    let loading: [Int]?
    /// The store's backend evaluates queries (asked once: reading it through the handle's
    /// storage existential retained and released it per fetch).
    let evaluates: Bool
    /// When a lookup in a unique index of exact keys is the whole answer (the predicate is
    /// only that property equal to a constant), on a store Strata reads itself: the property,
    /// the constant's slot and the index. Binding makes the key and nothing else (no hint, no
    /// choice among sources, no test: the row is not tested again), W3.
    let directLookup: DirectLookup?

    struct DirectLookup {
        let property: PersistedProperty
        let slot: Int
        let index: IndexID
    }

    init(handle: StoreHandle, table: Table, layout: TreeLayout, test: ((Bindings) -> RowTest)?, checks: ((Bindings) -> [FieldCheck]?)?,
         source: SourcePlan, directLookup: DirectLookup?,
         sortProperties: [Int]?, indexOrder: (index: IndexID, reverse: Bool)?, loading: [Int]?) {
        self.handle = handle
        self.table = table
        self.evaluates = handle.storage.evaluatesQueries
        self.directLookup = evaluates || handle.custom != nil ? nil : directLookup
        self.layout = layout
        self.test = test
        self.checks = checks
        self.source = source
        self.sortProperties = sortProperties
        self.indexOrder = indexOrder
        self.loading = loading
    }

    /// A predicate's plan for one model (empty for no predicate).
    struct Plan {
        var layout = TreeLayout()
        var test: ((Bindings) -> RowTest)?
        var checks: ((Bindings) -> [FieldCheck]?)?
        var hints: [HintPlan] = []
    }
}

/// What a fetch's runs share.
private struct RunCommon {
    let compare: ((AnyObject, AnyObject) -> ComparisonResult)?
    let pendingTest: ((AnyObject) throws -> Bool)?
    let paging: Paging
    let includePendingChanges: Bool
    /// Without pending changes, in a context with unsaved ones: the context that makes the
    /// objects a predicate or sort is evaluated on, as stored (nil: the fetch's own context).
    var asStored: ModelContext? = nil
    /// For a custom store: the fetch to ask it, and the rows unsaved changes may take out.
    var storeFetch: (any StoreFetch)? = nil
    var pendingRows = 0
}

extension QueryPart {
    /// This model's run, its rows chosen with the predicate's constants `b` (nil: none) and
    /// tested by `filter` (made only when the rows need a test).
    /// `pointRun`: the context's last point-lookup run (`ModelContext.pointRun`), bound again
    /// when nothing else holds it, else replaced by the one made.
    func run(_ b: Bindings?, pointRun: inout QueryRun?, filter: () -> RowFilter, _ common: RunCommon, ownModel: Bool) -> QueryRun {
        // The whole predicate is a unique property equal to a constant that makes a key: the
        // row the index holds for it is the answer, untested. (Not with a sort, which reads a
        // filter of `.all` as "every row" when it sorts by an index.)
        if let direct = directLookup, common.compare == nil, let b {
            // The last one's run, when its fetch is done and it was this part's (uniqueness
            // asked first: the binding below is a second reference).
            if isKnownUniquelyReferenced(&pointRun), let run = pointRun, run.isPointLookup, run.handle === handle, run.table === table,
               run.loading == loading {
                var key = run.takeKey()
                key.removeAll(keepingCapacity: true)
                if direct.property.appendKeyOfConstant(b.constant(direct.slot), to: &key) {
                    KeyEncoding.makeStoredForm(&key)
                    run.rebind(.lookup(direct.index, key), paging: common.paging, includePendingChanges: common.includePendingChanges,
                               pendingTest: common.pendingTest)
                    return run
                }
            } else if let exact = direct.property.keyOfConstant(b.constant(direct.slot)) {
                let run = QueryRun(handle: handle, table: table, filter: .all, source: .lookup(direct.index, KeyEncoding.storedForm(exact)),
                                   sort: nil, paging: common.paging, includePendingChanges: common.includePendingChanges,
                                   pendingTest: common.pendingTest, loading: loading, storageQuery: nil, isPointLookup: true)
                pointRun = run
                return run
            }
        }
        let rows = b.map { QueryPlanner.source(source, $0, table: table, handle: handle) } ?? .scan
        var storageQuery = evaluates ? b.flatMap { QueryPlanner.storageQuery(hints: source.hints($0), table: table) } : nil
        // (A lookup that is the whole answer went by `directLookup` above: here the rows are tested.)
        let filter = filter()
        if handle.custom != nil, let collection = table.collection {
            storageQuery = StorageQuery(collection: collection, terms: [],
                                        attachment: (ownModel ? common.storeFetch : StoreFetches.all(table.entity.type)).map(StoreFetchAttachment.init),
                                        pendingRows: common.pendingRows)
        }
        return QueryRun(handle: handle, table: table, filter: filter, source: rows,
                        sort: common.compare.map { ResultSort(compare: $0, properties: sortProperties, indexOrder: indexOrder, asStored: common.asStored) },
                        paging: common.paging, includePendingChanges: common.includePendingChanges, pendingTest: common.pendingTest,
                        loading: loading, storageQuery: storageQuery)
    }
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

    /// A compiled query and the key it was cached under.
    private struct Entry: Sendable {
        let key: Key
        let query: any AnyObject & Sendable
    }

    private struct State {
        /// The entries by model (each entry checked against the key). Not keyed by `Key`
        /// itself: the first dictionary keyed by a new type costs a fresh process a scan of
        /// every protocol conformance loaded (W8, Docs/Benchmarks.md), and a `TypeMap`, not a
        /// dictionary keyed by `ObjectIdentifier`, for the same reason.
        var entries = TypeMap<[Entry]>()
        /// The key looked up last and its entries (cleared when an insertion changes them).
        var last: (key: Key, entries: [Entry])?
        var order: [Key] = []
        var total = 0
    }

    /// (A `Mutex`, not an `NSLock`: taking and giving back an `NSLock` was 75 instructions of
    /// each fetch, W3.)
    private let state = Mutex(State())

    /// The runs of `descriptor`, with the plan compiled for its shape (compiled now if none is cached).
    func runs<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool, context: ModelContext) throws -> QueryRuns {
        let predicate = descriptor.predicateParts
        let key = Key(model: ObjectIdentifier(T.self), includeSubclasses: includeSubclasses,
                      expression: predicate?.expressionType, sortCount: descriptor.sortCount,
                      partial: !descriptor.loadedKeyPaths.isEmpty)
        // The shape fetched last is asked for again more often than not: compared before hashing.
        let candidates = state.withLock { s -> [Entry] in
            if let last = s.last, last.key == key { return last.entries }
            let found = s.entries[key.model] ?? []
            s.last = (key, found)
            return found
        }
        // (Each query lent: `candidates` holds them.)
        for i in candidates.indices where candidates[i].key == key {
            let query = Unmanaged.passUnretained(unsafeDowncast(candidates[i].query, to: CompiledQuery<T>.self))
            if let runs = query._withUnsafeGuaranteedRef({ $0.runs(descriptor, predicate: predicate, context: context) }) { return runs }
        }
        let made = try CompiledQuery(descriptor, container: context.container, includeSubclasses: includeSubclasses)
        guard let runs = made.runs(descriptor, predicate: predicate, context: context) else {
            // (A plan compiled from a descriptor always takes it: this would be Strata's bug, told
            // as an error, not a trap.)
            throw StrataError(.storeFailure, "Strata compiled a plan for a fetch of \(T.self) that does not take that fetch's descriptor (a bug in Strata; please report it with the predicate and sort).")
        }
        insert(made, key)
        return runs
    }

    private func insert(_ query: any AnyObject & Sendable, _ key: Key) {
        state.withLock { s in
            s.last = nil
            var bucketEntries = s.entries[key.model] ?? []
            bucketEntries.append(Entry(key: key, query: query))
            s.entries[key.model] = bucketEntries
            s.order.append(key)
            s.total += 1
            while s.total > QueryCache.capacity, !s.order.isEmpty {
                let oldest = s.order.removeFirst(), bucket = oldest.model
                guard var bucketEntries = s.entries[bucket] else { continue }
                if let i = bucketEntries.firstIndex(where: { $0.key == oldest }) { bucketEntries.remove(at: i); s.total -= 1 }
                s.entries[bucket] = bucketEntries.isEmpty ? nil : bucketEntries
            }
        }
    }

    /// How many compiled queries are cached (for tests).
    var count: Int { state.withLock { $0.total } }
}

extension ModelContext {
    /// True when unsaved inserts, changes or deletions touch a model that `entity`'s
    /// relationships reach, directly or through other models (`entity` itself only through a
    /// cycle).
    func hasPendingChanges(reachableFrom entity: Entity) -> Bool {
        guard !entity.relationships.isEmpty,
              !(inserted.isEmpty && changed.isEmpty && deleted.isEmpty && batchDeletes.isEmpty) else { return false }
        var reached: [ObjectIdentifier: Entity] = [:]
        var frontier = [entity]
        while let next = frontier.popLast() {
            for relationship in next.relationships {
                let target = relationship.targetEntity
                if reached.updateValue(target, forKey: ObjectIdentifier(target)) == nil { frontier.append(target) }
            }
        }
        func touches(_ objects: OrderedObjects) -> Bool { objects.backings.contains { reached[ObjectIdentifier($0.entity)] != nil } }
        return touches(inserted) || touches(changed) || touches(deleted) || batchDeletes.keys.contains { reached[$0] != nil }
    }
}
