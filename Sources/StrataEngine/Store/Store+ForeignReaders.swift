// The readers of a read-only store, which another process may write: each read transaction
// follows the commit the writer published, or the last whole one in the file at the path.

import Synchronization

extension Store {
    /// A read transaction of a read-only store, on the last whole commit: the one the writer
    /// published if a writer has the store open, or else the last one in the file at the path
    /// (whoever wrote it, and whether or not that writer is still alive). It is registered in
    /// the lock file before anything is read, so that a writer keeps what it reads.
    func beginForeignRead(_ lockFile: LockFile) throws -> ReadTransaction {
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
}
