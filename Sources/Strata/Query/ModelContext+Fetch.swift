import Foundation
import StrataEngine

extension ModelContext {
    /// The object of a descriptor, bound to its constants: one run per model it reads.
    func runs<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool = true) throws -> [QueryRun<T>] {
        try container.queries.query(descriptor, includeSubclasses: includeSubclasses, container: container).runs(descriptor, context: self)
    }

    /// The objects the descriptor selects, in its order. Same as SwiftData's `fetch(_:)`.
    ///
    /// Every predicate Foundation can evaluate gives Foundation's answer. Conditions on unique
    /// or indexed attributes (`==`, ranges, `contains` on a constant list, `starts(with:)`) are
    /// answered from the index; the rest is evaluated on the encoded records. A descriptor is
    /// compiled once per shape (the same predicate with other values reuses the plan).
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 { return try fetchAcrossModels(descriptor, runs) }
            let run = runs[0]
            let objects = try run.handle.storage.read { reader in
                try results(run, reader: reader, materialize: true).compactMap { item -> T? in
                    if case .object(let o) = item { return o as? T }
                    return nil
                }
            }
            if !descriptor.relationshipKeyPathsForPrefetching.isEmpty { try prefetch(descriptor.relationshipKeyPathsForPrefetching, of: objects) }
            return objects
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// How many objects the descriptor selects, without making them. Same as SwiftData's `fetchCount(_:)`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 { return try fetchAcrossModels(descriptor, runs).count }
            let run = runs[0]
            let pending = try pendingState(run)
            let stored = try run.handle.storage.read { reader -> Int in
                guard let collection = run.table.collection else { return 0 }
                if run.filter.isAll && run.source.isScan && pending.excluded.isEmpty { return try reader.count(in: collection) }
                var total = 0
                var rows = try StoredRows(run, excluded: pending.excluded, reader: reader)
                try rows.visit(reader) { _, _ in total += 1; return true }
                return total
            }
            return descriptor.paging.count(ofTotal: stored + pending.objects.count)
        } catch { throw StrataError.store(error, while: "count \(T.self)") }
    }

    /// The identifiers of the objects the descriptor selects, without making them.
    /// Same as SwiftData's `fetchIdentifiers(_:)`.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 { return try fetchAcrossModels(descriptor, runs).map(\.persistentModelID) }
            let run = runs[0]
            return try run.handle.storage.read { reader in
                try results(run, reader: reader, materialize: false).compactMap { item in
                    switch item {
                    case .stored(let row):
                        return PersistentIdentifier(entityName: run.entity.name, storeIdentifier: run.handle.identifier, rowID: Int64(row))
                    case .object(let o):
                        return (o as? T)?.persistentModelID
                    }
                }
            }
        } catch { throw StrataError.store(error, while: "fetch identifiers of \(T.self)") }
    }

    /// Calls `block` with each selected object, making them `batchSize` at a time and letting
    /// each batch go once visited, so memory stays bounded by the batch. Same as SwiftData's
    /// `enumerate(_:batchSize:allowEscapingMutations:block:)`; objects the block changes stay
    /// in the context (unsaved) whatever `allowEscapingMutations` says. The whole enumeration
    /// reads one snapshot of the store.
    public func enumerate<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int = 5000,
                                              allowEscapingMutations: Bool = false, block: (T) throws -> Void) throws {
        let run: QueryRun<T>
        let reader: any StorageReader
        let pending: (objects: [AnyObject], excluded: Set<RowID>)
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 {
                for object in try fetchAcrossModels(descriptor, runs) { try block(object) }
                return
            }
            run = runs[0]
            pending = try pendingState(run)
            reader = try run.handle.storage.beginRead()
        } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        let size = max(1, batchSize)
        if descriptor.sortBy.isEmpty && pending.objects.isEmpty {
            return try enumerateRows(run, excluded: pending.excluded, reader: reader, batchSize: size, block: block)
        }
        let items: [FetchItem]
        do { items = try results(run, reader: reader, materialize: false) } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        var start = 0
        while start < items.count {
            let end = start + min(size, items.count - start)
            let batch: [T]
            do {
                batch = try items[start..<end].compactMap { item -> T? in
                    if case .object(let o) = try made(item, run, reader, true) { return o as? T }
                    return nil
                }
            } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
            for object in batch { try block(object) }
            start = end
        }
    }

    /// Enumerates stored rows in row order, a batch at a time: each row is visited once, and
    /// made into its object from the bytes read.
    private func enumerateRows<T: PersistentModel>(_ run: QueryRun<T>, excluded: Set<RowID>, reader: any StorageReader,
                                                   batchSize: Int, block: (T) throws -> Void) throws {
        let paging = run.descriptor.paging
        var rows: StoredRows<T>
        do { rows = try StoredRows(run, excluded: excluded, reader: reader) } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        var skipped = 0, visited = 0
        while !rows.isDone {
            var batch: [T] = []
            batch.reserveCapacity(batchSize)
            do {
                try rows.visit(reader) { row, view in
                    if skipped < paging.offset { skipped += 1; return true }
                    if let object = try object(row, view: view, table: run.table, handle: run.handle) as? T { batch.append(object) }
                    visited += 1
                    return batch.count < batchSize && paging.limit.map { visited < $0 } ?? true
                }
            } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
            for object in batch { try block(object) }
            if let limit = paging.limit, visited >= limit { return }
        }
    }

    /// The selected objects as a collection that makes them `batchSize` at a time, when
    /// they are first read. Same as SwiftData's `fetch(_:batchSize:)`.
    ///
    /// The collection reads every batch from the snapshot of the store its results came
    /// from, kept open for its life: saves made meanwhile (here or in another context) do not
    /// change which objects it holds, and each batch reads the rows as they were then. Each
    /// stored row was already read (and checked) by the fetch; if a later batch still cannot
    /// be read (an I/O error), subscripting stops the program with that error, since a
    /// collection cannot throw: `fetch(_:)` and `enumerate` throw instead.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 {
                let objects = try fetchAcrossModels(descriptor, runs).map { FetchItem.object($0) }
                return FetchResultsCollection(context: self, run: runs[0], snapshot: nil, items: objects, batchSize: max(1, batchSize))
            }
            let run = runs[0]
            let snapshot = try run.handle.storage.beginRead()
            let items = try results(run, reader: snapshot, materialize: false)
            return FetchResultsCollection(context: self, run: run, snapshot: snapshot, items: items, batchSize: max(1, batchSize))
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// A fetch of a base class with subclasses in the schema: each model's matches, merged,
    /// sorted with the descriptors (ties: model order, then row order), then paged.
    /// Differs from SwiftData only in that subclass rows are not interleaved by insertion time.
    func fetchAcrossModels<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ runs: [QueryRun<T>]) throws -> [T] {
        var unpaged = descriptor
        unpaged.fetchOffset = nil
        unpaged.fetchLimit = nil
        var all: [T] = []
        for run in runs {
            let whole = QueryRun(handle: run.handle, table: run.table, descriptor: unpaged, filter: run.filter, source: run.source, indexOrder: run.indexOrder)
            all += try run.handle.storage.read { reader in
                try results(whole, reader: reader, materialize: true).compactMap { item -> T? in
                    if case .object(let o) = item { return o as? T }
                    return nil
                }
            }
        }
        if !descriptor.sortBy.isEmpty {
            let order = TopResults<T>(sortBy: descriptor.sortBy, keep: nil)
            all = all.enumerated().map { (RowID($0.offset), $0.element, Optional($0.element)) }.sorted(by: order.before).map(\.key)
        }
        return descriptor.paging.apply(all)
    }
}
