import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// A descriptor compiled (once per shape) and bound to its constants: one run per model it reads.
    func runs<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool = true) throws -> QueryRuns {
        if !storeBatchDeletes.isEmpty { try applyStoreBatchDeletes() }
        // (The cache lent: the container holds it for its life.)
        return try Unmanaged.passUnretained(container.queries)._withUnsafeGuaranteedRef {
            try $0.runs(descriptor, includeSubclasses: includeSubclasses, context: self)
        }
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
            let objects: [T]
            if runs.count > 1 {
                objects = try fetchAcrossModels(runs, paging: descriptor.paging).map { unsafeDowncast($0, to: T.self) }
            } else {
                let run = runs[0]
                objects = ModelContext.objects(try storedObjects(run), as: T.self)
            }
            if !descriptor.prefetchedKeyPaths.isEmpty { try prefetch(descriptor.prefetchedKeyPaths, of: objects) }
            return objects
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// A run's objects, read in one snapshot of its store. (Not through the generic
    /// `read<R>`, whose closure looked up `Optional<R>`'s metadata on every fetch.)
    private func storedObjects(_ run: QueryRun) throws -> [AnyObject] {
        var objects: [AnyObject] = []
        try run.handle.storage.read { (reader: any StorageReader) in objects = try self.objects(run, reader: reader) }
        return objects
    }

    /// How many objects the descriptor selects, without making them. Same as SwiftData's `fetchCount(_:)`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 { return try fetchAcrossModels(runs, paging: descriptor.paging).count }
            let run = runs[0]
            let pending = try pendingResults(run)
            let (stored, paged) = try run.handle.storage.read { reader -> (Int, Bool) in
                guard let collection = run.table.collection else { return (0, false) }
                if run.filter.isAll && run.source.isScan && pending.excluded.isEmpty { return (try reader.count(in: collection), false) }
                // A custom store that evaluates the predicate counts itself.
                if pending.excluded.isEmpty, let query = run.storageQuery, query.storeFetch != nil, let n = try reader.count(query) { return (n, false) }
                var rows = try StoredRows(run, excluded: pending.excluded, reader: reader)
                // A store that answered with the page itself: these rows are the page.
                return (try rows.count(reader), rows.skippedOffset)
            }
            return paged ? stored : descriptor.paging.count(ofTotal: stored + pending.objects.count)
        } catch { throw StrataError.store(error, while: "count \(T.self)") }
    }

    /// The identifiers of the objects the descriptor selects, without making them.
    /// Same as SwiftData's `fetchIdentifiers(_:)`.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 {
                return try fetchAcrossModels(runs, paging: descriptor.paging).compactMap { ($0 as? any PersistentModel)?.persistentModelID }
            }
            let run = runs[0]
            let scope = run.handle.identifierScope(for: run.entity)
            let custom = run.handle.custom
            return try run.handle.storage.read { reader in
                try results(run, reader: reader, materialize: false).compactMap { item in
                    switch item {
                    case .stored(let row):
                        return custom?.identifier(run.entity, row) ?? PersistentIdentifier(scope: scope, rowID: Int64(row))
                    case .object(let o):
                        return (o as? any PersistentModel)?.persistentModelID
                    }
                }
            }
        } catch { throw StrataError.store(error, while: "fetch identifiers of \(T.self)") }
    }

    /// Calls `block` with each selected object. In store order, each object is made as its row
    /// is read and let go after the block (unless the block keeps it); sorted, they are made
    /// `batchSize` at a time and each batch let go once visited: memory stays bounded either
    /// way. Same as SwiftData's
    /// `enumerate(_:batchSize:allowEscapingMutations:block:)`; objects the block changes stay
    /// in the context (unsaved) whatever `allowEscapingMutations` says. The whole enumeration
    /// reads one snapshot of the store.
    public func enumerate<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int = 5000,
                                              allowEscapingMutations: Bool = false, block: (T) throws -> Void) throws {
        let run: QueryRun
        let reader: any StorageReader
        let pending: PendingResults
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 {
                for object in try fetchAcrossModels(runs, paging: descriptor.paging) { try block(unsafeDowncast(object, to: T.self)) }
                return
            }
            run = runs[0]
            pending = try pendingResults(run)
            reader = try run.handle.storage.beginRead()
        } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        let size = max(1, batchSize)
        if let custom = run.handle.custom, pending.objects.isEmpty,
           try enumerateStoreBatches(run, custom: custom, excluded: pending.excluded, reader: reader, batchSize: size, block: block) {
            return
        }
        if run.sort == nil && pending.objects.isEmpty {
            return try enumerateRows(run, excluded: pending.excluded, reader: reader, block: block)
        }
        let items: [FetchItem]
        do { items = try results(run, reader: reader, materialize: false) } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        var start = 0
        while start < items.count {
            let end = start + min(size, items.count - start)
            let batch: [T]
            do {
                batch = ModelContext.objects(try items[start..<end].map { try made($0, run, reader, true) }, as: T.self)
            } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
            for object in batch { try block(object) }
            start = end
        }
    }

    /// Enumerates a custom store's objects as it reads them, a batch at a time
    /// (`DataStoreBatchedFetching`), its predicate and sort evaluated by the store: each batch's
    /// objects are made and handed to the block, then the batch let go. The offset and limit go
    /// to the store unless the context deleted some rows, which it then skips and pages itself.
    /// False when the store does not read in batches or refuses the descriptor.
    private func enumerateStoreBatches<T: PersistentModel>(_ run: QueryRun, custom: DataStoreStorage, excluded: RowSet, reader: any StorageReader,
                                                           batchSize: Int, block: (T) throws -> Void) throws -> Bool {
        guard let fetch = run.storageQuery?.storeFetch, let collection = run.table.collection else { return false }
        let paging = run.paging, storePages = excluded.isEmpty
        let layouts: EntityLayouts? = run.table.layouts.isIdentity ? nil : run.table.layouts
        var skipped = 0, visited = 0
        var blockError: (any Error)?
        let answered: Bool
        do {
            answered = try custom.fetchInBatches(fetch, batchSize: batchSize, paging: storePages, entity: run.entity) { rows in
                var going = true
                for row in rows where !excluded.contains(row) {
                    _ = try reader.visitRecord(row, in: collection) { raw in
                        let view = try RecordView(raw, layouts: layouts)
                        guard try run.passes(row, view) else { return }
                        if !storePages && skipped < paging.offset { skipped += 1; return }
                        let object = try object(row, view: view, table: run.table, handle: run.handle, loading: run.loading)
                        visited += 1
                        do { try block(unsafeDowncast(object, to: T.self)) } catch { blockError = error; going = false; return }
                        if !storePages, let limit = paging.limit, visited >= limit { going = false }
                    }
                    if !going { return false }
                }
                return true
            }
        } catch {
            if let blockError { throw blockError }
            throw StrataError.store(error, while: "enumerate \(T.self)")
        }
        if let blockError { throw blockError }
        return answered
    }

    /// Enumerates stored rows in row order, a batch at a time: each row is visited once, and
    /// made into its object from the bytes read.
    private func enumerateRows<T: PersistentModel>(_ run: QueryRun, excluded: RowSet, reader: any StorageReader,
                                                   block: (T) throws -> Void) throws {
        var rows: StoredRows
        do { rows = try StoredRows(run, excluded: excluded, reader: reader) } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        let paging = rows.paging
        var skipped = 0, visited = 0
        // Each object is made and handed to the block as its row is read, and let go before
        // the next (unless the block keeps it): a batch of objects made ahead of the block cost
        // their allocations a trip through the allocator's slow paths, for nothing the caller
        // can see. The block runs inside the scan of a snapshot: what it saves meanwhile is not
        // in the rows that follow, as with batches. Its errors pass through unchanged.
        var blockError: (any Error)?
        // (Read from the run once, not retained and released per row.)
        let table = run.table, handle = run.handle, loading = run.loading
        while !rows.isDone {
            do {
                try rows.visit(reader) { row, view in
                    if skipped < paging.offset { skipped += 1; return true }
                    let object = try object(row, view: view, table: table, handle: handle, loading: loading)
                    visited += 1
                    // (Lent to the block: handed over as it was, the object was retained once
                    // more for the call, W7.)
                    do {
                        try Unmanaged.passUnretained(object)._withUnsafeGuaranteedRef { try block(unsafeDowncast($0, to: T.self)) }
                    } catch { blockError = error; return false }
                    return paging.limit.map { visited < $0 } ?? true
                }
            } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
            if let blockError { throw blockError }
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
    ///
    /// On a custom store that fetches in batches (`DataStoreBatchedFetching`, as PostgreSQL's),
    /// with nothing unsaved in the context for the model, the fetch reads the identifiers only,
    /// and each batch is read from the store when it is first subscripted (one fetch per batch):
    /// memory holds one batch. Such a batch reads the rows as they are then; a row another
    /// writer deleted meanwhile is an object with the model's initial values and the row's
    /// identifier, whose `isDeleted` is true, in no context. A batch the store cannot answer
    /// twice in a row (a server gone) stops the program when subscripted: where that matters,
    /// use `fetch(_:)` or `enumerate`, which throw.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        do {
            let runs = try runs(descriptor)
            if runs.count > 1 {
                let objects = try fetchAcrossModels(runs, paging: descriptor.paging).map { FetchItem.object($0) }
                return FetchResultsCollection(context: self, run: runs[0], snapshot: nil, items: objects, batchSize: max(1, batchSize))
            }
            let run = runs[0]
            let snapshot = try run.handle.storage.beginRead()
            if let custom = run.handle.custom, let fetch = run.storageQuery?.storeFetch {
                let pending = try pendingResults(run)
                if pending.objects.isEmpty, pending.excluded.isEmpty, let rows = try custom.rows(selectedBy: fetch, entity: run.entity) {
                    return FetchResultsCollection(context: self, run: run, snapshot: snapshot, items: rows.map { .stored($0) },
                                                  batchSize: max(1, batchSize), loadsBatchesFrom: custom)
                }
            }
            // Any other custom store's rows are not a snapshot to read again later: its objects are made now.
            let items = try results(run, reader: snapshot, materialize: run.handle.custom != nil)
            return FetchResultsCollection(context: self, run: run, snapshot: snapshot, items: items, batchSize: max(1, batchSize))
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// A fetch of a base class with subclasses in the schema: each model's matches, merged,
    /// sorted with the descriptors (ties: model order, then row order), then paged.
    /// Differs from SwiftData only in that subclass rows are not interleaved by insertion time.
    func fetchAcrossModels(_ runs: QueryRuns, paging: Paging) throws -> [AnyObject] {
        var all: [AnyObject] = []
        for run in runs {
            let whole = run.unpaged
            all += try run.handle.storage.read { reader in
                try results(whole, reader: reader, materialize: true).compactMap { item -> AnyObject? in
                    if case .object(let o) = item { return o }
                    return nil
                }
            }
        }
        if let sort = runs.first?.sort {
            let order = TopResults(compare: sort.compare, keep: nil)
            all = all.enumerated().map { (RowID($0.offset), $0.element, Optional($0.element)) }.sorted(by: order.before).map(\.key)
        }
        return paging.apply(all)
    }
}
