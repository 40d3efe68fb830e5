// A store's life once open: its commits made durable (`sync`), closing, letting go of a file
// no longer at its path (`relinquish`), and compaction's switch to a new file (`replaceFile`).

import Dispatch
import Synchronization

extension Store {
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

    /// True unless the store's path is known to name another file than the one this store has
    /// open (one was renamed over it, or it was removed).
    public var pathNamesItsFile: Bool {
        let identity: FileIdentity?
        // A path that cannot be looked at is not known to name another file. (Its device and
        // inode alone: asking for its times cost every durable commit an inode write; see
        // `Syscalls.identity`.)
        do { identity = try fileSystem.identity(of: path) } catch { return true }
        guard let identity else { return false }
        return currentSnapshot().file.isSameFile(as: identity)
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

    /// Compaction's switch to the new file.
    func replaceFile(snapshot: Snapshot, writer: AppendWriter) {
        let stale = state.withLock { s -> SharedReader? in
            s.writer = writer
            return s.setSnapshot(snapshot)
        }
        _ = consume stale
        publishToOtherProcesses(snapshot)
    }
}
