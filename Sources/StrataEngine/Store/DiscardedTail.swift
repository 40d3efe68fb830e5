/// The bytes past a store's last valid commit, which recovery cuts off when the store is opened
/// for writing (Docs/FileFormat.md, "Recovery"), and what they look like.
///
/// After a crash a torn tail is normal: a commit cut short while it was written, never
/// acknowledged. A tail that holds a *whole* commit is not: a commit record complete from its
/// first magic to its last, its two length fields agreeing, was written to the end, and
/// recovery discards it only because its record, its body, or an earlier commit it depends on
/// fails a check (damage, or a disk that lost writes around a power cut). `strata verify`
/// warns about the first and reports the second as damage.
public struct DiscardedTail: Sendable, Hashable {
    /// A whole commit found in the tail.
    public struct WholeCommit: Sendable, Hashable {
        /// Where its commit record starts.
        public let offset: UInt64
        /// Where its commit record ends.
        public let end: UInt64
        /// Its sequence number, when its record passes its checksum.
        public let sequence: UInt64?
        /// Why recovery does not take it, in words.
        public let reason: String
    }

    /// Where the last valid commit ends: the tail starts here.
    public let offset: UInt64
    /// How many bytes recovery discards.
    public let length: UInt64
    /// The whole commits in the tail, first to last; empty for a torn tail.
    public let wholeCommits: [WholeCommit]
}

extension Store {
    /// The bytes past the last valid commit in the file as it is now, up to its last nonzero
    /// byte (zeros a writer wrote ahead of its commits are not a tail); nil when the file ends
    /// there, or when a writer has the store open (what lies past the commit it published is
    /// its own). Reads the whole tail.
    ///
    /// A store opened for writing has already cut its tail off, so this is nil for it (it is
    /// meant for a store opened read-only, as `strata verify` opens one).
    public func discardedTail() throws -> DiscardedTail? {
        guard options.readOnly else { return nil }
        // While a writer has the store open, what lies past the commit it published is its own
        // (a commit being written, zeros written ahead), not a tail recovery would discard.
        if let lockFile, (try? lockFile.writerIsLive()) == true { return nil }
        let snapshot = currentSnapshot()
        let io = snapshot.file.io
        do {
            // Zeros written ahead of the next commits are not a tail: it ends at the last nonzero byte.
            let size = try Recovery.endBeforeZeros(io: io, size: try io.size())
            guard size > snapshot.end else { return nil }
            let commits = try wholeCommits(io, from: snapshot.end, to: size, salt: snapshot.file.salt)
            return DiscardedTail(offset: snapshot.end, length: size - snapshot.end, wholeCommits: commits)
        } catch {
            throw StoreError.io(error, doing: "reading the bytes past the last commit", path: path)
        }
    }

    /// Every commit record in `start..<end` that is complete from its first magic to its last.
    private func wholeCommits(_ io: any FileHandleIO, from start: UInt64, to end: UInt64, salt: UInt64) throws -> [DiscardedTail.WholeCommit] {
        let magic = CommitRecord.endMagic
        let chunk = 1 << 20
        var found: [DiscardedTail.WholeCommit] = []
        var chunkStart = start
        while chunkStart < end {
            // Chunks overlap by the magic's length less one, so a magic across an edge is seen once.
            let readEnd = Swift.min(end, chunkStart + UInt64(chunk))
            let bytes = try io.read(count: Int(readEnd - chunkStart), at: chunkStart)
            var i = 0
            while i + magic.count <= bytes.count {
                if bytes[i] == magic[0] && Array(bytes[i..<(i + magic.count)]) == magic,
                   let commit = try wholeCommit(io, endingAt: chunkStart + UInt64(i + magic.count), tailStart: start, salt: salt) {
                    found.append(commit)
                }
                i += 1
            }
            guard readEnd < end else { break }
            chunkStart = readEnd - UInt64(magic.count - 1)
        }
        return found
    }

    /// The whole commit record ending at `end` (just past its end magic), if there is one that
    /// starts in the tail, with why recovery does not take it.
    private func wholeCommit(_ io: any FileHandleIO, endingAt end: UInt64, tailStart: UInt64, salt: UInt64) throws -> DiscardedTail.WholeCommit? {
        let trailer = UInt64(CommitRecord.trailerSize)
        guard end >= tailStart + trailer else { return nil }
        let lengthBytes = try io.read(count: 4, at: end - trailer)
        guard lengthBytes.count == 4 else { return nil }
        let length = UInt64(lengthBytes.loadLE32(0))
        guard length >= UInt64(CommitRecord.fixedSize + CommitRecord.trailerSize), length <= UInt64(CommitRecord.maximumSize),
              end - tailStart >= length else { return nil }
        let offset = end - length
        let record = try io.read(count: Int(length), at: offset)
        guard record.count == Int(length), Array(record[0..<8]) == CommitRecord.magic, UInt64(record.loadLE32(16)) == length else { return nil }
        guard let decoded = CommitRecord.decode(record, at: offset, salt: salt) else {
            return .init(offset: offset, end: end, sequence: nil, reason: "its commit record fails its checksum")
        }
        let reason = try Recovery.bodyIsIntact(decoded, io: io)
            ? "an earlier commit it builds on is damaged or missing"
            : "its body (bytes \(decoded.bodyStart)..<\(decoded.offset)) fails its checksum"
        return .init(offset: offset, end: end, sequence: decoded.sequence, reason: reason)
    }
}
