// Blob ids, and the files of blobs deleted by a commit: removed once no live reader (here or
// in another process) can see them and the commit is durable, as the readers' counts tell.

import Synchronization

extension Store {
    func allocateBlobID(atLeast floor: UInt64) -> UInt64 {
        state.withLock { s in
            let id = Swift.max(s.nextBlobID, floor)
            s.nextBlobID = id + 1
            return id
        }
    }

    /// Removes the files of blobs deleted by commit `sequence` once no reader can see them
    /// and the commit is durable (`durable`: it was synced).
    func retireBlobs(_ ids: [UInt64], deletedBy sequence: UInt64, durable: Bool) {
        state.withLock { s in
            if durable { s.durableSequence = Swift.max(s.durableSequence, sequence) }
            s.retiredBlobs += ids.map { (sequence, $0) }
        }
        removeUnreadableBlobs()
    }

    /// Removes the retired blob files that no reader, here or in another process, can see.
    func removeUnreadableBlobs() {
        var candidates = state.withLock { $0.unreadableBlobs() }
        guard !candidates.isEmpty else { return }
        if let lockFile {
            var seen: [UInt64: Bool] = [:]
            candidates = candidates.filter { blob in
                if let busy = seen[blob.sequence] { return !busy }
                // When the lock file cannot tell, keep the file: an orphan is removed later.
                let busy = (try? lockFile.hasForeignReader(below: blob.sequence)) ?? true
                seen[blob.sequence] = busy
                return !busy
            }
        }
        let ids = Set(candidates.map(\.id))
        state.withLock { s in s.retiredBlobs.removeAll { ids.contains($0.id) } }
        for id in ids { blobs.remove(id) }
    }

    /// Every commit up to `sequence` is on disk: the blob files they deleted may go.
    func markDurable(_ sequence: UInt64) {
        retireBlobs([], deletedBy: sequence, durable: true)
    }

    /// A read transaction of commit `sequence` is done.
    func releaseReader(_ sequence: UInt64) {
        let foreign = options.readOnly
        let retired = state.withLock { s -> Bool in
            if let n = s.readers[sequence] {
                s.readers[sequence] = n > 1 ? n - 1 : nil
                if n == 1, foreign { lockFile?.unlockReader(sequence) }
            }
            return !s.retiredBlobs.isEmpty
        }
        // Only a retired blob can have become unreadable (asked under the same lock).
        if !foreign && retired { removeUnreadableBlobs() }
    }

    /// Blobs deleted by a commit whose files readers may still need.
    func retiredBlobIDs() -> Set<UInt64> {
        state.withLock { Set($0.retiredBlobs.map(\.id)) }
    }
}

/// Live read transactions by the sequence of the commit they read. There are a few distinct
/// sequences at most (readers of the last commits), so a short array: a dictionary hashed the
/// sequence twice per read transaction.
struct ReaderCounts {
    // Two lists side by side (a list of pairs was two more metadata for a fresh process's
    // first read to make, W8).
    private var sequences: [UInt64] = []
    private var counts: [Int] = []

    subscript(sequence: UInt64) -> Int? {
        get {
            for i in sequences.indices where sequences[i] == sequence { return counts[i] }
            return nil
        }
        set {
            if let i = sequences.firstIndex(of: sequence) {
                if let n = newValue {
                    counts[i] = n
                } else {
                    sequences.remove(at: i)
                    counts.remove(at: i)
                }
            } else if let n = newValue {
                sequences.append(sequence)
                counts.append(n)
            }
        }
    }

    subscript(sequence: UInt64, default value: Int) -> Int {
        get { self[sequence] ?? value }
        set { self[sequence] = newValue }
    }

    /// The sequence of the oldest commit a live reader reads.
    var oldest: UInt64? { sequences.min() }
}
