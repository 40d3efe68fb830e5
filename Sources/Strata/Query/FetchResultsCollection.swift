import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The results of `fetch(_:batchSize:)`: a random-access collection that makes its objects a
/// batch at a time when they are first read, keeping only the current batch.
/// Same role as SwiftData's `FetchResultsCollection`.
public struct FetchResultsCollection<T: PersistentModel>: RandomAccessCollection {
    private let context: ModelContext
    private let run: QueryRun
    /// The snapshot the results came from, read by every batch (nil when every result is an object).
    private let snapshot: (any StorageReader)?
    private let items: [FetchItem]
    private let batchSize: Int
    private let cache = BatchCache()
    /// A custom store whose rows each batch reads when it is first subscripted (the items
    /// are its rows, from their identifiers).
    private let custom: DataStoreStorage?

    init(context: ModelContext, run: QueryRun, snapshot: (any StorageReader)?, items: [FetchItem], batchSize: Int,
         loadsBatchesFrom custom: DataStoreStorage? = nil) {
        self.context = context
        self.run = run
        self.snapshot = snapshot
        self.items = items
        self.batchSize = batchSize
        self.custom = custom
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
        if let custom {
            return try objects(items[start..<end], from: custom)
        }
        return try items[start..<end].map { item -> AnyObject in
            if case .object(let o) = item { return o }
            guard let snapshot, case .object(let o) = try context.made(item, run, snapshot, true) else {
                throw StrataError(.corruptRecord, "A row of \(T.self) could not be read again from the snapshot its fetch read.")
            }
            return o
        }
    }
}

extension FetchResultsCollection {
    /// A batch of a custom store's rows: those the context has not registered read with one
    /// fetch, made, then let go by the bridge (the objects hold their values).
    private func objects(_ batch: ArraySlice<FetchItem>, from custom: DataStoreStorage) throws -> [AnyObject] {
        let rows = batch.compactMap { item -> RowID? in
            guard case .stored(let row) = item, context.registeredObject(run.entity, row) == nil else { return nil }
            return row
        }
        // Asked once more if it fails: a server's pool gives the second try a new connection
        // when the first one's was lost. A second failure stops the program (a collection
        // cannot throw; `fetch(_:batchSize:)`'s documentation says so).
        do { try custom.load(rows, run.entity) } catch { try custom.load(rows, run.entity) }
        defer { custom.release(rows, run.entity) }
        return try batch.map { item -> AnyObject in
            guard case .stored(let row) = item else {
                if case .object(let o) = item { return o }
                throw StrataError(.corruptRecord, "A fetched item of \(T.self) is neither a row nor an object.")
            }
            if let registered = context.registeredObject(run.entity, row) { return registered }
            // Deleted by another writer since the identifiers were read: an object with the
            // model's initial values and this identifier, `isDeleted`, in no context.
            // (Asked of the store again if the bridge let the record go since: its absence
            // alone says nothing, `BridgeState.forgetOldRecords`.)
            guard try custom.record(row, run.entity) != nil else {
                let gone = run.entity.newInstance()
                let backing = ModelBacking(object: gone, entity: run.entity, identityOf: row, handle: run.handle)
                backing.status = .deleted
                run.entity.attach(backing, to: gone)
                return gone
            }
            guard let snapshot, case .object(let o) = try context.made(item, run, snapshot, true) else {
                throw StrataError(.corruptRecord, "A row of \(T.self) could not be read from its store.")
            }
            return o
        }
    }
}

final class BatchCache {
    var batch = -1
    var objects: [AnyObject] = []
}
