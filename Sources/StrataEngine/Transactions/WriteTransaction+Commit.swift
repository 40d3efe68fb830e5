// Committing a write transaction, or rolling it back.
//
// `commit` reads as its steps, after bbolt's `tx.Commit`: make the last commit durable if it is
// not yet, apply the held-back index entries, write the changed trees, finish the body, sync the
// new blobs' folder, write the commit record, publish. Each step is a function that can be read
// alone; a failure in any of them loses the whole transaction (`failed`). Docs/FileFormat.md,
// "The commit protocol", says why the steps come in this order.

import Foundation

extension WriteTransaction {
    /// Makes the transaction's changes durable (per the store's durability) and visible.
    ///
    /// - Throws: `StoreError` `.diskFull` or `.ioFailure` if a write or sync fails; nothing of
    ///   the transaction is kept, and the next write transaction reopens the store file
    ///   (through a new descriptor, never retrying the failed sync) before it goes on.
    public func commit() throws {
        try checkOpen()
        finished = true
        defer { endTurn() }
        let durable = store.options.durability == .full
        let sequence = try nextSequence()
        let snapshot: Snapshot
        do {
            try makePreviousCommitDurable(durable)
            try applyPending()
            try writeTrees()
            let flags = try finishBody()
            try syncNewBlobs()
            snapshot = try writeCommitRecord(sequence: sequence, flags: flags, durable: durable)
            trustWrittenPages(in: snapshot.map)
        } catch {
            throw failed(error)
        }
        publish(snapshot, durable: durable)
    }

    /// The sequence number of this commit. A commit's sequence number only comes from the file:
    /// one at its maximum is damage (no commit can follow it), refused before anything is
    /// written.
    private func nextSequence() throws -> UInt64 {
        guard base.sequence < UInt64.max else {
            throw StoreError.corrupt("the last commit's sequence number is \(base.sequence), so no commit can follow it",
                                     path: store.path, offset: base.commitOffset)
        }
        return base.sequence + 1
    }

    /// The first commit of a session makes what the last one left durable before it builds on
    /// it (see Store.openFile).
    private func makePreviousCommitDurable(_ durable: Bool) throws {
        if durable && writer.syncedEnd < writer.committedEnd { try writer.sync() }
    }

    /// Writes every changed tree and puts its root and sizes in the catalog.
    private func writeTrees() throws {
        // (Room for a small commit's pages at once: grown from empty, the list was reallocated
        // at its first, second, fourth and eighth page.)
        if writtenPages.capacity < 16 { writtenPages.reserveCapacity(16) }
        for (id, tree) in trees.all {
            let root = try tree.write(into: writer, scratch: &scratch, pages: &writtenPages)
            let delta = Int64(clamping: tree.writtenBytes) - Int64(clamping: tree.supersededBytes) + frameBytes[id, default: 0]
            func adjusted(_ bytes: UInt64) -> UInt64 { delta >= 0 ? bytes &+ UInt64(delta) : bytes - Swift.min(bytes, UInt64(-delta)) }
            switch id {
            case .rows(let c):
                guard let p = catalog.collectionPosition(c) else { continue }
                catalog.collections[p].root = root
                catalog.collections[p].liveBytes = adjusted(catalog.collections[p].liveBytes)
            case .index(let i):
                guard let p = catalog.indexPosition(i) else { continue }
                catalog.indexes[p].root = root
                catalog.indexes[p].liveBytes = adjusted(catalog.indexes[p].liveBytes)
            case .system:
                catalog.systemRoot = root
                catalog.systemBytes = adjusted(catalog.systemBytes)
            }
        }
    }

    /// Ends the body (every page and value frame of this commit) and returns the commit
    /// record's flags that describe it. A large body is synced before its commit record, so
    /// that opening need not read it (in every durability mode: the flag must be true).
    private func finishBody() throws -> UInt32 {
        var flags: UInt32 = 0
        if writer.bodySize > Store.singleSyncBodyLimit {
            flags |= CommitRecord.flagBodySynced
            try writer.flush()
            try writer.sync()
        }
        if writer.syncedEnd < writer.committedEnd { flags |= CommitRecord.flagPreviousNotSynced }
        return flags
    }

    /// Blob files are durable before any commit refers to them, in every durability mode.
    private func syncNewBlobs() throws {
        if !newBlobs.isEmpty { try store.blobs.syncFolder() }
    }

    /// Appends the commit record (synced when the store is durable) and returns the snapshot it
    /// makes.
    private func writeCommitRecord(sequence: UInt64, flags: UInt32, durable: Bool) throws -> Snapshot {
        let offset = writer.end
        let record = CommitRecord(
            sequence: sequence, offset: offset, previousOffset: base.commitOffset,
            bodyStart: writer.committedEnd, bodyChecksum: writer.bodyChecksum, flags: flags,
            timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: file.salt, catalog: catalog).encode()
        // Mapped before the commit is written, so that a failure leaves nothing behind.
        let map = try file.mapping(covering: offset + UInt64(record.count))
        writer.appendCommitRecord(record)
        try writer.flush()
        if durable { try writer.sync() }
        writer.markCommitted()
        if durable { writer.preallocate() }
        return Snapshot(sequence: sequence, catalog: catalog, commitOffset: offset, end: writer.committedEnd, file: file, map: map)
    }

    /// This process wrote these pages from memory: it knows they are what it wrote, so its
    /// readers need not check them again (other processes do).
    private func trustWrittenPages(in map: MappedFile) {
        for page in writtenPages where page < UInt64(map.count) { map.verified.insert(page) }
    }

    /// A failed commit loses the transaction: the store is marked failed (its next write
    /// transaction reopens the file), and what this commit wrote is cut off, so that the file
    /// says what the error says: nothing was saved. After a failed sync its bytes may never
    /// reach the disk although reads still see them; a later session must not build on them.
    private func failed(_ error: any Error) -> StoreError {
        let failure = StoreError.io(error, doing: "committing", path: store.path,
                                    consequence: StoreError.transactionLost, next: StoreError.nextWriteReopens)
        store.fail(failure)
        try? writer.discard()
        return failure
    }

    /// Makes the new commit the one readers see, and removes the blobs it deleted once no
    /// reader can see them.
    private func publish(_ snapshot: Snapshot, durable: Bool) {
        file.counters.commits.add(1, ordering: .relaxed)
        store.publish(snapshot, durable: durable)
        store.retireBlobs(deletedBlobs, deletedBy: snapshot.sequence, durable: durable)
    }

    /// Ends this writer's turn: the budget's spare node buffers go back to the store's writer
    /// for the next transaction, and the next writer may begin.
    private func endTurn() {
        writer.keepSpares(of: budget)
        store.endWriting()
    }

    /// Drops every change of this transaction.
    public func rollback() {
        guard !finished else { return }
        finished = true
        defer { endTurn() }
        trees.removeAll()
        pending.removeAll()
        do { try writer.discard() } catch {
            store.fail(StoreError.io(error, doing: "rolling back", path: store.path, next: StoreError.nextWriteReopens))
        }
        for id in newBlobs { store.blobs.remove(id) }
    }
}
