import Dispatch
import Foundation
import Synchronization

/// A store: one append-only data file (plus a blobs folder and a lock file beside it)
/// holding collections of records by row id, their secondary indexes, blobs and named
/// metadata.
///
/// One writer at a time, in this process or another (a second one gets `.locked`); any
/// number of readers, each seeing one commit, here or in other processes (a read-only store
/// reads the commits the writer publishes).
///
/// ```swift
/// let store = try Store(path: "/var/lib/app/data.strata")
/// try store.write { tx in
///     let users = try tx.createCollection(named: "users")
///     let byEmail = try tx.createIndex(named: "email", on: users, unique: true)
///     let row = try tx.allocateRowID(in: users)
///     try tx.put(Array("Ada".utf8), row: row, in: users,
///                indexKeys: [IndexKey(byEmail, KeyEncoding.encode("ada@example.com"))])
/// }
/// let row = try store.read { try $0.lookup(KeyEncoding.encode("ada@example.com"), in: byEmail) }
/// ```
public final class Store: Sendable {
    /// The path of the data file.
    public let path: String
    /// The options the store was opened with.
    public let options: StoreOptions
    let fileSystem: any FileSystem
    let blobs: BlobFolder
    /// Nil only for a read-only store whose lock file could not be opened (a read-only folder).
    let lockFile: LockFile?
    let state: Mutex<State>
    /// Held by the one write transaction (or compaction) at a time.
    let writerGate = DispatchSemaphore(value: 1)

    struct State {
        var snapshot: Snapshot
        var writer: AppendWriter?
        /// Set by a failed write or sync: the next writing operation reopens the store file
        /// (`reopenAfterFailure`) before it goes on; nothing more is written through the
        /// descriptor that failed.
        var failure: StoreError?
        var closed = false
        /// Set once another file is found at the store's path: nothing more is written.
        var replaced = false
        /// A read-only store with no writer alive: what `stat` said of the path when its last
        /// whole commit was last looked for (see `followFileWithoutWriter`); nil while a writer
        /// is alive.
        var fileWithoutWriter: FileStatus?
        var nextBlobID: UInt64
        /// Live read transactions, by the sequence of the commit they read.
        var readers = ReaderCounts()
        /// The read transaction of `snapshot`, shared by this process's readers (see
        /// `beginRead`); let go (outside the lock) when another snapshot takes its place.
        var sharedReader: SharedReader?

        /// Makes `snapshot` the current one; the shared reader of the one before, which the
        /// caller releases after the lock (its release takes the lock).
        mutating func setSnapshot(_ snapshot: Snapshot) -> SharedReader? {
            self.snapshot = snapshot
            defer { sharedReader = nil }
            return sharedReader
        }
        /// Blobs deleted by a commit (its sequence) whose files older readers may still read.
        var retiredBlobs: [(sequence: UInt64, id: UInt64)] = []
        /// The last commit of this session known to be on disk (synced).
        var durableSequence: UInt64 = 0

        /// The retired blobs that no live reader of this store can see any more, and that no
        /// power cut can bring back: a blob file may go only once the commit that deleted it is
        /// durable (with deferred durability, a power cut could otherwise reopen on an earlier
        /// commit that still refers to the removed file).
        func unreadableBlobs() -> [(sequence: UInt64, id: UInt64)] {
            // A blob deleted by commit S is visible only to readers of commits before S.
            let oldest = readers.oldest ?? .max
            return retiredBlobs.filter { $0.sequence <= oldest && $0.sequence <= durableSequence }
        }
    }

    /// The largest commit body written with a single sync; larger ones sync the body first.
    static let singleSyncBodyLimit: UInt64 = 256 * 1024
    /// A header and no intact commit in a file this small is an interrupted creation.
    static let creationSizeLimit: UInt64 = 4096
    /// The size of a new store (header and commit record 0).
    static let newStoreSize: UInt64 = {
        var catalog: [UInt8] = []
        Catalog().encode(into: &catalog)
        return UInt64(FileHeader.size + CommitRecord.fixedSize + catalog.count + CommitRecord.trailerSize)
    }()

    /// Opens the store at `path`, creating it if it does not exist (unless
    /// `options.createIfMissing` is false or the store is opened read-only).
    ///
    /// Opening reads the header and the last commit record, checks the last commit, and cuts
    /// off a torn tail left by a crash. It does not read the log: its cost does not grow with
    /// the number of records. A read-only open while another process writes reads the last
    /// commit that writer published.
    ///
    /// - Throws: `StoreError` with `.locked` (another writer has it open), `.notAStore`,
    ///   `.newerFormat`, `.olderFormat` (convert it with `strata upgrade`), `.corrupt`,
    ///   `.notFound` (no file and not creating), `.ioFailure`.
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws {
        try self.init(path: path, options: options, fileSystem: DiskFileSystem())
    }

    /// Opens a store through another file system (the fault seam used by tests).
    package init(path: String, options: StoreOptions, fileSystem: any FileSystem) throws {
        self.path = path
        self.options = options
        self.fileSystem = fileSystem
        self.blobs = BlobFolder(path: path + ".blobs", fileSystem: fileSystem, storePath: path)
        if fileSystem.isDirectory(path) {
            throw StoreError.opening(SystemError(call: "open", path: path, errno: SystemError.isADirectory), path: path,
                                     readOnly: options.readOnly, creating: false)
        }
        if !fileSystem.fileExists(path) && (options.readOnly || !options.createIfMissing) {
            throw StoreError(.notFound, "There is no store at this path. Check the path, or open it writable to create it.", path: path)
        }
        let lock = try LockFile.open(storePath: path, fileSystem: fileSystem, writable: !options.readOnly)
        self.lockFile = lock
        let opened: OpenedFile
        do {
            if let lock, !options.readOnly {
                opened = try StoreOpening.openForWriting(path: path, options: options, fileSystem: fileSystem, lock: lock)
            } else {
                opened = try StoreOpening.openForReading(path: path, fileSystem: fileSystem, lock: lock)
            }
        } catch let error as StoreError where error.code == .notAStore {
            // A file that is not a store (a wrong path) is left as it was found: without a lock
            // file beside it that this open made. (Anyone else opening it now is refused too.)
            if let lock, lock.created { try? fileSystem.removeFile(lock.path) }
            throw error
        }
        self.state = Mutex(State(snapshot: opened.snapshot, writer: opened.writer, nextBlobID: opened.snapshot.catalog.nextBlobID))
        if opened.writer != nil { publishToOtherProcesses(opened.snapshot) }
    }

    // MARK: Transactions

    /// Runs `body` in a read transaction on the latest commit.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try body(beginRead())
    }

    /// Begins a read transaction on the latest commit. It holds that commit's pages until it is released.
    ///
    /// Readers of the commit that is current share one transaction (it only reads, and the
    /// commit's pages are there anyway): beginning a read costs a lock and a retain, where
    /// making, registering and releasing one cost a tenth of a point fetch. The store lets go
    /// of it when another commit is published, so it never keeps an older commit's pages or
    /// blob files; readers that still hold it keep them until they let go.
    public func beginRead() throws -> ReadTransaction {
        if options.readOnly, let lockFile { return try beginForeignRead(lockFile) }
        let (shared, stale) = try state.withLock { s -> (SharedReader, SharedReader?) in
            if s.closed { throw closedError() }
            if let shared = s.sharedReader, shared.transaction.base.sequence == s.snapshot.sequence,
               shared.transaction.base.map === s.snapshot.map {
                return (shared, nil)
            }
            s.readers[s.snapshot.sequence, default: 0] += 1
            let tx = ReadTransaction(store: self, snapshot: s.snapshot)
            tx.isRegistered = true
            let stale = s.sharedReader
            s.sharedReader = SharedReader(transaction: tx)
            return (SharedReader(transaction: tx), stale)
        }
        _ = consume stale   // released here, outside the lock
        return shared.transaction
    }

    /// Runs `body` in a write transaction and commits it when `body` returns; rolls back if it throws.
    ///
    /// After a failed write or sync, the next write transaction first reopens the store file
    /// (see `Store+Reopen.swift`): once the disk works again (space freed), writing goes on.
    ///
    /// - Throws: whatever `body` throws, or `StoreError` from the commit (`.diskFull`,
    ///   `.ioFailure`, `.readOnly`, `.closed`; `.writesRefused` if a failed compaction left a
    ///   file the store cannot go on with).
    @discardableResult
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        let tx = try beginWrite()
        do {
            let result = try body(tx)
            try tx.commit()
            return result
        } catch {
            tx.rollback()
            throw error
        }
    }

    /// Begins the write transaction, waiting while another one is open.
    /// Commit it with `commit()` or drop it with `rollback()`.
    public func beginWrite() throws -> WriteTransaction {
        if options.readOnly {
            throw StoreError(.readOnly, "The store was opened read-only; open it without readOnly to change it.", path: path)
        }
        writerGate.wait()
        do {
            // (After a failure first: a compaction that failed after its rename left its file at
            // the path, which the reopen adopts.)
            try reopenAfterFailure()
            try checkStillAtPath()
            let (snapshot, writer) = try state.withLock { s -> (Snapshot, AppendWriter) in
                if s.closed { throw closedError() }
                guard let writer = s.writer else {
                    throw StoreError(.readOnly, "The store was opened read-only.", path: path)
                }
                return (s.snapshot, writer)
            }
            return WriteTransaction(store: self, snapshot: snapshot, writer: writer)
        } catch {
            endWriting()
            throw error
        }
    }

    func closedError() -> StoreError {
        StoreError(.closed, "The store has been closed; open it again to use it.", path: path)
    }

    /// After an earlier write or sync failed, reopens the store file before writing again
    /// (see `reopenAfterFailure`): for work that writes outside a write transaction (sync,
    /// compaction). The caller holds `writerGate`.
    func checkNotFailed() throws {
        try reopenAfterFailure()
    }

    // MARK: Called by transactions

    /// Makes a commit the one new transactions read, here and in other processes.
    func publish(_ snapshot: Snapshot, durable: Bool) {
        let stale = state.withLock { $0.setSnapshot(snapshot) }
        _ = consume stale
        publishToOtherProcesses(snapshot)
    }

    func publishToOtherProcesses(_ snapshot: Snapshot) {
        lockFile?.publish(PublishedCommit(salt: snapshot.file.salt, sequence: snapshot.sequence, offset: snapshot.commitOffset, end: snapshot.end))
    }

    func fail(_ error: StoreError) {
        state.withLock { s in if s.failure == nil { s.failure = error } }
    }

    /// For `reopenAfterFailure`: the failure, the last commit and where the synced bytes end;
    /// nil when no write or sync has failed (or the store is closed: it has no writer).
    func failureToRecover() -> (failure: StoreError, snapshot: Snapshot, syncedEnd: UInt64)? {
        state.withLock { s in
            guard let failure = s.failure, let writer = s.writer else { return nil }
            return (failure, s.snapshot, writer.syncedEnd)
        }
    }

    /// For `reopenAfterFailure`: goes on with the reopened file (the writer's lock, in the
    /// lock file, stays as it is). A store closed meanwhile stays closed.
    func resume(snapshot: Snapshot, writer: AppendWriter) {
        let stale = state.withLock { s -> SharedReader? in
            guard !s.closed else { return nil }
            s.writer = writer
            s.failure = nil
            return s.setSnapshot(snapshot)
        }
        _ = consume stale
        publishToOtherProcesses(snapshot)
    }

    func currentSnapshot() -> Snapshot { state.withLock { $0.snapshot } }
}

/// The read transaction a store's readers of its current commit share. It only reads (its
/// pages are checked through atomic bits; nothing of it changes after it is made), so threads
/// may use it at once.
struct SharedReader: @unchecked Sendable {
    let transaction: ReadTransaction
}
