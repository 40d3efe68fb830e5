import Foundation

/// What `Store.compact()` did.
public struct CompactionReport: Sendable {
    public let bytesBefore: Int
    public let bytesAfter: Int
    public let records: Int
    public let blobFilesRemoved: Int
    public var bytesReclaimed: Int { bytesBefore - bytesAfter }
}

/// Builds a tree from entries given in key order, writing each node as soon as it is full.
/// Memory holds one node per level.
final class BulkLoader {
    private let writer: AppendWriter
    private var levels: [Node] = []
    private var firstKeys: [[UInt8]] = []
    private(set) var writtenBytes: UInt64 = 0
    /// Nodes are filled to this size, leaving room for later inserts.
    private let fill = Node.targetPageSize * 7 / 8

    init(writer: AppendWriter) { self.writer = writer }

    func add(_ key: [UInt8], _ value: [UInt8]) throws {
        try add(level: 0, key: key, value: value, child: nil)
    }

    private func add(level: Int, key: [UInt8], value: [UInt8]?, child: PageRef?) throws {
        if level == levels.count {
            levels.append(Node(isLeaf: level == 0))
            firstKeys.append([])
        }
        let node = levels[level]
        let entryKey: [UInt8]
        if node.count == 0 {
            firstKeys[level] = key
            entryKey = level == 0 ? key : []
        } else {
            entryKey = key
        }
        entryKey.withUnsafeBytes { k in
            if let value {
                value.withUnsafeBytes { node.insertEntry(at: node.count, key: k, value: $0) }
            } else {
                node.insertEntry(at: node.count, key: k, value: nil)
            }
        }
        if let child { node.children.append(.page(child)) }
        if node.pageSize >= fill && node.count >= 2 { try flush(level: level) }
    }

    private func write(_ node: Node) throws -> PageRef {
        let refs: [PageRef] = node.children.compactMap { if case .page(let r) = $0 { r } else { nil } }
        let bytes = node.encodePage(childRefs: refs)
        let offset = try writer.append(bytes)
        writtenBytes += UInt64(bytes.count)
        return PageRef(offset: offset, length: UInt32(bytes.count))
    }

    private func flush(level: Int) throws {
        let node = levels[level]
        let ref = try write(node)
        levels[level] = Node(isLeaf: level == 0)
        try add(level: level + 1, key: firstKeys[level], value: nil, child: ref)
    }

    /// Writes what is left and returns the root (nil for no entries).
    func finish() throws -> PageRef? {
        var level = 0
        while level < levels.count {
            let node = levels[level]
            let isTop = level == levels.count - 1
            if isTop {
                if node.count == 0 { return nil }
                if !node.isLeaf && node.count == 1, case .page(let only) = node.children[0] { return only }
                return try write(node)
            }
            if node.count > 0 { try flush(level: level) }
            level += 1
        }
        return nil
    }
}

extension Store {
    /// Writes the live data into a new file and switches to it atomically, reclaiming the space
    /// of superseded records and pages; then removes blob files that no record refers to.
    ///
    /// A crash at any point loses nothing: until the rename, the old file is the store; after
    /// it, the new one holds the same commit. Readers that began before keep reading the old
    /// file. Waits for the write transaction, if one is open.
    ///
    /// - Throws: `StoreError`; after an I/O failure the next write reopens the store file first.
    @discardableResult
    public func compact() throws -> CompactionReport {
        if options.readOnly {
            throw StoreError(.readOnly, "The store was opened read-only; it cannot be compacted.", path: path)
        }
        writerGate.wait()
        defer { endWriting() }
        try checkNotFailed()
        let tx = try beginReadUnlocked()
        let old = tx.base
        let temporary = path + ".compact"
        var records = 0
        var liveBlobs = Set<UInt64>()
        let bytesBefore: Int
        let newSnapshot: Snapshot
        let newWriter: AppendWriter
        do {
            bytesBefore = Int(try old.file.io.size())
            if fileSystem.fileExists(temporary) { try fileSystem.removeFile(temporary) }
            let io = try fileSystem.openFile(temporary, readOnly: false, create: true)
            guard try io.lock(exclusive: true) else {
                io.close()
                throw StoreError(.locked, "Another process holds the compaction file \(temporary).", path: path)
            }
            var salt: UInt64 = 0
            while salt == 0 || salt == old.file.salt { salt = UInt64.random(in: 1...UInt64.max) }
            let header = FileHeader(salt: salt, createdMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
            try io.write(header.encode(), at: 0)
            let file = StoreFile(io: io, path: path, salt: salt, cacheSize: options.cacheSize, counters: old.file.counters)
            let writer = AppendWriter(file: file, committedEnd: UInt64(FileHeader.size), syncedEnd: UInt64(FileHeader.size))
            let loader = BulkLoader(writer: writer)
            var cursor = TreeCursor(root: tx.root, reader: tx.reader)
            try cursor.seek(atLeast: nil)
            while cursor.isValid {
                let key = cursor.withKey { Array($0) }
                let tag = key.first ?? 0
                if tag == TreeKey.rowTag || tag == TreeKey.metadataTag {
                    let location = try cursor.withValue { try tx.location($0, at: "compaction") }
                    let frame = try old.file.withBytes(at: location.offset, count: Int(location.length), limit: old.end) { raw -> [UInt8] in
                        guard RecordFrame.check(raw) != nil else {
                            throw StoreError.corrupt("the record at byte \(location.offset) fails its checksum", path: path, offset: location.offset)
                        }
                        return Array(raw)
                    }
                    let offset = try writer.append(frame)
                    try loader.add(key, RecordLocation(offset: offset, length: location.length).encode())
                    if tag == TreeKey.rowTag { records += 1 }
                } else {
                    if tag == TreeKey.blobTag, key.count == 9 { liveBlobs.insert(key.loadBE64(1)) }
                    try loader.add(key, cursor.withValue { Array($0) })
                }
                try cursor.next()
            }
            let root = try loader.finish()
            var catalog = old.catalog
            catalog.liveTreeBytes = loader.writtenBytes
            let offset = writer.end
            let record = CommitRecord(sequence: old.sequence, offset: offset, previousOffset: 0, bodyStart: UInt64(FileHeader.size),
                                      bodyChecksum: writer.bodyChecksum, flags: CommitRecord.flagBodySynced, root: root,
                                      timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: salt, catalog: catalog)
            writer.appendCommitRecord(record.encode())
            try writer.flush()
            try writer.sync()
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(path.parentDirectory)
            writer.markCommitted()
            newWriter = writer
            newSnapshot = Snapshot(sequence: old.sequence, root: root, catalog: catalog, commitOffset: offset, end: writer.committedEnd, file: file)
        } catch {
            try? fileSystem.removeFile(temporary)
            let failure = StoreError.io(error, doing: "compacting", path: path,
                                        consequence: "The store holds what it held (compaction writes a new file first).",
                                        next: StoreError.nextWriteReopens)
            if failure.code != .locked { fail(failure) }
            throw failure
        }
        replaceFile(snapshot: newSnapshot, writer: newWriter)
        markDurable(newSnapshot.sequence)   // the new file was synced before it took the store's name
        // Blob files that no commit refers to: from rolled-back or interrupted transactions.
        var removed = 0
        let retired = retiredBlobIDs()   // deleted, but older readers may still read them
        for id in blobs.fileIDs() where !liveBlobs.contains(id) && !retired.contains(id) {
            blobs.remove(id)
            removed += 1
        }
        return CompactionReport(bytesBefore: bytesBefore, bytesAfter: Int(newSnapshot.end), records: records, blobFilesRemoved: removed)
    }

    /// A read transaction for callers that already hold the writer gate.
    func beginReadUnlocked() throws -> ReadTransaction {
        try beginRead()
    }
}
