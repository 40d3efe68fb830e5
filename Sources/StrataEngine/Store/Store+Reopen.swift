// Going on after a failed write or sync (Docs/FileFormat.md, "The commit protocol";
// Docs/Durability.md).
//
// A failed write or sync marks the store failed. Nothing more is written or synced through the
// descriptor that failed: after a failed fsync the kernel may have marked the unwritten pages
// clean, so a second fsync on it could succeed without them (PostgreSQL's "fsyncgate"). The
// next writing operation (a write transaction, `sync()`, `compact()`) first reopens the file:
//
// 1. sync the folder, open a new descriptor of the same path and read its header;
// 2. cut the file at the end of the last commit this store made, so no byte of the failed
//    commit survives, whatever the failed commit's own clean-up managed;
// 3. write again, through the new descriptor, every byte since the last successful sync (reads
//    see what the process wrote; writing it again makes those pages dirty, so that the next
//    sync really sends them to the disk), then sync;
// 4. run recovery on the result, which must find the store's last commit where it was;
// 5. go on with a new writer and a new mapping on the new descriptor, and publish the commit
//    again. The writer's lock is in the lock file, held all along. Read transactions begun
//    before keep the old descriptor and mapping until they end.
//
// A file with another salt is the one a compaction renamed over the store before it failed:
// the store goes on with it, as the compaction would have. When any step fails, the store
// stays failed and the operation throws that step's error (a full disk is `.diskFull` again);
// the next operation tries again.

import Synchronization

extension Store {
    /// The bytes rewritten in one piece when a store goes on after a failure.
    static let rewriteChunk = 1 << 20

    /// Reopens the store file if an earlier write or sync failed (see the file comment);
    /// does nothing otherwise. The caller holds `writerGate`.
    func reopenAfterFailure() throws {
        guard let failed = failureToRecover() else { return }
        let io: any FileHandleIO
        do {
            // A compaction that failed after its rename may have left the new name unsynced.
            try fileSystem.syncDirectory(path.parentDirectory)
            io = try fileSystem.openFile(path, readOnly: false, create: false)
        } catch {
            throw reopenFailure(error)
        }
        do {
            guard case .success(let header) = FileHeader.decode(try io.read(count: FileHeader.size, at: 0)) else {
                throw replacedFile(failed.failure)
            }
            if header.salt == failed.snapshot.file.salt {
                try continueFile(io, snapshot: failed.snapshot, syncedEnd: failed.syncedEnd)
            } else {
                try adoptCompactedFile(io, salt: header.salt, snapshot: failed.snapshot, failure: failed.failure)
            }
        } catch {
            io.close()
            throw reopenFailure(error)
        }
        markDurable(failed.snapshot.sequence)
    }

    /// Steps 2 to 5 on the store's own file: cut, write again, sync, recover, go on.
    private func continueFile(_ io: any FileHandleIO, snapshot: Snapshot, syncedEnd: UInt64) throws {
        try io.truncate(to: snapshot.end)
        try rewrite(io, from: Swift.min(syncedEnd, snapshot.end), to: snapshot.end)
        try io.sync()
        guard let commit = try Recovery.lastCommit(io: io, size: snapshot.end, salt: snapshot.file.salt, path: path),
              commit.sequence == snapshot.sequence, commit.offset == snapshot.commitOffset else {
            throw StoreError.corrupt("after an earlier failed write, the file no longer holds the store's last commit (\(snapshot.sequence)) where it was written",
                                     path: path, offset: snapshot.commitOffset)
        }
        let file = StoreFile(io: io, path: path, salt: snapshot.file.salt, counters: snapshot.file.counters)
        file.counters.syncs.add(1, ordering: .relaxed)
        resume(snapshot: Snapshot(sequence: commit.sequence, catalog: commit.catalog, commitOffset: commit.offset, end: commit.end,
                                  file: file, map: try file.mapping(covering: commit.end)),
               writer: AppendWriter(file: file, committedEnd: commit.end, syncedEnd: commit.end))
    }

    /// A compaction renamed its file over the store, then failed (syncing the folder): that
    /// file, synced before the rename, holds the store's last commit. Go on with it, as the
    /// compaction would have.
    private func adoptCompactedFile(_ io: any FileHandleIO, salt: UInt64, snapshot: Snapshot, failure: StoreError) throws {
        let size = try io.size()
        guard let commit = try Recovery.lastCommit(io: io, size: size, salt: salt, path: path), commit.sequence == snapshot.sequence else {
            throw replacedFile(failure)
        }
        if size > commit.end { try io.truncate(to: commit.end) }
        try io.sync()
        let file = StoreFile(io: io, path: path, salt: salt, counters: snapshot.file.counters)
        resume(snapshot: Snapshot(sequence: commit.sequence, catalog: commit.catalog, commitOffset: commit.offset, end: commit.end,
                                  file: file, map: try file.mapping(covering: commit.end)),
               writer: AppendWriter(file: file, committedEnd: commit.end, syncedEnd: commit.end))
    }

    private func replacedFile(_ failure: StoreError) -> StoreError {
        StoreError(.writesRefused, "An earlier write failed (see the cause), and the file at this path is no longer this store's, so the store cannot go on with it. Close the store and open it again.",
                   path: path, underlying: failure)
    }

    private func reopenFailure(_ error: any Error) -> StoreError {
        StoreError.io(error, doing: "reopening the store file after an earlier failed write", path: path,
                      consequence: "The store keeps its last commit.", next: "The next write tries again.")
    }

    /// Reads the bytes `start..<end` through `io` and writes them again at the same place.
    private func rewrite(_ io: any FileHandleIO, from start: UInt64, to end: UInt64) throws {
        var offset = start
        while offset < end {
            let count = Int(Swift.min(UInt64(Store.rewriteChunk), end - offset))
            let bytes = try io.read(count: count, at: offset)
            guard bytes.count == count else {
                throw StoreError.corrupt("after an earlier failed write, the file ends at byte \(offset + UInt64(bytes.count)), inside its last commit",
                                         path: path, offset: offset)
            }
            try io.write(bytes, at: offset)
            offset += UInt64(count)
        }
    }
}
