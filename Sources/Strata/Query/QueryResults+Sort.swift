import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// General order: sorted with the descriptors, ties in row order (the order a fetch without
    /// sort descriptors gives, pending objects included). Without pending changes, a row sorts
    /// on its stored values (as a store query does) even if its registered object has unsaved
    /// changes, and so do the objects its relationships reach (`ResultSort.asStored`). With a
    /// limit, only the best `offset + limit` are kept (top-k), and rows that do not make it are
    /// never registered; the rows of the page are read again to make them.
    func sortedResults(_ run: QueryRun, _ sort: ResultSort, _ pending: PendingResults,
                       _ reader: any StorageReader, _ materialize: Bool) throws -> [FetchItem] {
        var rows = try StoredRows(run, excluded: pending.excluded, reader: reader)
        let paging = rows.paging
        var best = TopResults(compare: sort.compare, keep: paging.needed)
        for o in pending.objects { best.offer((backingOf(o)?.rowID ?? .max, o, o)) }
        let entity = run.entity
        try rows.visit(reader) { row, view in
            let registered = registeredBacking(entity, row)
            if let asStored = sort.asStored, entity.needsRegisteredObjects {
                // Without pending changes: the sort reads the row, and what it reaches, as stored.
                best.offer((row, try asStored.object(row, view: view, table: run.table, handle: run.handle), registered?.object))
            } else if let registered, run.includePendingChanges || !(registered.isChanged || registered.status != .persisted) {
                best.offer((row, registered.object, registered.object))
            } else if registered == nil && entity.needsRegisteredObjects {
                // Sort keys may go through relationships: use the registered object.
                let made = try object(row, view: view, table: run.table, handle: run.handle, loading: run.loading)
                best.offer((row, made, made))
            } else {
                let key = try ModelContext.scratchObject(row, view: view, entity: entity, handle: run.handle, loading: sort.properties)
                best.offer((row, key, registered?.object))
            }
            return true
        }
        return try paging.apply(best.sorted()).map { entry in
            if let object = entry.object { return .object(object) }
            return try made(.stored(entry.row), run, reader, materialize)
        }
    }
}

/// The best results so far by the sort descriptors (all of them without a limit), ties in row
/// order.
struct TopResults {
    typealias Entry = (row: RowID, key: AnyObject, object: AnyObject?)
    let compare: (AnyObject, AnyObject) -> ComparisonResult
    /// How many to keep (nil: all).
    let keep: Int?
    private var entries: [Entry] = []

    init(compare: @escaping (AnyObject, AnyObject) -> ComparisonResult, keep: Int?) {
        self.compare = compare
        self.keep = keep
    }

    func before(_ a: Entry, _ b: Entry) -> Bool {
        switch compare(a.key, b.key) {
        case .orderedAscending: return true
        case .orderedDescending: return false
        case .orderedSame: return a.row < b.row
        }
    }

    mutating func offer(_ entry: Entry) {
        guard let keep else { return entries.append(entry) }
        if keep == 0 { return }
        if entries.count == keep, let last = entries.last, !before(entry, last) { return }
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if before(entry, entries[mid]) { high = mid } else { low = mid + 1 }
        }
        entries.insert(entry, at: low)
        if entries.count > keep { entries.removeLast() }
    }

    /// The entries in order.
    func sorted() -> [Entry] { keep == nil ? entries.sorted(by: before) : entries }
}
