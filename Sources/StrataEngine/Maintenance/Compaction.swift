import Foundation

/// What `Store.compact()` did.
public struct CompactionReport: Sendable {
    public let bytesBefore: Int
    public let bytesAfter: Int
    public let records: Int
    public let blobFilesRemoved: Int
    public var bytesReclaimed: Int { bytesBefore - bytesAfter }
}

extension Store {
    /// Writes the live data into a new file and switches to it atomically, reclaiming the space
    /// of superseded pages and values; then removes blob files that no record refers to.
    ///
    /// A crash at any point loses nothing: until the rename, the old file is the store; after
    /// it, the new one holds the same commit. Readers that began before (here or in other
    /// processes) keep reading the old file. Waits for the write transaction, if one is open.
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
        // (Compacting a file no longer at the path would rename the old data over the new file.)
        try checkStillAtPath()
        let tx = try beginRead()
        let old = tx.base
        let temporary = path + ".compact"
        let bytesBefore: Int
        let copied: CompactCopy.Result
        do {
            bytesBefore = Int(try old.file.io.size())
            if fileSystem.fileExists(temporary) { try fileSystem.removeFile(temporary) }
            let io = try fileSystem.createFile(temporary, permissionsOf: path)
            var salt: UInt64 = 0
            while salt == 0 || salt == old.file.salt { salt = UInt64.random(in: 1...UInt64.max) }
            let file = StoreFile(io: io, path: path, salt: salt, counters: old.file.counters)
            copied = try CompactCopy.copy(tx, into: file)
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(path.parentDirectory)
        } catch {
            try? fileSystem.removeFile(temporary)
            let failure = StoreError.io(error, doing: "compacting", path: path,
                                        consequence: "The store holds what it held (compaction writes a new file first).",
                                        next: StoreError.nextWriteReopens)
            fail(failure)
            throw failure
        }
        replaceFile(snapshot: copied.snapshot, writer: copied.writer)
        markDurable(copied.snapshot.sequence)   // the new file was synced before it took the store's name
        // Blob files that no commit refers to: from rolled-back or interrupted transactions,
        // or deleted while a reader (of any process) still read them. While a reader in another
        // process reads an older commit, they stay (it may need them): a later compaction
        // removes them.
        var removed = 0
        let foreignReaders = (try? lockFile?.hasForeignReader(below: copied.snapshot.sequence)) ?? true
        if !foreignReaders {
            let retired = retiredBlobIDs()   // deleted, but older readers of this store may still read them
            for id in blobs.fileIDs() where !copied.liveBlobs.contains(id) && !retired.contains(id) {
                blobs.remove(id)
                removed += 1
            }
        }
        return CompactionReport(bytesBefore: bytesBefore, bytesAfter: Int(copied.snapshot.end), records: copied.records, blobFilesRemoved: removed)
    }
}

/// Copies the live trees of a snapshot into a new file (Docs/FileFormat.md, "Compaction").
enum CompactCopy {
    struct Result {
        let snapshot: Snapshot
        let writer: AppendWriter
        let records: Int
        let liveBlobs: Set<UInt64>
    }

    static func copy(_ tx: ReadTransaction, into file: StoreFile) throws -> Result {
        let old = tx.base
        let header = FileHeader(salt: file.salt, createdMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000))
        try file.io.truncate(to: 0)
        try file.io.write(header.encode(), at: 0)
        let writer = AppendWriter(file: file, committedEnd: UInt64(FileHeader.size), syncedEnd: UInt64(FileHeader.size))
        var catalog = old.catalog
        var records = 0
        var liveBlobs = Set<UInt64>()
        for p in catalog.collections.indices {
            let (root, bytes, count) = try copyTree(tx, .rows(catalog.collections[p].id), into: writer)
            catalog.collections[p].root = root
            catalog.collections[p].liveBytes = bytes
            records += count
        }
        for p in catalog.indexes.indices {
            (catalog.indexes[p].root, catalog.indexes[p].liveBytes, _) = try copyTree(tx, .index(catalog.indexes[p].id), into: writer)
        }
        (catalog.systemRoot, catalog.systemBytes, _) = try copyTree(tx, .system, into: writer) { key in
            if key.count == 9, key[0] == TreeKey.blobTag { liveBlobs.insert(key.loadBE64(1)) }
        }
        let offset = writer.end
        let record = CommitRecord(sequence: old.sequence, offset: offset, previousOffset: 0, bodyStart: UInt64(FileHeader.size),
                                  bodyChecksum: writer.bodyChecksum, flags: CommitRecord.flagBodySynced,
                                  timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: file.salt, catalog: catalog).encode()
        let map = try file.mapping(covering: offset + UInt64(record.count))
        writer.appendCommitRecord(record)
        try writer.flush()
        try writer.sync()
        writer.markCommitted()
        let snapshot = Snapshot(sequence: old.sequence, catalog: catalog, commitOffset: offset, end: writer.committedEnd, file: file, map: map)
        return Result(snapshot: snapshot, writer: writer, records: records, liveBlobs: liveBlobs)
    }

    /// Copies one tree (and the value frames its leaves refer to); returns its new root, its
    /// bytes and its number of cells.
    private static func copyTree(_ tx: ReadTransaction, _ tree: TreeID, into writer: AppendWriter,
                                 seeing: ([UInt8]) -> Void = { _ in }) throws -> (UInt64, UInt64, Int) {
        let loader = BulkLoader(writer: writer, fill: PageLayout.targetSize(of: tree))
        var frames: UInt64 = 0
        var count = 0
        var cursor = tx.cursor(tree)
        try cursor.seek(atLeast: nil)
        var key: [UInt8] = []
        var value: [UInt8] = []
        while cursor.isValid {
            cursor.copyKey(into: &key)
            seeing(key)
            let cell = cursor.cell
            if cell.flags & ValueFlags.inFrame != 0 {
                // The value lies in a frame of its own: copy the frame and point at the copy.
                let head = cell.flags & ValueFlags.keysDigest != 0 ? 4 : 0
                guard cell.value.count == head + ValueLocation.encodedSize,
                      let location = ValueLocation.decode(UnsafeRawBufferPointer(rebasing: cell.value[head...])) else {
                    throw StoreError.corrupt("a malformed value location", path: tx.path, offset: nil)
                }
                let newOffset = try tx.pages.withValue(location) { payload in
                    try writer.appendAligned(ValueFrame.encode(payload))
                }
                frames += UInt64(location.length)
                value.removeAll(keepingCapacity: true)
                value.append(contentsOf: cell.value[0..<head])
                ValueLocation(offset: newOffset, length: location.length).encode(into: &value)
                try key.withUnsafeBytes { k in try value.withUnsafeBytes { try loader.add(k, $0, flags: cell.flags) } }
            } else {
                try key.withUnsafeBytes { try loader.add($0, cell.value, flags: cell.flags) }
            }
            count += 1
            try cursor.next()
        }
        let root = try loader.finish()
        return (root, loader.writtenBytes + frames, count)
    }
}
