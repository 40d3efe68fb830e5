import Synchronization

/// Counts of the work a store has done since it was opened: what benchmarks and tests read.
public struct StoreStatistics: Sendable, Hashable {
    /// Pages read from the file (cache misses).
    public var pagesRead: Int
    /// Record blocks read from the file (cache misses).
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

/// One open store file with its caches. Compaction makes a new one; snapshots keep the old
/// one alive (and open) until the last reader is done.
final class StoreFile: Sendable {
    let io: any FileHandleIO
    let path: String
    let salt: UInt64
    let counters: Counters
    private let nodes: TwoGenerationCache<Node>
    private let blocks: TwoGenerationCache<RecordBlock>

    static let blockSize = 32 * 1024

    init(io: any FileHandleIO, path: String, salt: UInt64, cacheSize: Int, counters: Counters) {
        self.io = io
        self.path = path
        self.salt = salt
        self.counters = counters
        // Decoded pages cost about twice their size in memory; records share the rest.
        self.nodes = TwoGenerationCache(capacity: cacheSize / 2)
        self.blocks = TwoGenerationCache(capacity: cacheSize / 2)
    }

    deinit { io.close() }

    /// Reads (or finds in the cache) the node at `ref`. Pages of a snapshot end before `limit`.
    func readNode(_ ref: PageRef, limit: UInt64) throws -> Node {
        if let node = nodes.get(ref.offset) { return node }
        guard ref.length >= UInt32(Node.headerSize), ref.length <= UInt32(Node.maximumPageSize),
              ref.offset >= UInt64(FileHeader.size), ref.offset <= limit, UInt64(ref.length) <= limit - ref.offset else {
            throw StoreError.corrupt("a page pointer (\(ref.length) bytes at \(ref.offset)) points outside the file", path: path, offset: ref.offset)
        }
        let bytes: [UInt8]
        do { bytes = try io.read(count: Int(ref.length), at: ref.offset) }
        catch { throw StoreError.io(error, doing: "reading a page", path: path) }
        counters.pagesRead.add(1, ordering: .relaxed)
        guard let node = Node.decode(page: bytes, at: ref) else {
            throw StoreError.corrupt("the page at byte \(ref.offset) fails its checksum or is malformed", path: path, offset: ref.offset)
        }
        nodes.put(ref.offset, node, cost: 2 * bytes.count + 64)
        return node
    }

    func cacheWrittenNode(_ node: Node, _ ref: PageRef) {
        nodes.put(ref.offset, node, cost: 2 * Int(ref.length) + 64)
    }

    /// Calls `body` with `count` bytes at `offset`, all of which lie before `limit`.
    func withBytes<R>(at offset: UInt64, count: Int, limit: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if let (block, within) = try cachedBlock(at: offset, count: count, limit: limit) {
            return try block.bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[within..<(within + count)])) }
        }
        return try readUncached(at: offset, count: count).withUnsafeBytes(body)
    }

    /// Calls `body` with the payload of the record frame at `offset` (`count` bytes, header
    /// included) once the frame is checked: its length, its index keys and its checksum. The
    /// checksum is verified once per frame while its block stays cached (the block's bytes do
    /// not change), not at every read.
    func withCheckedRecord<R>(at offset: UInt64, count: Int, limit: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        func checked(_ raw: UnsafeRawBufferPointer, verified: Bool) throws -> UnsafeRawBufferPointer {
            guard let payload = RecordFrame.check(raw, verifyChecksum: !verified) else {
                throw StoreError.corrupt("the record at byte \(offset) fails its checksum", path: path, offset: offset)
            }
            return UnsafeRawBufferPointer(rebasing: raw[payload...])
        }
        if let (block, within) = try cachedBlock(at: offset, count: count, limit: limit) {
            let verified = block.isVerified(within)
            return try block.bytes.withUnsafeBytes { all in
                let payload = try checked(UnsafeRawBufferPointer(rebasing: all[within..<(within + count)]), verified: verified)
                if !verified { block.markVerified(within) }
                return try body(payload)
            }
        }
        return try readUncached(at: offset, count: count).withUnsafeBytes { try body(try checked($0, verified: false)) }
    }

    /// The cached block holding all of `count` bytes at `offset` (read into the cache if
    /// needed), and where they start in it; nil when they cross a block boundary.
    private func cachedBlock(at offset: UInt64, count: Int, limit: UInt64) throws -> (RecordBlock, Int)? {
        guard offset <= limit, UInt64(count) <= limit - offset else {
            throw StoreError.corrupt("a record pointer (\(count) bytes at \(offset)) points outside the file", path: path, offset: offset)
        }
        let blockSize = UInt64(StoreFile.blockSize)
        let block = offset / blockSize
        let within = Int(offset % blockSize)
        guard within + count <= StoreFile.blockSize else { return nil }
        if let cached = blocks.get(block), cached.bytes.count >= within + count { return (cached, within) }
        let start = block * blockSize
        let length = Int(Swift.min(blockSize, limit - start))
        let bytes: [UInt8]
        do { bytes = try io.read(count: length, at: start) }
        catch { throw StoreError.io(error, doing: "reading a record", path: path) }
        counters.blocksRead.add(1, ordering: .relaxed)
        guard bytes.count >= within + count else {
            throw StoreError.corrupt("the file ends inside a record at byte \(offset)", path: path, offset: offset)
        }
        let loaded = RecordBlock(bytes)
        blocks.put(block, loaded, cost: bytes.count + 64)
        return (loaded, within)
    }

    /// Bytes that cross a block boundary (a large record), read without the cache.
    private func readUncached(at offset: UInt64, count: Int) throws -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try io.read(count: count, at: offset) }
        catch { throw StoreError.io(error, doing: "reading a record", path: path) }
        counters.blocksRead.add(1, ordering: .relaxed)
        guard bytes.count == count else {
            throw StoreError.corrupt("the file ends inside a record at byte \(offset)", path: path, offset: offset)
        }
        return bytes
    }
}

/// A 32 KiB piece of the file in the record cache, and the record frames in it whose checksums
/// have been verified since it was read.
final class RecordBlock: Sendable {
    let bytes: [UInt8]
    /// Offsets (within the block) of frames whose checksum passed.
    private let verified = Mutex<Set<UInt16>>([])

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func isVerified(_ within: Int) -> Bool { verified.withLock { $0.contains(UInt16(truncatingIfNeeded: within)) } }
    func markVerified(_ within: Int) { _ = verified.withLock { $0.insert(UInt16(truncatingIfNeeded: within)) } }
}

/// Appends to the end of the store file for the one write transaction at a time.
/// Bytes are buffered and written in large pieces; the checksum of everything appended since
/// the last commit (the commit's body) is kept as it goes.
final class AppendWriter: @unchecked Sendable {  // used only by the holder of Store.writerGate
    let file: StoreFile
    /// The end of the last commit record: everything before it is committed.
    private(set) var committedEnd: UInt64
    private(set) var flushedEnd: UInt64
    /// Everything before this offset is known to be synced.
    private(set) var syncedEnd: UInt64
    private var buffer: [UInt8] = []
    private(set) var bodyChecksum: UInt32 = 0
    static let flushThreshold = 1 << 20

    init(file: StoreFile, committedEnd: UInt64, syncedEnd: UInt64) {
        self.file = file
        self.committedEnd = committedEnd
        self.flushedEnd = committedEnd
        self.syncedEnd = syncedEnd
        buffer.reserveCapacity(AppendWriter.flushThreshold)
    }

    var end: UInt64 { flushedEnd + UInt64(buffer.count) }
    var bodySize: UInt64 { end - committedEnd }

    /// Appends bytes; returns the offset they start at.
    @discardableResult
    func append(_ bytes: [UInt8]) throws -> UInt64 {
        try bytes.withUnsafeBytes { try append($0) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        let offset = end
        bodyChecksum = CRC32C.update(bodyChecksum, bytes)
        if bytes.count >= AppendWriter.flushThreshold {
            try flush()
            try write(bytes)
            return offset
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= AppendWriter.flushThreshold { try flush() }
        return offset
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
        try file.io.write(bytes, at: flushedEnd)
        flushedEnd += UInt64(bytes.count)
        file.counters.bytesWritten.add(bytes.count, ordering: .relaxed)
    }

    func sync() throws {
        try file.io.sync()
        syncedEnd = flushedEnd
        file.counters.syncs.add(1, ordering: .relaxed)
    }

    /// Everything appended so far is now committed.
    func markCommitted() {
        committedEnd = end
        bodyChecksum = 0
    }

    /// Drops what was appended since the last commit.
    func discard() throws {
        buffer.removeAll(keepingCapacity: true)
        bodyChecksum = 0
        // A failed write may have left part of its bytes after flushedEnd.
        if try flushedEnd > committedEnd || file.io.size() > committedEnd {
            flushedEnd = committedEnd
            try file.io.truncate(to: committedEnd)
        }
    }

    /// Reads bytes appended by the current transaction (at or after `committedEnd`).
    func withUncommittedBytes<R>(at offset: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if offset >= flushedEnd {
            // A pointer from a damaged page may hold any offset: compare before converting.
            guard offset - flushedEnd <= UInt64(buffer.count), count <= buffer.count - Int(offset - flushedEnd) else {
                throw StoreError.corrupt("a record pointer runs past the end of the transaction", path: file.path, offset: offset)
            }
            let start = Int(offset - flushedEnd)
            return try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + count)])) }
        }
        var bytes = try file.io.read(count: Swift.min(count, Int(flushedEnd - offset)), at: offset)
        if bytes.count < count {
            let rest = count - bytes.count
            guard rest <= buffer.count else {
                throw StoreError.corrupt("a record pointer runs past the end of the transaction", path: file.path, offset: offset)
            }
            bytes.append(contentsOf: buffer[0..<rest])
        }
        return try bytes.withUnsafeBytes(body)
    }
}
