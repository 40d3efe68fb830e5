import Foundation
import StrataEngine

extension ModelContext {
    /// General order: sorted with the descriptors, ties in row order (the order a fetch without
    /// sort descriptors gives, pending objects included). Without pending changes, a row sorts
    /// on its stored values (as a store query does) even if its registered object has unsaved
    /// changes. With a limit, only the best `offset + limit` are kept (top-k), and rows that do
    /// not make it are never registered; the rows of the page are read again to make them.
    func sortedResults<T: PersistentModel>(_ run: QueryRun<T>, _ pending: (objects: [AnyObject], excluded: Set<RowID>),
                                           _ paging: Paging, _ reader: any StorageReader, _ materialize: Bool) throws -> [FetchItem] {
        var best = TopResults<T>(sortBy: run.descriptor.sortBy, keep: paging.needed)
        for o in pending.objects {
            guard let t = o as? T else { continue }
            best.offer((backingOf(o)?.rowID ?? .max, t, t))
        }
        let entity = run.entity
        let sortProperties = sortKeyProperties(run.descriptor.sortBy, entity: entity)
        var rows = try StoredRows(run, excluded: pending.excluded, reader: reader)
        try rows.visit(reader) { row, view in
            let registered = registeredObject(entity, row) as? T
            if let registered, run.descriptor.includePendingChanges || !registered.hasChanges {
                best.offer((row, registered, registered))
            } else if registered == nil && entity.needsRegisteredObjects {
                // Sort keys may go through relationships: use the registered object.
                if let made = try object(row, view: view, table: run.table, handle: run.handle) as? T { best.offer((row, made, made)) }
            } else if let key = try ModelContext.scratchObject(row, view: view, entity: entity, handle: run.handle, loading: sortProperties) as? T {
                best.offer((row, key, registered))
            }
            return true
        }
        return try paging.apply(best.sorted()).map { entry in
            if let object = entry.object { return .object(object) }
            return try made(.stored(entry.row), run, reader, materialize)
        }
    }

    /// The properties the sort descriptors read, when each reads one property directly (a
    /// sort key object needs only those); nil when one goes further.
    private func sortKeyProperties<T>(_ sortBy: [SortDescriptor<T>], entity: Entity) -> [Int]? {
        var indexes: [Int] = []
        for d in sortBy {
            guard let keyPath = d.keyPath, let property = entity.property(for: keyPath) else { return nil }
            if !indexes.contains(property.index) { indexes.append(property.index) }
        }
        return indexes
    }
}

/// The best results so far by the sort descriptors (all of them without a limit), ties in row
/// order.
struct TopResults<T: PersistentModel> {
    typealias Entry = (row: RowID, key: T, object: T?)
    let sortBy: [SortDescriptor<T>]
    /// How many to keep (nil: all).
    let keep: Int?
    private var entries: [Entry] = []

    init(sortBy: [SortDescriptor<T>], keep: Int?) {
        self.sortBy = sortBy
        self.keep = keep
    }

    func before(_ a: Entry, _ b: Entry) -> Bool {
        for d in sortBy {
            switch d.compare(a.key, b.key) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return a.row < b.row
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
