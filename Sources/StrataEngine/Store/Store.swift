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
    private let state: Mutex<State>
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
        let opened: (snapshot: Snapshot, writer: AppendWriter?)
        if let lock, !options.readOnly {
            opened = try StoreOpening.openForWriting(path: path, options: options, fileSystem: fileSystem, lock: lock)
        } else {
            opened = try StoreOpening.openForReading(path: path, fileSystem: fileSystem, lock: lock)
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

    /// True unless the store's path is known to name another file than the one this store has
    /// open (one was renamed over it, or it was removed).
    public var pathNamesItsFile: Bool {
        let status: FileStatus?
        // A path that cannot be looked at is not known to name another file.
        do { status = try fileSystem.status(of: path) } catch { return true }
        guard let status else { return false }
        return currentSnapshot().file.isSameFile(as: status)
    }

    /// Throws `.replaced` when the path no longer names the store's file, and lets go of the
    /// writer's lock then, so that the file now at the path can be opened (here or elsewhere).
    /// Writing on would put commits in a file nobody can open again.
    func checkStillAtPath() throws {
        if !state.withLock({ $0.replaced }) {
            if pathNamesItsFile { return }
            relinquish()
        }
        throw StoreError(.replaced, "Another file was put at the store's path (renamed over it), or the store file was removed, while this store had it open; nothing more is written to the file it has open. Open the store again to use the file at the path now.", path: path)
    }

    /// Stops writing the file this store has open, which is no longer at its path: later writes
    /// throw `.replaced`, and the writer's lock goes, for whoever opens the file at the path.
    /// Reads go on in the file this store has open.
    public func relinquish() {
        let wasWriting = state.withLock { s -> Bool in
            defer { s.replaced = true }
            return !s.replaced && s.writer != nil && !s.closed
        }
        if wasWriting { lockFile?.unlockWriter() }
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

    /// Removes the files of blobs deleted by commit `sequence` once no reader can see them
    /// and the commit is durable (`durable`: it was synced).
    func retireBlobs(_ ids: [UInt64], deletedBy sequence: UInt64, durable: Bool) {
        state.withLock { s in
            if durable { s.durableSequence = Swift.max(s.durableSequence, sequence) }
            s.retiredBlobs += ids.map { (sequence, $0) }
        }
        removeUnreadableBlobs()
    }

    /// Removes the retired blob files that no reader, here or in another process, can see.
    func removeUnreadableBlobs() {
        var candidates = state.withLock { $0.unreadableBlobs() }
        guard !candidates.isEmpty else { return }
        if let lockFile {
            var seen: [UInt64: Bool] = [:]
            candidates = candidates.filter { blob in
                if let busy = seen[blob.sequence] { return !busy }
                // When the lock file cannot tell, keep the file: an orphan is removed later.
                let busy = (try? lockFile.hasForeignReader(below: blob.sequence)) ?? true
                seen[blob.sequence] = busy
                return !busy
            }
        }
        let ids = Set(candidates.map(\.id))
        state.withLock { s in s.retiredBlobs.removeAll { ids.contains($0.id) } }
        for id in ids { blobs.remove(id) }
    }

    /// Every commit up to `sequence` is on disk: the blob files they deleted may go.
    func markDurable(_ sequence: UInt64) {
        retireBlobs([], deletedBy: sequence, durable: true)
    }

    /// A read transaction of commit `sequence` is done.
    func releaseReader(_ sequence: UInt64) {
        let foreign = options.readOnly
        let retired = state.withLock { s -> Bool in
            if let n = s.readers[sequence] {
                s.readers[sequence] = n > 1 ? n - 1 : nil
                if n == 1, foreign { lockFile?.unlockReader(sequence) }
            }
            return !s.retiredBlobs.isEmpty
        }
        // Only a retired blob can have become unreadable (asked under the same lock).
        if !foreign && retired { removeUnreadableBlobs() }
    }

    /// Blobs deleted by a commit whose files readers may still need.
    func retiredBlobIDs() -> Set<UInt64> {
        state.withLock { Set($0.retiredBlobs.map(\.id)) }
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

    func allocateBlobID(atLeast floor: UInt64) -> UInt64 {
        state.withLock { s in
            let id = Swift.max(s.nextBlobID, floor)
            s.nextBlobID = id + 1
            return id
        }
    }

    func currentSnapshot() -> Snapshot { state.withLock { $0.snapshot } }

    /// Compaction's switch to the new file.
    func replaceFile(snapshot: Snapshot, writer: AppendWriter) {
        let stale = state.withLock { s -> SharedReader? in
            s.writer = writer
            return s.setSnapshot(snapshot)
        }
        _ = consume stale
        publishToOtherProcesses(snapshot)
    }

    // MARK: Readers of a store another process writes

    /// A read transaction of a read-only store, on the last whole commit: the one the writer
    /// published if a writer has the store open, or else the last one in the file at the path
    /// (whoever wrote it, and whether or not that writer is still alive). It is registered in
    /// the lock file before anything is read, so that a writer keeps what it reads.
    private func beginForeignRead(_ lockFile: LockFile) throws -> ReadTransaction {
        for _ in 0..<8 {
            let live = (try? lockFile.writerIsLive()) == true
            let published = live ? lockFile.published() : nil
            if let published {
                state.withLock { $0.fileWithoutWriter = nil }
                try follow(published)
            } else if !live {
                try followFileWithoutWriter(lockFile)
            }
            let snapshot = try state.withLock { s -> Snapshot in
                if s.closed { throw closedError() }
                let n = s.readers[s.snapshot.sequence, default: 0]
                if n == 0 { try lockFile.lockReader(s.snapshot.sequence) }
                s.readers[s.snapshot.sequence] = n + 1
                return s.snapshot
            }
            let tx = ReadTransaction(store: self, snapshot: snapshot)
            tx.isRegistered = true
            // The writer removes blob files only after it publishes the commit that deleted
            // them: if it published nothing newer meanwhile, it will see this reader's lock.
            guard let published, let again = lockFile.published(), again.sequence > published.sequence else { return tx }
            _ = tx
        }
        return try state.withLock { s -> ReadTransaction in
            if s.closed { throw closedError() }
            s.readers[s.snapshot.sequence, default: 0] += 1
            let tx = ReadTransaction(store: self, snapshot: s.snapshot)
            tx.isRegistered = true
            return tx
        }
    }

    /// Moves a read-only store that no writer has open to the last whole commit in the file at
    /// its path: one a writer made since (and exited, or was killed before it published it),
    /// or another file's, renamed over the store (a compaction by a writer that has exited).
    /// `stat` tells whether the file changed since it was last looked at, so a store nobody
    /// writes costs one system call per read.
    private func followFileWithoutWriter(_ lockFile: LockFile) throws {
        guard let status = try? fileSystem.status(of: path) else { return }
        if state.withLock({ $0.fileWithoutWriter }) == status { return }
        let current = currentSnapshot()
        let file = current.file.isSameFile(as: status) ? current.file
            : try StoreOpening.openData(path: path, fileSystem: fileSystem, readOnly: true, counters: current.file.counters)
        let last = try StoreOpening.lastIntact(in: file)
        // A writer that began meanwhile may be writing the tail: read what it publishes instead.
        if (try? lockFile.writerIsLive()) != false { return }
        let stale = state.withLock { s -> SharedReader? in
            s.fileWithoutWriter = status
            guard file !== s.snapshot.file || last.sequence > s.snapshot.sequence else { return nil }
            return s.setSnapshot(last)
        }
        _ = consume stale
    }

    /// Moves a read-only store to a commit the writer published (after a compaction, to the
    /// new file); keeps the current snapshot when the published one is not newer.
    private func follow(_ published: PublishedCommit) throws {
        let current = currentSnapshot()
        if published.salt == current.file.salt {
            guard published.sequence > current.sequence else { return }
            let fresh = try StoreOpening.snapshot(of: published, in: current.file)
            let stale = state.withLock { s in fresh.sequence > s.snapshot.sequence ? s.setSnapshot(fresh) : nil }
            _ = consume stale
            return
        }
        // A compaction put a new file in place: open it (between its rename and the writer's
        // publication the names may not agree yet; then wait for the next transaction).
        guard let file = try? StoreOpening.openData(path: path, fileSystem: fileSystem, readOnly: true, counters: current.file.counters),
              file.salt == published.salt else { return }
        let fresh = try StoreOpening.snapshot(of: published, in: file)
        let stale = state.withLock { s in s.setSnapshot(fresh) }
        _ = consume stale
    }

    // MARK: Everything else

    /// Makes every commit so far durable (useful with `Durability.deferred`).
    public func sync() throws {
        writerGate.wait()
        defer { endWriting() }
        // After a failed sync the kernel may have dropped the unwritten pages: a second sync
        // could succeed without them, so it is never tried on that descriptor. A new one
        // writes them again first (`reopenAfterFailure`), and its writer syncs from then on.
        try checkNotFailed()
        guard let writer = state.withLock({ $0.writer }) else { return }
        do { try writer.sync() } catch {
            let failure = StoreError.io(error, doing: "syncing the store file", path: path,
                                        consequence: "The commits since the last sync may not be on the disk.",
                                        next: "The next write or sync reopens the store file and writes them again.")
            fail(failure)
            throw failure
        }
        markDurable(currentSnapshot().sequence)
    }

    /// Closes the store. Transactions already begun keep their snapshot readable.
    ///
    /// Closing releases the writer's lock at once, so the store can be opened again right
    /// away, here or in another process. Read transactions begun before keep reading their
    /// snapshot: the file only grows at its end, and a compaction replaces it by rename, so
    /// their pages stay as they were. The file closes when the last of them is released.
    public func close() {
        let (wasWriter, stale) = state.withLock { s -> (AppendWriter??, SharedReader?) in
            if s.closed { return (nil, nil) }
            s.closed = true
            defer { s.writer = nil; s.sharedReader = nil }
            return (.some(s.writer), s.sharedReader)
        }
        _ = consume stale
        guard let wasWriter, let writer = wasWriter else { return }
        // A write transaction or compaction under way keeps the lock until it ends (see
        // `endWriting`): releasing it now would let another writer append beside it.
        guard writerGate.wait(timeout: .now()) == .success else { return }
        if state.withLock({ $0.failure == nil }) { writer.trimPreallocation() }
        removeUnreadableBlobs()
        lockFile?.unlockWriter()
        writerGate.signal()
    }

    /// Ends the write transaction, compaction or sync that holds `writerGate`. On a store
    /// closed meanwhile, this is when the lock is released.
    func endWriting() {
        if state.withLock({ $0.closed }) { lockFile?.unlockWriter() }
        writerGate.signal()
    }

    /// What the store has done since it was opened (pages checked, bytes written, syncs, commits).
    public var statistics: StoreStatistics { currentSnapshot().file.counters.snapshot }

    /// A summary of the store: sizes, sequence, collections and what compaction would free.
    public func info() throws -> StoreInfo {
        let snapshot = options.readOnly ? try read { $0.base } : currentSnapshot()
        let size: UInt64
        do { size = try snapshot.file.io.size() } catch { throw StoreError.io(error, doing: "reading the store's size", path: path) }
        let catalog = snapshot.catalog
        func add(_ a: UInt64, _ b: UInt64) -> UInt64 { let (sum, overflow) = a.addingReportingOverflow(b); return overflow ? .max : sum }
        let total = add(add(catalog.liveBytes, UInt64(FileHeader.size)), snapshot.end - snapshot.commitOffset)
        let live = Swift.min(total, UInt64(Int.max))
        let collections = catalog.collections.map { c in
            StoreInfo.Collection(name: c.name, id: CollectionID(rawValue: c.id), count: Int(c.count), liveBytes: Int(Swift.min(c.liveBytes, UInt64(Int.max))),
                                 indexes: catalog.indexes.filter { $0.collection == c.id }.map(ReadTransaction.describe))
        }
        return StoreInfo(path: path, formatVersion: Int(FileHeader.currentVersion), fileSize: Int(size), sequence: snapshot.sequence,
                         liveBytes: Int(live), reclaimableBytes: Int(size > live ? size - live : 0), collections: collections)
    }
}

/// A summary of a store, as `Store.info()` gives it.
public struct StoreInfo: Sendable {
    public struct Collection: Sendable {
        public let name: String
        public let id: CollectionID
        public let count: Int
        /// Bytes of the collection's row pages and long values (not its indexes).
        public let liveBytes: Int
        public let indexes: [IndexDescription]
    }
    public let path: String
    public let formatVersion: Int
    public let fileSize: Int
    /// The sequence number of the last commit.
    public let sequence: UInt64
    /// Bytes of live pages, values and metadata.
    public let liveBytes: Int
    /// About how many bytes `compact()` would free.
    public let reclaimableBytes: Int
    public let collections: [Collection]
}

/// Live read transactions by the sequence of the commit they read. There are a few distinct
/// sequences at most (readers of the last commits), so a short array: a dictionary hashed the
/// sequence twice per read transaction.
struct ReaderCounts {
    private var entries: [(sequence: UInt64, count: Int)] = []

    subscript(sequence: UInt64) -> Int? {
        get {
            for e in entries where e.sequence == sequence { return e.count }
            return nil
        }
        set {
            if let i = entries.firstIndex(where: { $0.sequence == sequence }) {
                if let n = newValue { entries[i].count = n } else { entries.remove(at: i) }
            } else if let n = newValue {
                entries.append((sequence, n))
            }
        }
    }

    subscript(sequence: UInt64, default value: Int) -> Int {
        get { self[sequence] ?? value }
        set { self[sequence] = newValue }
    }

    /// The sequence of the oldest commit a live reader reads.
    var oldest: UInt64? { entries.lazy.map(\.sequence).min() }
}

/// The read transaction a store's readers of its current commit share. It only reads (its
/// pages are checked through atomic bits; nothing of it changes after it is made), so threads
/// may use it at once.
struct SharedReader: @unchecked Sendable {
    let transaction: ReadTransaction
}
