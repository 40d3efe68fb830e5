import Foundation
import StrataEngine

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

    init(context: ModelContext, run: QueryRun, snapshot: (any StorageReader)?, items: [FetchItem], batchSize: Int) {
        self.context = context
        self.run = run
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
            if case .object(let o) = item { return o }
            guard let snapshot, case .object(let o) = try context.made(item, run, snapshot, true) else {
                throw StrataError(.corruptRecord, "A row of \(T.self) could not be read again from the snapshot its fetch read.")
            }
            return o
        }
    }
}

final class BatchCache {
    var batch = -1
    var objects: [AnyObject] = []
}
