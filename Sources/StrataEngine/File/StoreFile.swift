import Synchronization

/// Counts of the work a store has done since it was opened: what benchmarks and tests read.
public struct StoreStatistics: Sendable, Hashable {
    /// Pages checked (their checksum and structure) the first time this process read them.
    public var pagesRead: Int
    /// Value frames (records too long for a page) checked the first time this process read them.
    public var blocksRead: Int
    /// Bytes written to the store file.
    public var bytesWritten: Int
    /// fdatasync / fsync calls on the store file and its directory.
    public var syncs: Int
    /// Transactions committed.
    public var commits: Int
}

final class Counters: Sendable {
    let pagesRead = Atomic<Int>(0)
    let blocksRead = Atomic<Int>(0)
    let bytesWritten = Atomic<Int>(0)
    let syncs = Atomic<Int>(0)
    let commits = Atomic<Int>(0)

    var snapshot: StoreStatistics {
        StoreStatistics(pagesRead: pagesRead.load(ordering: .relaxed), blocksRead: blocksRead.load(ordering: .relaxed),
                        bytesWritten: bytesWritten.load(ordering: .relaxed), syncs: syncs.load(ordering: .relaxed),
                        commits: commits.load(ordering: .relaxed))
    }
}

/// One open store file and its mapping. Compaction makes a new one; snapshots keep the old
/// one alive (and open, and mapped) until the last reader is done.
final class StoreFile: Sendable {
    let io: any FileHandleIO
    let path: String
    let salt: UInt64
    let counters: Counters
    /// Which file this is (device and inode; nil if `fstat` failed): a path that names
    /// another file now had one renamed over it.
    let identity: FileIdentity?
    /// (The optional in a struct: a `Mutex` of an optional destroyed it through metadata the
    /// runtime made for that optional alone, when a fresh process closed its first store.)
    private let mapped: Mutex<CurrentMapping>

    private struct CurrentMapping {
        var file: MappedFile?
    }

    init(io: any FileHandleIO, path: String, salt: UInt64, counters: Counters) {
        self.io = io
        self.path = path
        self.salt = salt
        self.counters = counters
        self.identity = (try? io.status())?.identity
        self.mapped = Mutex(CurrentMapping(file: nil))
    }

    /// True unless `status` (of the store's path) is known to be another file.
    func isSameFile(as status: FileStatus) -> Bool { isSameFile(as: status.identity) }

    /// True unless `identity` (of the store's path) is known to be another file.
    func isSameFile(as identity: FileIdentity) -> Bool { self.identity.map { $0 == identity } ?? true }

    deinit { io.close() }

    /// A mapping of the file that covers its first `end` bytes: the current one, or a longer
    /// one when the file has grown past it (mappings are never moved or shrunk under the
    /// snapshots that use them: each keeps the one it began on).
    func mapping(covering end: UInt64) throws -> MappedFile {
        try mapped.withLock { state in
            if let current = state.file, UInt64(current.count) >= end { return current }
            guard end <= UInt64(Int.max / 2) else {
                throw StoreError.corrupt("the store file would be \(end) bytes long", path: path, offset: nil)
            }
            let mapping: any FileMapping
            do { mapping = try io.map(length: Int(end), roomToGrow: true) } catch {
                throw StoreError.io(error, doing: "mapping the store file", path: path)
            }
            guard UInt64(mapping.count) >= end else {
                throw StoreError(.ioFailure, "The store file could not be mapped whole (\(mapping.count) of \(end) bytes).", path: path)
            }
            let fresh = try MappedFile(mapping: mapping, counters: counters, path: path)
            state.file = fresh
            return fresh
        }
    }
}

/// Appends to the end of the store file for the one write transaction at a time.
/// Bytes are buffered and written in large pieces; the checksum of everything appended since
/// the last commit (the commit's body) is kept as it goes.
final class AppendWriter: @unchecked Sendable {  // used only by the holder of Store.writerGate
    let file: StoreFile
    /// The end of the last commit record: everything before it is committed.
    @exclusivity(unchecked) private(set) var committedEnd: UInt64
    @exclusivity(unchecked) private(set) var flushedEnd: UInt64
    /// Everything before this offset is known to be synced.
    @exclusivity(unchecked) private(set) var syncedEnd: UInt64
    /// The file's size as this writer left it: the bytes from `flushedEnd` to here are zeros
    /// it wrote ahead of its commits (see `preallocate`).
    @exclusivity(unchecked) private(set) var fileEnd: UInt64
    /// A write failed since the last commit: what lies after `flushedEnd` is unknown.
    @exclusivity(unchecked) private var writeFailed = false
    @exclusivity(unchecked) private var buffer: [UInt8] = []
    @exclusivity(unchecked) private var body = StreamingChecksum()
    static let flushThreshold = 1 << 20
    /// Node buffers the last write transaction let go of, for the next one (`DirtyBudget`):
    /// a commit of a few rows changes a handful of nodes, each a `malloc` and a `free` before
    /// (W2). At most `keptSpares` of `Node.initialCapacity` bytes.
    @exclusivity(unchecked) private var spares: [UnsafeMutableRawPointer] = []
    static let keptSpares = 16

    init(file: StoreFile, committedEnd: UInt64, syncedEnd: UInt64) {
        self.file = file
        self.committedEnd = committedEnd
        self.flushedEnd = committedEnd
        self.fileEnd = committedEnd
        self.syncedEnd = syncedEnd
        buffer.reserveCapacity(AppendWriter.flushThreshold)
    }

    deinit { for spare in spares { spare.deallocate() } }

    /// The spare node buffers, taken (a transaction's budget holds them meanwhile).
    func takeSpares() -> [UnsafeMutableRawPointer] {
        defer { spares = [] }
        return spares
    }

    /// Keeps a finished transaction's spare node buffers (at most `keptSpares`).
    func keepSpares(of budget: DirtyBudget) {
        let kept = budget.takeSpares(keeping: AppendWriter.keptSpares - spares.count)
        if spares.isEmpty { spares = kept } else { spares += kept }
    }

    var end: UInt64 { flushedEnd + UInt64(buffer.count) }
    var bodySize: UInt64 { end - committedEnd }
    var bodyChecksum: UInt64 { body.value }

    /// Appends bytes; returns the offset they start at.
    @discardableResult
    func append(_ bytes: [UInt8]) throws -> UInt64 {
        try bytes.withUnsafeBytes { try append($0) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        let offset = end
        body.update(bytes)
        if bytes.count >= AppendWriter.flushThreshold {
            try flush()
            try write(bytes)
            return offset
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= AppendWriter.flushThreshold { try flush() }
        return offset
    }

    /// Appends a page or a value frame: at the next multiple of 16 (`PageLayout.alignment`),
    /// after zeros (part of the body); returns its offset.
    @discardableResult
    func appendAligned(_ bytes: [UInt8]) throws -> UInt64 {
        try bytes.withUnsafeBytes { try appendAligned($0) }
    }

    /// `appendAligned` of bytes where they lie (a packed node's page, written as it is).
    @discardableResult
    func appendAligned(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        let padding = Int((0 &- end) & UInt64(PageLayout.alignment - 1))
        if padding > 0 { _ = try withUnsafeBytes(of: (UInt64(0), UInt64(0))) { try append(UnsafeRawBufferPointer(rebasing: $0[0..<padding])) } }
        return try append(bytes)
    }

    /// Appends the commit record itself, which is not part of the body checksum.
    func appendCommitRecord(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try write($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        do { try file.io.write(bytes, at: flushedEnd) } catch {
            writeFailed = true
            throw error
        }
        flushedEnd += UInt64(bytes.count)
        fileEnd = Swift.max(fileEnd, flushedEnd)
        file.counters.bytesWritten.add(bytes.count, ordering: .relaxed)
    }

    /// Zeros written ahead of the commits, so that a commit overwrites blocks the file already
    /// has instead of growing it: fdatasync then has no size or block map to write, and costs
    /// about two thirds of an append's (Docs/Durability.md, "Space written ahead"). Called after
    /// a commit; the zeros reach the disk with the next commit's sync. Best effort: if the
    /// zeros cannot be written (a full disk), the commits append as before.
    func preallocate() {
        guard writeFailed == false, fileEnd < flushedEnd + AppendWriter.preallocationSlack else { return }
        let chunk = Swift.min(Swift.max(flushedEnd / 8, AppendWriter.preallocationMinimum), AppendWriter.preallocationMaximum)
        let target = (flushedEnd + chunk + 4095) & ~4095
        var position = Swift.max(fileEnd, flushedEnd)
        do {
            while position < target {
                let count = Int(Swift.min(target - position, UInt64(AppendWriter.zeros.count)))
                try AppendWriter.zeros.withUnsafeBytes { try file.io.write(UnsafeRawBufferPointer(rebasing: $0[0..<count]), at: position) }
                position += UInt64(count)
                fileEnd = position
                file.counters.bytesWritten.add(count, ordering: .relaxed)
            }
        } catch {
            // Part of the zeros may be there: cut them off, or let the next discard do it.
            if (try? file.io.truncate(to: flushedEnd)) != nil { fileEnd = flushedEnd } else { writeFailed = true }
        }
    }

    /// Zeros are written ahead when fewer than this many remain after the last commit.
    static let preallocationSlack: UInt64 = 32 * 1024
    /// Zeros written ahead at a time: an eighth of the file, within these bounds.
    static let preallocationMinimum: UInt64 = 64 * 1024
    static let preallocationMaximum: UInt64 = 4 * 1024 * 1024
    private static let zeros = [UInt8](repeating: 0, count: 256 * 1024)

    /// Cuts off the zeros written ahead (when the writer closes the store).
    func trimPreallocation() {
        guard fileEnd > committedEnd, flushedEnd == committedEnd, buffer.isEmpty else { return }
        if (try? file.io.truncate(to: committedEnd)) != nil { fileEnd = committedEnd }
    }

    func sync() throws {
        try file.io.sync()
        syncedEnd = flushedEnd
        file.counters.syncs.add(1, ordering: .relaxed)
    }

    /// Everything appended so far is now committed.
    func markCommitted() {
        committedEnd = end
        body = StreamingChecksum()
        writeFailed = false
    }

    /// Drops what was appended since the last commit.
    func discard() throws {
        buffer.removeAll(keepingCapacity: true)
        body = StreamingChecksum()
        // A failed write may have left part of its bytes after flushedEnd. The zeros written
        // ahead may stay (no commit record is in them).
        if flushedEnd > committedEnd || writeFailed {
            flushedEnd = committedEnd
            try file.io.truncate(to: committedEnd)
            fileEnd = committedEnd
            writeFailed = false
        }
    }

    /// Calls `body` with `count` bytes appended by the current transaction (at or after
    /// `committedEnd`), from the file or from the buffer not yet written.
    func withUncommittedBytes<R>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        // A pointer from a damaged page may hold any offset: compare before converting.
        guard offset >= committedEnd, offset <= end, UInt64(count) <= end - offset else {
            throw StoreError.corrupt("a value pointer runs past the end of the transaction", path: file.path, offset: offset)
        }
        if offset >= flushedEnd {
            let start = Int(offset - flushedEnd)
            return try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        }
        if offset + UInt64(count) <= flushedEnd {
            let map = try file.mapping(covering: flushedEnd)
            return try body(UnsafeRawBufferPointer(start: map.base + Int(offset), count: count))
        }
        // Across the flushed end: put the two halves together.
        var bytes = try file.io.read(count: Int(flushedEnd - offset), at: offset)
        bytes.append(contentsOf: buffer[0..<(count - bytes.count)])
        return try bytes.withUnsafeBytes(body)
    }
}
