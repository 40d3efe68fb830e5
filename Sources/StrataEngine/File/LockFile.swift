import Synchronization

// The lock file beside a store (`<store>.lock`), after LMDB's: it is how processes that share
// a store find each other (Docs/FileFormat.md, "Lock file"; Docs/Durability.md, "Readers in
// other processes").
//
// - The writer holds an exclusive lock on byte 0 for as long as it has the store open for
//   writing: a second writer (in this process or another) is refused with `.locked`.
// - The writer publishes its last commit at bytes 8..<48 once the commit is whole (durable
//   with full durability): the data file's salt, the sequence, where the commit record lies
//   and where it ends. A reader in another process reads that commit, never the tail of the
//   file, which may hold a commit the writer is still writing (and would cut off if its sync
//   failed). The writer never shortens the file below a commit it published.
// - A reader holds a shared lock on byte `readersStart + sequence` for each commit it reads.
//   The writer removes a blob file deleted by commit S only when no lock below
//   `readersStart + S` is held: the kernel drops the locks of a process that dies, so a dead
//   reader never keeps files forever.
//
// Locks are Linux open-file-description locks: they belong to the open lock file, so two
// `Store`s in one process conflict like two processes.

/// The commit a writer published for readers in other processes.
struct PublishedCommit: Equatable {
    var salt: UInt64
    var sequence: UInt64
    var offset: UInt64
    var end: UInt64

    static let size = 40

    func encode() -> [UInt8] {
        var b: [UInt8] = []
        // (Its size at once: grown by the appends, it was allocated three times per commit.)
        b.reserveCapacity(PublishedCommit.size)
        b.appendLE(salt)
        b.appendLE(sequence)
        b.appendLE(offset)
        b.appendLE(end)
        b.appendLE(Checksum.hash(b))
        return b
    }

    static func decode(_ b: [UInt8]) -> PublishedCommit? {
        guard b.count == size, b.withUnsafeBytes({ Checksum.hash(UnsafeRawBufferPointer(rebasing: $0[0..<32])) }) == b.loadLE64(32) else { return nil }
        let p = PublishedCommit(salt: b.loadLE64(0), sequence: b.loadLE64(8), offset: b.loadLE64(16), end: b.loadLE64(24))
        guard p.salt != 0, p.offset >= UInt64(FileHeader.size), p.end > p.offset else { return nil }
        return p
    }
}

final class LockFile: Sendable {
    let io: any FileHandleIO
    let path: String
    /// This open made the file (it was not there).
    let created: Bool
    /// The writer's view of the lock file's first page, to publish commits with a store into
    /// memory rather than a write (a write would change the file's times, and each commit's
    /// sync of the store file would then commit that change to the file system's journal too).
    /// (The optional in a struct: a `Mutex` of an optional destroyed it through metadata the
    /// runtime made for that optional alone, when a fresh process closed its first store.)
    private let publication = Mutex(Publication(mapping: nil))

    private struct Publication {
        var mapping: (any SharedFileMapping)?
    }
    static let pageSize = 4096

    static let writerRange: Range<UInt64> = 0..<1
    static let publishedOffset: UInt64 = 8
    static let readersStart: UInt64 = 1 << 32

    init(io: any FileHandleIO, path: String, created: Bool = false) {
        self.io = io
        self.path = path
        self.created = created
    }

    deinit { io.close() }

    /// Opens (creating it if needed) the lock file of the store at `storePath`. A reader that
    /// cannot create it (a read-only folder) goes on without: nil.
    static func open(storePath: String, fileSystem: any FileSystem, writable: Bool) throws -> LockFile? {
        let path = storePath + ".lock"
        do {
            let exists = fileSystem.fileExists(path)
            // A lock file made for a store that exists takes its permissions, so that whoever may
            // read the store may follow its writer, and nobody else. (Never truncated: another
            // process may have just made it, and map it.)
            let permissions = exists ? nil : try? fileSystem.permissions(of: storePath)
            let io = try fileSystem.openFile(path, readOnly: !writable, create: !exists, mode: permissions == nil ? 0o644 : 0o600)
            if let permissions { try? io.setPermissions(permissions) }
            return LockFile(io: io, path: path, created: !exists)
        } catch {
            if !writable { return nil }
            // The lock file lies beside the store: a missing folder, or a folder or mount that may
            // not be written, is the store's trouble too, and is told as the store's.
            let creating = !fileSystem.fileExists(storePath)
            if let system = error as? SystemError, system.pathIsMissing || system.isWriteDenied {
                throw StoreError.opening(SystemError(call: system.call, path: storePath, errno: system.errno), path: storePath,
                                         readOnly: false, creating: creating)
            }
            throw StoreError.io(error, doing: "opening the lock file \(path)", path: storePath)
        }
    }

    /// Takes the writer's lock; false when another writer has it. The writer then maps the
    /// lock file's first page to publish through (or, if that fails, publishes with writes).
    func lockWriter() throws -> Bool {
        guard try io.lock(Self.writerRange, exclusive: true) else { return false }
        if try io.size() < UInt64(Self.pageSize) { try? io.truncate(to: UInt64(Self.pageSize)) }
        let mapping = try? io.mapShared(length: Self.pageSize)
        publication.withLock { $0.mapping = mapping }
        return true
    }

    func unlockWriter() { io.unlock(Self.writerRange) }

    /// True when a writer (another open lock file) has the store open.
    func writerIsLive() throws -> Bool { try io.conflictingLock(in: Self.writerRange, exclusive: false) != nil }

    /// Publishes the writer's last whole commit. A failure is not the commit's: readers in
    /// other processes go on reading the commit published before.
    func publish(_ commit: PublishedCommit) {
        let bytes = commit.encode()
        let stored = publication.withLock { publication -> Bool in
            guard let mapping = publication.mapping else { return false }
            bytes.withUnsafeBytes { (mapping.base + Int(Self.publishedOffset)).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return true
        }
        if !stored { try? io.write(bytes, at: Self.publishedOffset) }
    }

    /// The commit the writer published last; nil when there is none (or it is being written).
    func published() -> PublishedCommit? {
        guard let bytes = try? io.read(count: PublishedCommit.size, at: Self.publishedOffset) else { return nil }
        return PublishedCommit.decode(bytes)
    }

    private static func readerRange(_ sequence: UInt64) -> Range<UInt64> {
        let start = readersStart + Swift.min(sequence, UInt64(Int64.max) - readersStart - 1)
        return start..<(start + 1)
    }

    /// Says that this store reads commit `sequence` (until `unlockReader`).
    func lockReader(_ sequence: UInt64) throws {
        _ = try io.lock(Self.readerRange(sequence), exclusive: false)
    }

    func unlockReader(_ sequence: UInt64) { io.unlock(Self.readerRange(sequence)) }

    /// True when a reader in another open lock file reads a commit older than `sequence`.
    func hasForeignReader(below sequence: UInt64) throws -> Bool {
        guard sequence > 0 else { return false }
        return try io.conflictingLock(in: Self.readersStart..<Self.readerRange(sequence).lowerBound, exclusive: true) != nil
    }
}
