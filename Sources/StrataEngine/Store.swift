import Dispatch
import Foundation
import Synchronization

/// A store: one append-only data file (plus a blobs folder beside it) holding collections of
/// records by row id, their secondary indexes, blobs and named metadata.
///
/// One writer at a time; any number of readers, each seeing one commit. Another process that
/// opens the store for writing gets a `.locked` error.
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
    private let state: Mutex<State>
    /// Held by the one write transaction (or compaction) at a time.
    let writerGate = DispatchSemaphore(value: 1)

    struct State {
        var snapshot: Snapshot
        var writer: AppendWriter?
        /// The file whose descriptor holds the store's lock. It is the snapshot's until a failed
        /// write makes the store go on through a new descriptor (`reopenAfterFailure`): the lock
        /// stays with the descriptor that took it (kept open here), so no other writer gets in.
        var lockHolder: StoreFile
        /// Set by a failed write or sync: the next writing operation reopens the store file
        /// (`reopenAfterFailure`) before it goes on; nothing more is written through the
        /// descriptor that failed.
        var failure: StoreError?
        var closed = false
        var nextBlobID: UInt64
        /// Live read transactions, by the sequence of the commit they read.
        var readers: [UInt64: Int] = [:]
        /// Blobs deleted by a commit (its sequence) whose files older readers may still read.
        var retiredBlobs: [(sequence: UInt64, id: UInt64)] = []
        /// The last commit of this session known to be on disk (synced).
        var durableSequence: UInt64 = 0

        /// Takes the retired blobs that no live reader can see any more, and that no power cut
        /// can bring back: a blob file may go only once the commit that deleted it is durable
        /// (with deferred durability, a power cut could otherwise reopen on an earlier commit
        /// that still refers to the removed file).
        mutating func takeUnreadableBlobs() -> [UInt64] {
            // A blob deleted by commit S is visible only to readers of commits before S.
            let oldest = readers.keys.min() ?? .max
            var ids: [UInt64] = []
            retiredBlobs.removeAll { blob in
                guard blob.sequence <= oldest, blob.sequence <= durableSequence else { return false }
                ids.append(blob.id)
                return true
            }
            return ids
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
    /// the number of records.
    ///
    /// - Throws: `StoreError` with `.locked` (another process is writing), `.notAStore`,
    ///   `.newerFormat`, `.corrupt`, `.notFound` (no file and not creating), `.ioFailure`.
    public convenience init(path: String, options: StoreOptions = StoreOptions()) throws {
        try self.init(path: path, options: options, fileSystem: DiskFileSystem())
    }

    /// Opens a store through another file system (the fault seam used by tests).
    package init(path: String, options: StoreOptions, fileSystem: any FileSystem) throws {
        self.path = path
        self.options = options
        self.fileSystem = fileSystem
        self.blobs = BlobFolder(path: path + ".blobs", fileSystem: fileSystem, storePath: path)
        let opened = try Store.openFile(path: path, options: options, fileSystem: fileSystem)
        self.state = Mutex(State(snapshot: opened.snapshot, writer: opened.writer, lockHolder: opened.snapshot.file,
                                 nextBlobID: opened.snapshot.catalog.nextBlobID))
    }

    // MARK: Opening and recovery

    private static func openFile(path: String, options: StoreOptions, fileSystem: any FileSystem) throws -> (snapshot: Snapshot, writer: AppendWriter?) {
        if fileSystem.isDirectory(path) {
            throw StoreError.opening(SystemError(call: "open", path: path, errno: SystemError.isADirectory), path: path,
                                     readOnly: options.readOnly, creating: false)
        }
        let exists = fileSystem.fileExists(path)
        if !exists && (options.readOnly || !options.createIfMissing) {
            throw StoreError(.notFound, "There is no store at this path. Check the path, or open it writable to create it.", path: path)
        }
        let io: any FileHandleIO
        do { io = try fileSystem.openFile(path, readOnly: options.readOnly, create: !exists) }
        catch { throw StoreError.opening(error, path: path, readOnly: options.readOnly, creating: !exists) }
        do {
            guard try io.lock(exclusive: !options.readOnly) else {
                throw StoreError(.locked, options.readOnly
                    ? "Another process has this store open for writing. Close it there first, or wait until it is done."
                    : "Another process (or another Store in this process) has this store open. Close it there first; only one writer may have a store open.",
                    path: path)
            }
            if !options.readOnly {
                // A compaction that was cut short leaves its unfinished file; it is never needed.
                // Removed only once the lock is held, so a process that is about to be refused
                // never removes the file of a compaction that is running.
                let leftover = path + ".compact"
                if fileSystem.fileExists(leftover) { try? fileSystem.removeFile(leftover) }
            }
            let counters = Counters()
            var size = try io.size()
            // Zeros no longer than a new store are a creation cut short after the file grew but
            // before its bytes reached the disk; they hold nothing, so the store is created again.
            let zeros = try size > 0 && size <= newStoreSize && io.read(count: Int(size), at: 0).allSatisfy { $0 == 0 }
            if size == 0 || (!exists) || zeros {
                guard !options.readOnly else {
                    throw StoreError(.notAStore, "The file is empty, so it is not a Strata store (an interrupted creation?). Open it writable to create a new store.", path: path)
                }
                try createEmpty(io: io, path: path, fileSystem: fileSystem)
                size = try io.size()
            }
            let headerBytes = try io.read(count: FileHeader.size, at: 0)
            let header: FileHeader
            switch FileHeader.decode(headerBytes) {
            case .success(let h): header = h
            case .failure(let box):
                switch box.failure {
                case .notAStore:
                    throw StoreError(.notAStore, "This file is not a Strata store (its first bytes are not the Strata header). Check the path.", path: path)
                case .newerVersion(let v):
                    throw StoreError(.newerFormat, "This store uses file format version \(v), newer than this Strata reads (\(FileHeader.currentVersion)). Open it with a newer Strata.", path: path)
                case .damaged:
                    throw StoreError.corrupt("the file header fails its checksum", path: path, offset: 0)
                }
            }
            let file = StoreFile(io: io, path: path, salt: header.salt, cacheSize: options.cacheSize, counters: counters)
            var found = try Recovery.lastCommit(io: io, size: size, salt: header.salt, path: path)
            if found == nil {
                // A header with no intact commit: creation was cut short (small file) or the
                // store is damaged beyond the tail (large file).
                guard size <= creationSizeLimit else {
                    throw StoreError.corrupt("no intact commit record was found in \(size) bytes", path: path, offset: nil)
                }
                if !options.readOnly {
                    try io.truncate(to: UInt64(FileHeader.size))
                    try appendInitialCommit(io: io, salt: header.salt)
                    size = try io.size()
                    found = try Recovery.lastCommit(io: io, size: size, salt: header.salt, path: path)
                }
            }
            let snapshot: Snapshot
            if let commit = found {
                snapshot = Snapshot(sequence: commit.sequence, root: commit.root, catalog: commit.catalog,
                                    commitOffset: commit.offset, end: commit.end, file: file)
            } else {
                snapshot = Snapshot(sequence: 0, root: nil, catalog: Catalog(), commitOffset: 0, end: UInt64(FileHeader.size), file: file)
            }
            if options.readOnly { return (snapshot, nil) }
            if size > snapshot.end {
                // A torn or damaged tail after the last intact commit: cut it off.
                try io.truncate(to: snapshot.end)
            }
            // What the last session left may not be durable yet (deferred durability, or a crash
            // between a commit's write and its sync). With full durability the first commit of
            // this session syncs it before writing (so opening stays a few reads, no sync);
            // with deferred durability it is synced now, so that this session's commits need
            // not make the next open check earlier ones.
            var syncedEnd: UInt64 = 0
            if options.durability == .deferred {
                try io.sync()
                syncedEnd = snapshot.end
            }
            return (snapshot, AppendWriter(file: file, committedEnd: snapshot.end, syncedEnd: syncedEnd))
        } catch let error as StoreError {
            io.close()
            throw error
        } catch {
            io.close()
            throw StoreError.io(error, doing: "opening the store", path: path)
        }
    }

    private static func createEmpty(io: any FileHandleIO, path: String, fileSystem: any FileSystem) throws {
        var salt: UInt64 = 0
        while salt == 0 { salt = UInt64.random(in: 1...UInt64.max) }
        let header = FileHeader(salt: salt, createdMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
        try io.truncate(to: 0)
        try io.write(header.encode(), at: 0)
        try appendInitialCommit(io: io, salt: salt)
        try fileSystem.syncDirectory(path.parentDirectory)
    }

    private static func appendInitialCommit(io: any FileHandleIO, salt: UInt64) throws {
        let offset = UInt64(FileHeader.size)
        let record = CommitRecord(sequence: 0, offset: offset, previousOffset: 0, bodyStart: offset,
                                  bodyChecksum: 0, flags: CommitRecord.flagBodySynced, root: nil,
                                  timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: salt, catalog: Catalog())
        try io.write(record.encode(), at: offset)
        try io.sync()
    }

    // MARK: Transactions

    /// Runs `body` in a read transaction on the latest commit.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        try body(beginRead())
    }

    /// Begins a read transaction on the latest commit. It holds that commit's pages until it is released.
    public func beginRead() throws -> ReadTransaction {
        let snapshot = try state.withLock { s -> Snapshot in
            if s.closed { throw closedError() }
            s.readers[s.snapshot.sequence, default: 0] += 1
            return s.snapshot
        }
        let tx = ReadTransaction(store: self, snapshot: snapshot)
        tx.isRegistered = true
        return tx
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
            try reopenAfterFailure()
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

    func publish(_ snapshot: Snapshot) {
        state.withLock { $0.snapshot = snapshot }
    }

    /// Removes the files of blobs deleted by commit `sequence` once no reader can see them
    /// and the commit is durable (`durable`: it was synced).
    func retireBlobs(_ ids: [UInt64], deletedBy sequence: UInt64, durable: Bool) {
        let unreadable = state.withLock { s in
            if durable { s.durableSequence = Swift.max(s.durableSequence, sequence) }
            s.retiredBlobs += ids.map { (sequence, $0) }
            return s.takeUnreadableBlobs()
        }
        for id in unreadable { blobs.remove(id) }
    }

    /// Every commit up to `sequence` is on disk: the blob files they deleted may go.
    func markDurable(_ sequence: UInt64) {
        retireBlobs([], deletedBy: sequence, durable: true)
    }

    /// A read transaction of commit `sequence` is done.
    func releaseReader(_ sequence: UInt64) {
        let unreadable = state.withLock { s -> [UInt64] in
            if let n = s.readers[sequence] { s.readers[sequence] = n > 1 ? n - 1 : nil }
            return s.takeUnreadableBlobs()
        }
        for id in unreadable { blobs.remove(id) }
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

    /// For `reopenAfterFailure`: goes on with the reopened file; the lock moves to
    /// `lockHolder` if one is given (a file that replaced the store's), else stays. A store
    /// closed meanwhile stays closed.
    func resume(snapshot: Snapshot, writer: AppendWriter, lockHolder: StoreFile?) {
        state.withLock { s in
            guard !s.closed else { return }
            s.snapshot = snapshot
            s.writer = writer
            if let lockHolder { s.lockHolder = lockHolder }
            s.failure = nil
        }
    }

    func allocateBlobID(atLeast floor: UInt64) -> UInt64 {
        state.withLock { s in
            let id = Swift.max(s.nextBlobID, floor)
            s.nextBlobID = id + 1
            return id
        }
    }

    func currentSnapshot() -> Snapshot { state.withLock { $0.snapshot } }

    /// Compaction's switch to the new file, whose descriptor holds the lock of the new file.
    func replaceFile(snapshot: Snapshot, writer: AppendWriter) {
        state.withLock { s in
            s.snapshot = snapshot
            s.writer = writer
            s.lockHolder = snapshot.file
        }
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
    /// Closing releases the lock at once, so the store can be opened again right away, here or
    /// in another process. Read transactions begun before keep reading their snapshot: the file
    /// only grows at its end, and a compaction replaces it by rename, so their pages stay as
    /// they were. The descriptor closes when the last of them is released.
    public func close() {
        let lock = state.withLock { s -> StoreFile? in
            if s.closed { return nil }
            s.closed = true
            s.writer = nil
            return s.lockHolder
        }
        // A write transaction or compaction under way keeps the lock until it ends (see
        // `endWriting`): releasing it now would let another writer append beside it.
        guard let lock, writerGate.wait(timeout: .now()) == .success else { return }
        lock.io.unlock()
        writerGate.signal()
    }

    /// Ends the write transaction, compaction or sync that holds `writerGate`. On a store
    /// closed meanwhile, this is when the lock is released.
    func endWriting() {
        let lock = state.withLock { s in s.closed ? s.lockHolder : nil }
        lock?.io.unlock()
        writerGate.signal()
    }

    /// What the store has done since it was opened (pages read, bytes written, syncs, commits).
    public var statistics: StoreStatistics { currentSnapshot().file.counters.snapshot }

    /// A summary of the store: sizes, sequence, collections and what compaction would free.
    public func info() throws -> StoreInfo {
        let snapshot = currentSnapshot()
        let size = try snapshot.file.io.size()
        let catalog = snapshot.catalog
        // Each figure is at most Int.max (Catalog.decode checks); their sum saturates rather than trap.
        func add(_ a: UInt64, _ b: UInt64) -> UInt64 { let (sum, overflow) = a.addingReportingOverflow(b); return overflow ? .max : sum }
        let total = catalog.collections.reduce(add(add(catalog.liveTreeBytes, catalog.liveOtherBytes), UInt64(FileHeader.size))) { add($0, $1.liveBytes) }
        let live = Swift.min(total, UInt64(Int.max))
        let collections = catalog.collections.map { c in
            StoreInfo.Collection(name: c.name, id: CollectionID(rawValue: c.id), count: Int(c.count), liveBytes: Int(c.liveBytes),
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
        public let liveBytes: Int
        public let indexes: [IndexDescription]
    }
    public let path: String
    public let formatVersion: Int
    public let fileSize: Int
    /// The sequence number of the last commit.
    public let sequence: UInt64
    /// Bytes of live records, pages and metadata.
    public let liveBytes: Int
    /// About how many bytes `compact()` would free.
    public let reclaimableBytes: Int
    public let collections: [Collection]
}
