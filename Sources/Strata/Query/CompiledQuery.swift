import Foundation
import StrataEngine

/// A fetch compiled for one shape (QueryShape.swift): for each model it reads (the model and,
/// for a base class, the subclasses in the schema), the plan of its predicate and whether its
/// sort can be read from an index. Compiling looks up key paths and chooses fast paths;
/// running it (`runs`) binds the fetch's own constants.
final class CompiledQuery<T: PersistentModel>: @unchecked Sendable {
    /// One model's part.
    struct Part {
        let handle: StoreHandle
        let table: Table
        /// Binds a predicate of the compiled shape: its test on records (nil: the predicate is
        /// evaluated on objects) and the hints of its indexed conditions.
        let bind: (Predicate<T>) -> (test: RowTest?, hints: [IndexHint])
        /// The index the (single) sort descriptor can be read from, and its direction.
        let indexOrder: (index: IndexID, reverse: Bool)?
    }

    let parts: [Part]

    init(_ descriptor: FetchDescriptor<T>, container: ModelContainer, includeSubclasses: Bool) throws {
        parts = try container.locations(of: T.self, includeSubclasses: includeSubclasses).map { handle, table in
            Part(handle: handle, table: table,
                 bind: descriptor.predicate.map { CompiledQuery.compile($0, entity: table.entity) } ?? { _ in (nil, []) },
                 indexOrder: CompiledQuery.indexOrder(descriptor.sortBy, table: table))
        }
    }

    /// The plan of a predicate's shape, as a function binding any predicate of that shape.
    private static func compile(_ predicate: Predicate<T>, entity: Entity) -> (Predicate<T>) -> (test: RowTest?, hints: [IndexHint]) {
        func plan<E: StandardPredicateExpression<Bool>>(_ expression: E) -> (Predicate<T>) -> (test: RowTest?, hints: [IndexHint]) {
            let compiler = RowCompiler(entity: entity, input: predicate.variable.key, model: T.self)
            let test = compiler.compile(expression)
            let hints = compiler.hints(expression)
            return { predicate in
                guard let node = predicate.expression as? E else { return (nil, []) }
                return (test?(node), hints?(node) ?? [])
            }
        }
        return plan(predicate.expression)
    }

    /// Results in the order of an index, when one sort descriptor names an indexed property
    /// whose index order is Foundation's order.
    private static func indexOrder(_ sortBy: [SortDescriptor<T>], table: Table) -> (index: IndexID, reverse: Bool)? {
        guard sortBy.count == 1, let sort = sortBy.first, let keyPath = sort.keyPath,
              let property = table.entity.property(for: keyPath), property.keyOrderIsValueOrder,
              let (index, _) = table.singleIndex[property.index] else { return nil }
        return (index, sort.order == .reverse)
    }

    /// The runs of a fetch of this shape in `context`.
    func runs(_ descriptor: FetchDescriptor<T>, context: ModelContext) -> [QueryRun<T>] {
        parts.map { part in
            let (test, hints) = descriptor.predicate.map(part.bind) ?? (nil, [])
            let filter: RowFilter
            if let test {
                filter = .record(test)
            } else if let predicate = descriptor.predicate {
                filter = .object(QueryRun<T>.objectFilter(predicate, table: part.table, handle: part.handle, context: context))
            } else {
                filter = .all
            }
            return QueryRun(handle: part.handle, table: part.table, descriptor: descriptor, filter: filter,
                            source: QueryPlanner.source(hints: hints, table: part.table, storeIdentifier: part.handle.identifier),
                            indexOrder: part.indexOrder)
        }
    }
}

/// The compiled queries of a container, by shape: at most `capacity`, the oldest going first.
final class QueryCache: @unchecked Sendable {
    static let capacity = 256
    private let lock = NSLock()
    private var entries: [QueryShape: AnyObject] = [:]
    private var order: [QueryShape] = []

    /// The query compiled for `descriptor`'s shape, compiled now if it is not cached.
    func query<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool, container: ModelContainer) throws -> CompiledQuery<T> {
        guard let shape = QueryShape(descriptor, includeSubclasses: includeSubclasses) else {
            return try CompiledQuery(descriptor, container: container, includeSubclasses: includeSubclasses)
        }
        if let cached = lock.withLock({ entries[shape] }) { return unsafeDowncast(cached, to: CompiledQuery<T>.self) }
        let made = try CompiledQuery(descriptor, container: container, includeSubclasses: includeSubclasses)
        lock.withLock {
            if entries.updateValue(made, forKey: shape) == nil { order.append(shape) }
            if order.count > QueryCache.capacity { entries.removeValue(forKey: order.removeFirst()) }
        }
        return made
    }

    /// How many shapes are cached (for tests).
    var count: Int { lock.withLock { entries.count } }
}
