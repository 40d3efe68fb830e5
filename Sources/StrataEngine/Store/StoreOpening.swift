import Foundation

/// Opening a store: for writing (take the writer's lock, recover the last commit, cut off a
/// torn tail, publish) or for reading (the commit a live writer published, or else the last
/// intact one). Docs/FileFormat.md, "Recovery" and "Lock file".
/// What opening a store's file found: its last commit, and for a writable open the writer
/// that appends after it. (A struct, not a tuple: the compiler copied and destroyed the tuple
/// through metadata the runtime made on a fresh process's first open, about 24k instructions, W8.)
struct OpenedFile {
    let snapshot: Snapshot
    let writer: AppendWriter?
}

enum StoreOpening {
    /// How long a reader waits for a writer that has just taken the store to publish.
    static let publicationWait = 2.0

    static func openForWriting(path: String, options: StoreOptions, fileSystem: any FileSystem, lock: LockFile) throws -> OpenedFile {
        guard try lock.lockWriter() else {
            throw StoreError(.locked, "Another process (or another Store in this process) has this store open for writing. Close it there first; only one writer may have a store open (readers may: open it with readOnly).",
                             path: path)
        }
        do {
            // A compaction that was cut short leaves its unfinished file; it is never needed.
            // Removed only once the lock is held, so a process that is about to be refused
            // never removes the file of a compaction that is running.
            for leftover in [path + ".compact", path + ".upgrade"] where fileSystem.fileExists(leftover) { try? fileSystem.removeFile(leftover) }
            return try recover(path: path, options: options, fileSystem: fileSystem)
        } catch {
            lock.unlockWriter()
            throw error
        }
    }

    private static func recover(path: String, options: StoreOptions, fileSystem: any FileSystem) throws -> OpenedFile {
        let exists = fileSystem.fileExists(path)
        let io: any FileHandleIO
        do { io = try fileSystem.openFile(path, readOnly: false, create: !exists) }
        catch { throw StoreError.opening(error, path: path, readOnly: false, creating: !exists) }
        do {
            let counters = Counters()
            var size = try io.size()
            // Zeros no longer than a new store are a creation cut short after the file grew but
            // before its bytes reached the disk; they hold nothing, so the store is created again.
            let zeros = try size > 0 && size <= Store.newStoreSize && io.read(count: Int(size), at: 0).allSatisfy { $0 == 0 }
            if size == 0 || !exists || zeros {
                try createEmpty(io: io, path: path, fileSystem: fileSystem)
                size = try io.size()
            }
            let header = try readHeader(io: io, path: path)
            let file = StoreFile(io: io, path: path, salt: header.salt, counters: counters)
            let commit: CommitRecord
            if let last = try Recovery.lastCommit(io: io, size: size, salt: header.salt, path: path) {
                commit = last
            } else {
                // A header with no intact commit: creation was cut short (small file) or the
                // store is damaged beyond the tail (large file).
                guard size <= Store.creationSizeLimit else {
                    throw StoreError.corrupt("no intact commit record was found in \(size) bytes", path: path, offset: nil)
                }
                try io.truncate(to: UInt64(FileHeader.size))
                try appendInitialCommit(io: io, salt: header.salt)
                size = try io.size()
                guard let created = try Recovery.lastCommit(io: io, size: size, salt: header.salt, path: path) else {
                    throw StoreError.corrupt("no intact commit record was found after creating one", path: path, offset: nil)
                }
                commit = created
            }
            if size > commit.end {
                // A torn or damaged tail after the last intact commit: cut it off.
                try io.truncate(to: commit.end)
            }
            // What the last session left may not be durable yet (deferred durability, or a crash
            // between a commit's write and its sync). With full durability the first commit of
            // this session syncs it before writing (so opening stays a few reads, no sync);
            // with deferred durability it is synced now, so that this session's commits need
            // not make the next open check earlier ones.
            var syncedEnd: UInt64 = 0
            if options.durability == .deferred {
                try io.sync()
                syncedEnd = commit.end
            }
            let snapshot = Snapshot(sequence: commit.sequence, catalog: commit.catalog, commitOffset: commit.offset, end: commit.end,
                                    file: file, map: try file.mapping(covering: commit.end))
            return OpenedFile(snapshot: snapshot, writer: AppendWriter(file: file, committedEnd: commit.end, syncedEnd: syncedEnd))
        } catch let error as StoreError {
            io.close()
            throw error
        } catch {
            io.close()
            throw StoreError.io(error, doing: "opening the store", path: path)
        }
    }

    /// A read-only open: the commit a live writer published, or (no writer) the last intact one.
    static func openForReading(path: String, fileSystem: any FileSystem, lock: LockFile?) throws -> OpenedFile {
        let deadline = Date().addingTimeInterval(publicationWait)
        while true {
            let live = try lock.map { try $0.writerIsLive() } ?? false
            guard live, let lock else { return OpenedFile(snapshot: try lastIntact(path: path, fileSystem: fileSystem), writer: nil) }
            if let published = lock.published(),
               let file = try? openData(path: path, fileSystem: fileSystem, readOnly: true, counters: Counters()) {
                if file.salt == published.salt { return OpenedFile(snapshot: try snapshot(of: published, in: file), writer: nil) }
            }
            // The writer has just taken the store (and publishes once it has recovered it), or
            // a compaction is switching files: wait a little.
            guard Date() < deadline else {
                throw StoreError(.locked, "Another process is opening (or compacting) this store for writing and has not published a commit yet; try again in a moment.", path: path)
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
    }

    /// Opens the data file and checks its header.
    static func openData(path: String, fileSystem: any FileSystem, readOnly: Bool, counters: Counters) throws -> StoreFile {
        let io: any FileHandleIO
        do { io = try fileSystem.openFile(path, readOnly: readOnly, create: false) }
        catch { throw StoreError.opening(error, path: path, readOnly: readOnly, creating: false) }
        do {
            let header = try readHeader(io: io, path: path)
            return StoreFile(io: io, path: path, salt: header.salt, counters: counters)
        } catch {
            io.close()
            throw error
        }
    }

    /// The snapshot of a published commit (its record is checked again).
    static func snapshot(of published: PublishedCommit, in file: StoreFile) throws -> Snapshot {
        let record: CommitRecord?
        do { record = try Recovery.candidateAt(offset: published.offset, io: file.io, salt: file.salt) }
        catch { throw StoreError.io(error, doing: "reading the published commit", path: file.path) }
        guard let record, record.end == published.end, record.sequence == published.sequence else {
            throw StoreError.corrupt("the commit the writer published (sequence \(published.sequence) at byte \(published.offset)) is not intact", path: file.path, offset: published.offset)
        }
        return Snapshot(sequence: record.sequence, catalog: record.catalog, commitOffset: record.offset, end: record.end,
                        file: file, map: try file.mapping(covering: record.end))
    }

    /// The last intact commit of an open store file no writer has open, read without changing
    /// anything.
    static func lastIntact(in file: StoreFile, size known: UInt64? = nil) throws -> Snapshot {
        let path = file.path
        let size: UInt64
        let found: CommitRecord?
        do {
            size = try known ?? file.io.size()
            found = try Recovery.lastCommit(io: file.io, size: size, salt: file.salt, path: path)
        } catch let error as StoreError { throw error } catch {
            throw StoreError.io(error, doing: "reading the store's last commit", path: path)
        }
        guard let commit = found else {
            guard size <= Store.creationSizeLimit else {
                throw StoreError.corrupt("no intact commit record was found in \(size) bytes", path: path, offset: nil)
            }
            // An interrupted creation: an empty store.
            let end = UInt64(FileHeader.size)
            return Snapshot(sequence: 0, catalog: Catalog(), commitOffset: 0, end: end, file: file, map: try file.mapping(covering: end))
        }
        return Snapshot(sequence: commit.sequence, catalog: commit.catalog, commitOffset: commit.offset, end: commit.end,
                        file: file, map: try file.mapping(covering: commit.end))
    }

    /// The last intact commit of a file no writer has open, read without changing anything.
    private static func lastIntact(path: String, fileSystem: any FileSystem) throws -> Snapshot {
        let io: any FileHandleIO
        do { io = try fileSystem.openFile(path, readOnly: true, create: false) }
        catch { throw StoreError.opening(error, path: path, readOnly: true, creating: false) }
        do {
            let size = try io.size()
            if try size == 0 || (size <= Store.newStoreSize && io.read(count: Int(size), at: 0).allSatisfy { $0 == 0 }) {
                throw StoreError(.notAStore, "The file is empty, so it is not a Strata store (an interrupted creation?). Open it writable to create a new store.", path: path)
            }
            let header = try readHeader(io: io, path: path)
            return try lastIntact(in: StoreFile(io: io, path: path, salt: header.salt, counters: Counters()), size: size)
        } catch let error as StoreError {
            io.close()
            throw error
        } catch {
            io.close()
            throw StoreError.io(error, doing: "opening the store", path: path)
        }
    }

    static func readHeader(io: any FileHandleIO, path: String) throws -> FileHeader {
        switch FileHeader.decode(try io.read(count: FileHeader.size, at: 0)) {
        case .success(let header): return header
        case .failure(let box):
            switch box.failure {
            case .notAStore:
                throw StoreError(.notAStore, "This file is not a Strata store (its first bytes are not the Strata header). Check the path.", path: path)
            case .newerVersion(let v):
                throw StoreError(.newerFormat, "This store uses file format version \(v), newer than this Strata reads (\(FileHeader.currentVersion)). Open it with a newer Strata.", path: path)
            case .olderVersion(let v):
                throw StoreError(.olderFormat, "This store uses file format version \(v); this Strata reads version \(FileHeader.currentVersion). Convert it once with `strata upgrade \(path)` (all or nothing, like a compaction; keep a backup), then open it again.", path: path)
            case .damaged:
                throw StoreError.corrupt("the file header fails its checksum", path: path, offset: 0)
            }
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
        let record = CommitRecord(sequence: 0, offset: offset, previousOffset: 0, bodyStart: offset, bodyChecksum: StreamingChecksum().value,
                                  flags: CommitRecord.flagBodySynced, timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000),
                                  salt: salt, catalog: Catalog())
        try io.write(record.encode(), at: offset)
        try io.sync()
    }
}
