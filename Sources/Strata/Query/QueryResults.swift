import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// One result of a query before it becomes an object: a stored row, or an object (one of the
/// context's, or one made from the record the query read).
enum FetchItem {
    case stored(RowID)
    case object(AnyObject)
}

/// The unsaved objects a run selects, and the stored rows they (or deletions) replace.
struct PendingResults {
    var objects: [AnyObject] = []
    var excluded = RowSet()
}

// A run's results in order, paged: sorting, offset and limit, written once for every kind of
// fetch. Stored rows become objects from the bytes the visit read (`materialize`), so a row is
// located once, except where unsaved changes must be merged in first or a sort's page is known
// only at the end (then the page's rows are read again).

extension ModelContext {
    /// Unsaved objects the run selects, and the stored rows they (or deletions) replace.
    /// A predicate that throws for an unsaved object (a forced unwrap of nil) fails the fetch,
    /// as it does for a stored row and as Foundation's `filter { try predicate.evaluate($0) }` does.
    func pendingResults(_ run: QueryRun) throws -> PendingResults {
        var pending = PendingResults()
        if let deleted = batchDeletes[ObjectIdentifier(run.entity)] { pending.excluded = deleted }
        guard run.includePendingChanges, !(inserted.isEmpty && changed.isEmpty && deleted.isEmpty) else { return pending }
        for b in deleted.backings where b.entity === run.entity { pending.excluded.insert(b.rowID) }
        for b in changed.backings + inserted.backings where b.entity === run.entity {
            pending.excluded.insert(b.rowID)
            if let test = run.pendingTest, try !test(b.object) { continue }
            pending.objects.append(b.object)
        }
        return pending
    }

    /// The run's results in order, with offset and limit applied; stored rows made into
    /// objects when `materialize` is true.
    func results(_ run: QueryRun, reader: any StorageReader, materialize: Bool) throws -> [FetchItem] {
        let pending = try pendingResults(run)
        guard let sort = run.sort else { return try rowOrderResults(run, pending, reader, materialize) }
        // A custom store keeps no index entries: its rows are sorted from their values.
        if pending.objects.isEmpty, run.handle.custom == nil, let order = sort.indexOrder, run.source.isScan || run.filter.isAll {
            return try indexOrderResults(run, order, pending.excluded, reader, materialize)
        }
        return try sortedResults(run, sort, pending, reader, materialize)
    }

    /// The run's results made into objects, in order, with offset and limit applied. In row
    /// order with no unsaved objects to merge, each object is made as its row is read and
    /// collected at once (not as items, then copied into a second array).
    func objects(_ run: QueryRun, reader: any StorageReader) throws -> [AnyObject] {
        let pending = try pendingResults(run)
        guard run.sort == nil, pending.objects.isEmpty else {
            return try results(run, reader: reader, materialize: true).compactMap { if case .object(let o) = $0 { o } else { nil } }
        }
        // (Read from the run once, not retained and released per row.)
        let table = run.table, handle = run.handle, loading = run.loading
        if case .lookup(let index, let key) = run.source {
            // One row at most (a unique index's), read here when nothing is left to test on it:
            // without the candidates and visits of `StoredRows`, made for many rows. The array
            // is made whole, as a literal is, not grown from empty by an append (W3).
            if run.filter.isAll, run.storageQuery == nil, let collection = table.collection {
                guard run.paging.offset == 0, let row = try reader.lookup(key, in: index), !pending.excluded.contains(row) else { return [] }
                let layouts = table.layouts.isIdentity ? nil : Unmanaged.passUnretained(table.layouts)
                var found: AnyObject? = nil
                _ = try reader.visitRecord(row, in: collection) { raw in
                    found = try object(row, view: try RecordView(raw, lent: layouts), table: table, handle: handle, loading: loading)
                }
                guard let found else { return [] }
                return [found]
            }
            var found: AnyObject? = nil
            try pagedRows(run, excluded: pending.excluded, reader: reader, count: { found == nil ? 0 : 1 }) { row, view in
                found = try object(row, view: view, table: table, handle: handle, loading: loading)
            }
            guard let found else { return [] }
            return [found]
        }
        var objects: [AnyObject] = []
        try pagedRows(run, excluded: pending.excluded, reader: reader, count: { objects.count }) { row, view in
            objects.append(try object(row, view: view, table: table, handle: handle, loading: loading))
        }
        return objects
    }

    /// Row order with no unsaved objects: each stored row that passes the filter and is on
    /// the page, handed to `add` as it is read. `count`: how many `add` has kept.
    private func pagedRows(_ run: QueryRun, excluded: RowSet, reader: any StorageReader, count: () -> Int,
                           _ add: (RowID, RecordView) throws -> Void) throws {
        var rows = try StoredRows(run, excluded: excluded, reader: reader)
        let paging = rows.paging
        var skipped = 0
        try rows.visit(reader) { row, view in
            if let limit = paging.limit, count() >= limit { return false }
            if skipped < paging.offset { skipped += 1; return true }
            try add(row, view)
            return paging.limit.map { count() < $0 } ?? true
        }
    }

    /// Row order: stored rows and unsaved objects merged by row id.
    private func rowOrderResults(_ run: QueryRun, _ pending: PendingResults, _ reader: any StorageReader, _ materialize: Bool) throws -> [FetchItem] {
        var items: [FetchItem] = []
        if pending.objects.isEmpty {
            try pagedRows(run, excluded: pending.excluded, reader: reader, count: { items.count }) { row, view in
                items.append(materialize ? .object(try object(row, view: view, table: run.table, handle: run.handle, loading: run.loading)) : .stored(row))
            }
            return items
        }
        var rows = try StoredRows(run, excluded: pending.excluded, reader: reader)
        let paging = rows.paging
        var merged: [(RowID, FetchItem)] = []
        try rows.visit(reader) { row, _ in merged.append((row, .stored(row))); return true }
        for o in pending.objects { merged.append((backingOf(o)?.rowID ?? .max, .object(o))) }
        merged.sort { $0.0 < $1.0 }
        return try paging.apply(merged.map(\.1)).map { try made($0, run, reader, materialize) }
    }

    /// The order of an index: entries in key order, each row read only if the filter needs
    /// it or it is on the page.
    private func indexOrderResults(_ run: QueryRun, _ order: (index: IndexID, reverse: Bool), _ excluded: RowSet,
                                   _ reader: any StorageReader, _ materialize: Bool) throws -> [FetchItem] {
        guard let collection = run.table.collection else { return [] }
        let paging = run.paging
        var items: [FetchItem] = []
        // With no filter and no rows to leave out, the offset is a count of entries: the
        // reader passes over them without reading them (whole leaves at a time).
        let passedOver = run.filter.isAll && excluded.isEmpty ? paging.offset : 0
        var skipped = passedOver
        let layouts: EntityLayouts? = run.table.layouts.isIdentity ? nil : run.table.layouts
        try reader.forEachEntry(in: order.index, range: .all, reverse: order.reverse, skipping: passedOver) { row in
            if let limit = paging.limit, items.count >= limit { return false }
            if excluded.contains(row) { return true }
            let onPage = skipped >= paging.offset
            if run.filter.isAll && !(onPage && materialize) {
                if onPage { items.append(.stored(row)) } else { skipped += 1 }
                return true
            }
            _ = try reader.visitRecord(row, in: collection) { raw in
                let view = try RecordView(raw, layouts: layouts)
                guard try run.passes(row, view) else { return }
                if !onPage { skipped += 1; return }
                items.append(materialize ? .object(try object(row, view: view, table: run.table, handle: run.handle, loading: run.loading)) : .stored(row))
            }
            return true
        }
        return items
    }

    /// A stored row as an object (read again), or the item as it is.
    func made(_ item: FetchItem, _ run: QueryRun, _ reader: any StorageReader, _ materialize: Bool) throws -> FetchItem {
        guard materialize, case .stored(let row) = item else { return item }
        if let registered = registeredObject(run.entity, row) { return .object(registered) }
        guard let made = try reader.withRecord(row, in: run.table, { try object(row, view: $0, table: run.table, handle: run.handle, loading: run.loading) }) else {
            throw StrataError(.corruptRecord, "The row \(row) of \(run.entity.name) could not be read again from the snapshot its fetch read.")
        }
        return .object(made)
    }

    /// The objects of items that are objects.
    static func objects<T: PersistentModel>(_ items: [FetchItem], as type: T.Type) -> [T] {
        var objects: [AnyObject] = []
        objects.reserveCapacity(items.count)
        for item in items {
            if case .object(let o) = item { objects.append(o) }
        }
        return ModelContext.objects(objects, as: T.self)
    }

    /// The objects that are `T`s, as the `[T]` they are: an array of class references has one
    /// layout whatever the class, and each element was checked to be a `T` (the standard
    /// library reinterprets such buffers the same way when it casts arrays of classes). A `[T]`
    /// built in this unspecialized function would look up `Array<T>`'s metadata and call the
    /// generic `reserveCapacity` and `append` (Docs/Benchmarks.md, "Costs").
    static func objects<T: PersistentModel>(_ objects: [AnyObject], as type: T.Type) -> [T] {
        var all = true
        // (An object of the class itself is asked first: a dynamic cast is about a hundred
        // instructions, a point fetch's tenth of its own, W3.)
        for o in objects where ObjectIdentifier(Swift.type(of: o)) != ObjectIdentifier(T.self) && !(o is T) { all = false; break }
        return unsafeBitCast(all ? objects : objects.filter { $0 is T }, to: [T].self)
    }
}
