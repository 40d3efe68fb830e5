import Foundation
import StrataEngine

/// One result of a query before it becomes an object: a stored row, or an object of the
/// context with unsaved changes.
enum FetchItem {
    case stored(RowID)
    case object(AnyObject)
}

/// A query in the making: where the model lives and how rows are tested.
struct Query<T: PersistentModel> {
    let handle: StoreHandle
    let table: Table
    let descriptor: FetchDescriptor<T>
    let filter: ((RowID, RecordView) throws -> Bool)?
    let hints: [IndexHint]

    var entity: Entity { table.entity }
}

extension ModelContext {
    // MARK: Public API

    /// The objects the descriptor selects, in its order. Same as SwiftData's `fetch(_:)`.
    ///
    /// Every predicate Foundation can evaluate gives Foundation's answer. Conditions on unique
    /// or indexed attributes (`==`, ranges, `contains` on a constant list, `starts(with:)`) are
    /// answered from the index; the rest is evaluated on the encoded records.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        do {
            let queries = try makeQueries(descriptor)
            if queries.count > 1 { return try fetchAcrossModels(descriptor, queries) }
            let query = queries[0]
            return try query.handle.store.read { tx in
                let items = try self.items(query, tx: tx)
                return try items.compactMap { item -> T? in
                    switch item {
                    case .object(let o): return o as? T
                    case .stored(let row): return try self.materialize(row, query: query, tx: tx) as? T
                    }
                }
            }
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// How many objects the descriptor selects, without making them. Same as SwiftData's `fetchCount(_:)`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        do {
            let queries = try makeQueries(descriptor)
            if queries.count > 1 { return try fetchAcrossModels(descriptor, queries).count }
            let query = queries[0]
            let pending = try pendingState(query)
            return try query.handle.store.read { tx in
                var total = 0
                if let collection = query.table.collection {
                    if query.filter == nil && pending.excluded.isEmpty {
                        total = try tx.count(in: collection)
                    } else {
                        try visit(query, tx: tx) { row, _ in
                            if !pending.excluded.contains(row) { total += 1 }
                            return true
                        }
                    }
                }
                total += pending.objects.count
                return descriptor.paging.count(ofTotal: total)
            }
        } catch { throw StrataError.store(error, while: "count \(T.self)") }
    }

    /// The identifiers of the objects the descriptor selects, without making them.
    /// Same as SwiftData's `fetchIdentifiers(_:)`.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        do {
            let queries = try makeQueries(descriptor)
            if queries.count > 1 { return try fetchAcrossModels(descriptor, queries).map(\.persistentModelID) }
            let query = queries[0]
            return try query.handle.store.read { tx in
                try self.items(query, tx: tx).compactMap { item in
                    switch item {
                    case .stored(let row):
                        return PersistentIdentifier(entityName: query.entity.name, storeIdentifier: query.handle.identifier, rowID: Int64(row))
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
    /// in the context (unsaved) whatever `allowEscapingMutations` says.
    public func enumerate<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int = 5000,
                                              allowEscapingMutations: Bool = false, block: (T) throws -> Void) throws {
        let query: Query<T>
        let items: [FetchItem]
        do {
            let queries = try makeQueries(descriptor)
            if queries.count > 1 {
                for object in try fetchAcrossModels(descriptor, queries) { try block(object) }
                return
            }
            query = queries[0]
            items = try query.handle.store.read { try self.items(query, tx: $0) }
        } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
        let size = max(1, batchSize)
        var start = 0
        while start < items.count {
            let end = start + min(size, items.count - start)
            let batch: [T]
            do {
                batch = try query.handle.store.read { tx in
                    try items[start..<end].compactMap { item -> T? in
                        switch item {
                        case .object(let o): return o as? T
                        case .stored(let row): return try self.materialize(row, query: query, tx: tx) as? T
                        }
                    }
                }
            } catch { throw StrataError.store(error, while: "enumerate \(T.self)") }
            for object in batch { try block(object) }
            start = end
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
            let queries = try makeQueries(descriptor)
            if queries.count > 1 {
                let objects = try fetchAcrossModels(descriptor, queries).map { FetchItem.object($0) }
                return FetchResultsCollection(context: self, query: queries[0], snapshot: nil, items: objects, batchSize: max(1, batchSize))
            }
            let query = queries[0]
            let snapshot = try query.handle.store.beginRead()
            let items = try self.items(query, tx: snapshot)
            return FetchResultsCollection(context: self, query: query, snapshot: snapshot, items: items, batchSize: max(1, batchSize))
        } catch { throw StrataError.store(error, while: "fetch \(T.self)") }
    }

    /// The object with this identifier: the registered one, or one loaded from the store.
    /// Same as SwiftData's `model(for:)`, which also hands out an object for an identifier it
    /// cannot find; reading such an object's properties then stops the program.
    ///
    /// An identifier naming a model this container's schema does not have (one decoded from
    /// elsewhere) gives an object of no model of the schema: casting it to a model gives nil.
    /// `existingModel(for:)` answers nil for both cases instead.
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        if let found = try? existingModel(for: persistentModelID) { return found }
        guard let (handle, table) = container.location(ofEntityNamed: persistentModelID.entityName),
              let model = table.entity.newInstance() as? any PersistentModel else {
            return UndiscoverableModel()
        }
        let backing = ModelBacking(entity: table.entity, rowID: RowID(max(0, persistentModelID.rowID)), context: self,
                                   status: .persisted, storeIdentifier: handle.identifier)
        for p in table.entity.properties { p.clearValue(of: model) }
        attach(model, entity: table.entity, backing: backing)
        return model
    }

    /// Strata extra: the object with this identifier, or nil if the store has no such object.
    public func existingModel(for persistentModelID: PersistentIdentifier) throws -> (any PersistentModel)? {
        guard let (handle, table) = container.location(ofEntityNamed: persistentModelID.entityName), persistentModelID.rowID > 0 else { return nil }
        let row = RowID(persistentModelID.rowID)
        if let registered = registeredObject(table.entity, row) { return registered as? any PersistentModel }
        guard let collection = table.collection else { return nil }
        do {
            return try handle.store.read { tx in
                try tx.withRecord(row, in: collection) { raw in
                    try self.materialize(row, view: try RecordView(raw, layouts: table.layouts), entity: table.entity, handle: handle)
                } as? any PersistentModel
            }
        } catch { throw StrataError.store(error, while: "load \(persistentModelID)") }
    }

    /// The object with this identifier if this context has it registered. Same as SwiftData.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        guard let (_, table) = container.location(ofEntityNamed: persistentModelID.entityName), persistentModelID.rowID > 0 else { return nil }
        return registeredObject(table.entity, RowID(persistentModelID.rowID)) as? T
    }

    /// Deletes every object of `model` that `predicate` selects (all without a predicate), in
    /// the store and without making objects; the deletion is saved by the next `save()`.
    /// Same as SwiftData's `delete(model:where:includeSubclasses:)`.
    public func delete<T: PersistentModel>(model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true) throws {
        var descriptor = FetchDescriptor<T>(predicate: predicate)
        descriptor.includePendingChanges = false
        do {
            for query in try makeQueries(descriptor, includeSubclasses: includeSubclasses) {
                try delete(query, predicate: predicate)
            }
        } catch { throw StrataError.store(error, while: "delete \(T.self) objects") }
    }

    private func delete<T: PersistentModel>(_ query: Query<T>, predicate: Predicate<T>?) throws {
        var rows: [RowID] = []
        if query.table.collection != nil {
            try query.handle.store.read { tx in
                try visit(query, tx: tx) { row, _ in rows.append(row); return true }
            }
        }
        // Unsaved objects the predicate selects go too.
        for object in inserted.objects {
            guard let t = object as? T, backingOf(object)?.entity === query.entity else { continue }
            if try predicate.map({ try $0.evaluate(t) }) ?? true { delete(t) }
        }
        for row in rows {
            // A model with relationships is deleted object by object, so its delete rules apply.
            let object = registeredObject(query.entity, row) ?? (query.entity.needsRegisteredObjects ? relatedObject(query.entity, row) : nil)
            if let object = object as? T {
                delete(object)
            } else {
                batchDeletes[ObjectIdentifier(query.entity), default: []].insert(row)
            }
        }
    }

    // MARK: The pipeline

    func makeQuery<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Query<T> {
        let (handle, table) = try container.location(of: T.self)
        return try makeQuery(descriptor, handle: handle, table: table)
    }

    /// The queries a fetch of `T` runs: one per model (its own and, for a base class, those of
    /// its subclasses in the schema).
    func makeQueries<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, includeSubclasses: Bool = true) throws -> [Query<T>] {
        try container.locations(of: T.self, includeSubclasses: includeSubclasses).map { try makeQuery(descriptor, handle: $0.0, table: $0.1) }
    }

    func makeQuery<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, handle: StoreHandle, table: Table) throws -> Query<T> {
        guard let predicate = descriptor.predicate else {
            return Query(handle: handle, table: table, descriptor: descriptor, filter: nil, hints: [])
        }
        let compiler = RowCompiler(entity: table.entity, input: predicate.variable.key, model: T.self)
        let hints = (predicate.expression as? any IndexHinting)?.indexHints(compiler) ?? []
        if let compiled = compiler.compile(predicate.expression) {
            return Query(handle: handle, table: table, descriptor: descriptor, filter: { _, view in try compiled(view) }, hints: hints)
        }
        // The slow path: an object made from the record, and Foundation's own evaluation. A model
        // with relationships is evaluated on its registered object, so that key paths through
        // relationships can load the related objects.
        let entity = table.entity
        let filter: (RowID, RecordView) throws -> Bool
        if !entity.needsRegisteredObjects {
            let store = handle.identifier
            filter = { row, view in
                guard let model = try ModelContext.detachedObject(row, view: view, entity: entity, storeIdentifier: store) as? T else { return false }
                return try predicate.evaluate(model)
            }
        } else {
            filter = { [unowned self] row, view in
                guard let model = try self.materialize(row, view: view, entity: entity, handle: handle) as? T else { return false }
                return try predicate.evaluate(model)
            }
        }
        return Query(handle: handle, table: table, descriptor: descriptor, filter: filter, hints: hints)
    }

    /// Unsaved objects the query selects, and the stored rows they (or deletions) replace.
    /// A predicate that throws for an unsaved object (a forced unwrap of nil) fails the fetch,
    /// as it does for a stored row and as Foundation's `filter { try predicate.evaluate($0) }` does.
    func pendingState<T: PersistentModel>(_ query: Query<T>) throws -> (objects: [AnyObject], excluded: Set<RowID>) {
        var excluded = batchDeletes[ObjectIdentifier(query.entity)] ?? []
        guard query.descriptor.includePendingChanges else { return ([], excluded) }
        var objects: [AnyObject] = []
        for object in deleted.objects {
            if let b = backingOf(object), b.entity === query.entity { excluded.insert(b.rowID) }
        }
        for object in changed.objects + inserted.objects {
            guard let b = backingOf(object), b.entity === query.entity, let model = object as? T else { continue }
            excluded.insert(b.rowID)
            if let predicate = query.descriptor.predicate {
                guard try predicate.evaluate(model) else { continue }
            }
            objects.append(object)
        }
        return (objects, excluded)
    }

    /// Visits the stored rows that pass the query's filter, in row order, until `body` returns false.
    func visit<T: PersistentModel>(_ query: Query<T>, tx: ReadTransaction, _ body: (RowID, RecordView) throws -> Bool) throws {
        guard let collection = query.table.collection else { return }
        let filter = query.filter
        let source = try QueryPlanner.source(hints: query.hints, table: query.table, storeIdentifier: query.handle.identifier, tx: tx)
        func check(_ row: RowID, _ raw: UnsafeRawBufferPointer) throws -> Bool {
            let view = try RecordView(raw, layouts: query.table.layouts)
            if let filter, try !filter(row, view) { return true }
            return try body(row, view)
        }
        switch source {
        case .scan:
            try tx.forEachRecord(in: collection) { row, raw in try check(row, raw) }
        case .rows(let rows):
            for row in rows {
                if try tx.withRecord(row, in: collection, { try check(row, $0) }) == false { return }
            }
        case .ranges(let index, let ranges):
            var rows = Set<RowID>()
            for range in ranges {
                var cursor = try tx.entries(in: index, range: range)
                while let entry = try cursor.next() { rows.insert(entry.row) }
            }
            for row in rows.sorted() {
                if try tx.withRecord(row, in: collection, { try check(row, $0) }) == false { return }
            }
        }
    }

    /// The query's results in order, with offset and limit applied.
    func items<T: PersistentModel>(_ query: Query<T>, tx: ReadTransaction) throws -> [FetchItem] {
        let descriptor = query.descriptor
        let pending = try pendingState(query)
        let paging = descriptor.paging
        func page<E>(_ all: [E]) -> [E] { paging.apply(all) }
        if descriptor.sortBy.isEmpty {
            // Row order: stored rows and unsaved objects merged by row id.
            var stored: [RowID] = []
            let wanted = paging.needed
            try visit(query, tx: tx) { row, _ in
                if !pending.excluded.contains(row) { stored.append(row) }
                if let wanted, pending.objects.isEmpty { return stored.count < wanted }
                return true
            }
            if pending.objects.isEmpty { return page(stored.map { .stored($0) }) }
            var merged: [(RowID, FetchItem)] = stored.map { ($0, .stored($0)) }
            for o in pending.objects { merged.append((backingOf(o)?.rowID ?? .max, .object(o))) }
            merged.sort { $0.0 < $1.0 }
            return page(merged.map(\.1))
        }
        if pending.objects.isEmpty, query.hints.isEmpty || query.filter == nil,
           let ordered = try indexOrder(query, tx: tx, excluded: pending.excluded, paging: paging) {
            return ordered.map { .stored($0) }
        }
        // General order: sort with the descriptors, ties in row order (the order a fetch without
        // sort descriptors gives, pending objects included). Without pending changes, a row
        // sorts on its stored values (as a store query does) even if its registered object has
        // unsaved changes. With a limit, only the best `offset + limit` are kept (top-k), and
        // rows that do not make it are never registered.
        let sortBy = descriptor.sortBy
        func before(_ a: (row: RowID, key: T, object: T?), _ b: (row: RowID, key: T, object: T?)) -> Bool {
            for d in sortBy {
                switch d.compare(a.key, b.key) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a.row < b.row
        }
        let keep = paging.needed
        var best: [(row: RowID, key: T, object: T?)] = []
        func offer(_ entry: (row: RowID, key: T, object: T?)) {
            guard let keep else { best.append(entry); return }
            if keep == 0 { return }
            if best.count == keep, let last = best.last, !before(entry, last) { return }
            var low = 0, high = best.count
            while low < high {
                let mid = (low + high) / 2
                if before(entry, best[mid]) { high = mid } else { low = mid + 1 }
            }
            best.insert(entry, at: low)
            if best.count > keep { best.removeLast() }
        }
        for o in pending.objects {
            guard let t = o as? T else { continue }
            offer((backingOf(o)?.rowID ?? .max, t, t))
        }
        let entity = query.entity
        try visit(query, tx: tx) { row, view in
            guard !pending.excluded.contains(row) else { return true }
            let registered = registeredObject(entity, row) as? T
            if let registered, descriptor.includePendingChanges || !registered.hasChanges {
                offer((row, registered, registered))
                return true
            }
            if registered == nil && entity.needsRegisteredObjects {
                // Sort keys may go through relationships: use the registered object.
                guard let object = try materialize(row, view: view, entity: entity, handle: query.handle) as? T else { return true }
                offer((row, object, object))
                return true
            }
            guard let key = try ModelContext.detachedObject(row, view: view, entity: entity, storeIdentifier: query.handle.identifier) as? T else { return true }
            offer((row, key, registered))
            return true
        }
        if keep == nil { best.sort(by: before) }
        return try page(best).compactMap { entry -> FetchItem? in
            if let object = entry.object { return .object(object) }
            guard let o = try materialize(entry.row, query: query, tx: tx) else { return nil }
            return .object(o)
        }
    }

    /// Results in the order of an index, when one sort descriptor names an indexed property
    /// whose index order is Foundation's order.
    private func indexOrder<T: PersistentModel>(_ query: Query<T>, tx: ReadTransaction, excluded: Set<RowID>, paging: Paging) throws -> [RowID]? {
        guard query.descriptor.sortBy.count == 1, let sort = query.descriptor.sortBy.first, let keyPath = sort.keyPath,
              let property = query.entity.property(for: keyPath), property.keyPreservesOrder,
              let (index, _) = query.table.singleIndex[property.index],
              let collection = query.table.collection else { return nil }
        var rows: [RowID] = []
        var skipped = 0
        var cursor = try tx.entries(in: index, reverse: sort.order == .reverse)
        while let entry = try cursor.next() {
            if let limit = paging.limit, rows.count >= limit { break }
            if excluded.contains(entry.row) { continue }
            if let filter = query.filter {
                let passes = try tx.withRecord(entry.row, in: collection) { try filter(entry.row, try RecordView($0, layouts: query.table.layouts)) } ?? false
                if !passes { continue }
            }
            if skipped < paging.offset { skipped += 1; continue }
            rows.append(entry.row)
        }
        return rows
    }

    // MARK: Making objects

    /// An object made from a record to evaluate a predicate or a sort on it: its values and
    /// its row's identity (`persistentModelID`), never registered, tracked or saved.
    static func detachedObject(_ row: RowID, view: RecordView, entity: Entity, storeIdentifier: String?) throws -> AnyObject {
        let object = entity.newInstance()
        for p in entity.properties { try p.decodeValue(try view.field(p.index), into: object) }
        let backing = ModelBacking(identityOf: row, entity: entity, storeIdentifier: storeIdentifier)
        backing.object = object
        for p in entity.properties { p.setBacking(backing, of: object) }
        return object
    }

    /// The registered object of a row, or a new one made from its record.
    func materialize(_ row: RowID, view: RecordView, entity: Entity, handle: StoreHandle) throws -> AnyObject {
        if let existing = registeredObject(entity, row) { return existing }
        let object = entity.newInstance()
        for p in entity.properties { try p.decodeValue(try view.field(p.index), into: object) }
        let backing = ModelBacking(entity: entity, rowID: row, context: self, status: .persisted, storeIdentifier: handle.identifier)
        if !entity.externals.isEmpty {
            // External values load when read, and a getter cannot throw: a missing blob file is
            // reported here, when the object is made, as damage rather than a trap later.
            for p in entity.externals {
                guard let blob = p.external(of: object)?.blob, blob != 0 else { continue }
                guard try handle.store.read({ try $0.blobFileExists(BlobID(rawValue: blob)) }) else {
                    throw StrataError(.corruptRecord, "\(entity.name) row \(row): the file of its \(p.name) value (blob \(blob)) is missing. The store is damaged; run `strata verify`.")
                }
            }
            backing.externalStore = handle
        }
        attach(object, entity: entity, backing: backing)
        register(object, backing)
        return object
    }

    func materialize<T>(_ row: RowID, query: Query<T>, tx: ReadTransaction) throws -> AnyObject? {
        if let existing = registeredObject(query.entity, row) { return existing }
        guard let collection = query.table.collection else { return nil }
        return try tx.withRecord(row, in: collection) { raw in
            try materialize(row, view: try RecordView(raw, layouts: query.table.layouts), entity: query.entity, handle: query.handle)
        }
    }
}

/// The results of `fetch(_:batchSize:)`: a random-access collection that makes its objects a
/// batch at a time when they are first read, keeping only the current batch.
/// Same role as SwiftData's `FetchResultsCollection`.
public struct FetchResultsCollection<T: PersistentModel>: RandomAccessCollection {
    private let context: ModelContext
    private let query: Query<T>
    /// The snapshot the results came from, read by every batch (nil when every result is an object).
    private let snapshot: ReadTransaction?
    private let items: [FetchItem]
    private let batchSize: Int
    private let cache = BatchCache()

    init(context: ModelContext, query: Query<T>, snapshot: ReadTransaction?, items: [FetchItem], batchSize: Int) {
        self.context = context
        self.query = query
        self.snapshot = snapshot
        self.items = items
        self.batchSize = batchSize
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { items.count }

    /// The object at `position`. Stops the program if its batch cannot be read (an I/O
    /// error; see `ModelContext.fetch(_:batchSize:)`).
    public subscript(position: Int) -> T {
        let batch = position / batchSize
        if cache.batch != batch {
            do {
                cache.objects = try objects(ofBatch: batch)
                cache.batch = batch
            } catch {
                preconditionFailure("Reading a batch of \(T.self) failed: \(error)")
            }
        }
        guard let object = cache.objects[position - batch * batchSize] as? T else {
            preconditionFailure("A fetched object is not a \(T.self).")
        }
        return object
    }

    private func objects(ofBatch batch: Int) throws -> [AnyObject] {
        let start = batch * batchSize
        let end = start + Swift.min(batchSize, items.count - start)
        return try items[start..<end].map { item -> AnyObject in
            switch item {
            case .object(let o): return o
            case .stored(let row):
                guard let snapshot, let o = try context.materialize(row, query: query, tx: snapshot) else {
                    throw StrataError(.corruptRecord, "The row \(row) of \(T.self) could not be read again from the snapshot its fetch read.")
                }
                return o
            }
        }
    }
}

final class BatchCache {
    var batch = -1
    var objects: [AnyObject] = []
}

extension ModelContext {
    /// A fetch of a base class with subclasses in the schema: each model's matches, merged,
    /// sorted with the descriptors (ties: model order, then row order), then paged.
    /// Differs from SwiftData only in that subclass rows are not interleaved by insertion time.
    func fetchAcrossModels<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, _ queries: [Query<T>]) throws -> [T] {
        var all: [T] = []
        for query in queries {
            var unpaged = query.descriptor
            unpaged.fetchOffset = nil
            unpaged.fetchLimit = nil
            let q = Query(handle: query.handle, table: query.table, descriptor: unpaged, filter: query.filter, hints: query.hints)
            all += try q.handle.store.read { tx in
                try self.items(q, tx: tx).compactMap { item -> T? in
                    switch item {
                    case .object(let o): return o as? T
                    case .stored(let row): return try self.materialize(row, query: q, tx: tx) as? T
                    }
                }
            }
        }
        if !descriptor.sortBy.isEmpty {
            let sortBy = descriptor.sortBy
            all = all.enumerated().sorted { a, b in
                for d in sortBy {
                    switch d.compare(a.element, b.element) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        return descriptor.paging.apply(all)
    }
}
