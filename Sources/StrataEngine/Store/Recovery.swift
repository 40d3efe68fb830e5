/// Finding the last complete commit when a store is opened (Docs/FileFormat.md, "Recovery").
enum Recovery {
    /// How far back from the end one read looks for a commit record's trailer.
    static let scanChunk = 64 * 1024

    /// The last commit record that passes every check, or nil if there is none.
    ///
    /// The fast path reads the 12-byte trailer at the end of the file and the record it
    /// announces. If that fails (a torn or damaged tail) the file is scanned backwards for the
    /// end magic, and each candidate is checked in full.
    static func lastCommit(io: any FileHandleIO, size: UInt64, salt: UInt64, path: String) throws -> CommitRecord? {
        guard size > UInt64(FileHeader.size) else { return nil }
        if let record = try candidate(endingAt: size, io: io, salt: salt) { return record }
        // Zeros the writer wrote ahead of its commits (a writer that did not close): the last
        // commit record ends where they begin (its trailer ends with the nonzero end magic).
        let dataEnd = try endBeforeZeros(io: io, size: size)
        if dataEnd < size, let record = try candidate(endingAt: dataEnd, io: io, salt: salt) { return record }
        // Scan backwards, a chunk at a time, for the end magic of an earlier commit record.
        let magic = CommitRecord.endMagic
        var chunkEnd = dataEnd
        let floor = UInt64(FileHeader.size)
        while chunkEnd > floor {
            let chunkStart = chunkEnd > floor + UInt64(scanChunk) ? chunkEnd - UInt64(scanChunk) : floor
            // Overlap by the magic's length so a magic across chunk edges is seen.
            let readEnd = Swift.min(size, chunkEnd + UInt64(magic.count - 1))
            let bytes = try io.read(count: Int(readEnd - chunkStart), at: chunkStart)
            var i = bytes.count - magic.count
            while i >= 0 {
                if bytes[i] == magic[0] && bytes[i + 1] == magic[1] && Array(bytes[i..<(i + magic.count)]) == magic {
                    let end = chunkStart + UInt64(i + magic.count)
                    if let record = try candidate(endingAt: end, io: io, salt: salt) {
                        return record
                    }
                }
                i -= 1
            }
            chunkEnd = chunkStart
        }
        return nil
    }

    /// The offset after the last nonzero byte of the file (never below the header).
    static func endBeforeZeros(io: any FileHandleIO, size: UInt64) throws -> UInt64 {
        let floor = UInt64(FileHeader.size)
        var end = size
        while end > floor {
            let start = end > floor + UInt64(scanChunk) ? end - UInt64(scanChunk) : floor
            let bytes = try io.read(count: Int(end - start), at: start)
            guard bytes.count == Int(end - start) else { return end }
            if let last = bytes.lastIndex(where: { $0 != 0 }) { return start + UInt64(last + 1) }
            end = start
        }
        return floor
    }

    /// The commit record that ends exactly at `end`, if it passes every check.
    static func candidate(endingAt end: UInt64, io: any FileHandleIO, salt: UInt64) throws -> CommitRecord? {
        let minimum = UInt64(CommitRecord.fixedSize + Catalog.fixedSize + CommitRecord.trailerSize)
        guard end >= UInt64(FileHeader.size) + minimum else { return nil }
        let trailer = try io.read(count: CommitRecord.trailerSize, at: end - UInt64(CommitRecord.trailerSize))
        guard trailer.count == CommitRecord.trailerSize, Array(trailer[4...]) == CommitRecord.endMagic else { return nil }
        let length = UInt64(trailer.loadLE32(0))
        guard length >= minimum, length <= UInt64(CommitRecord.maximumSize), end - UInt64(FileHeader.size) >= length else { return nil }
        let offset = end - length
        let bytes = try io.read(count: Int(length), at: offset)
        guard let record = CommitRecord.decode(bytes, at: offset, salt: salt) else { return nil }
        // A body that was not synced before its commit record must be checked: with one sync
        // per commit, the disk may have kept the record and lost part of the body.
        if record.flags & CommitRecord.flagBodySynced == 0 {
            guard try bodyIsIntact(record, io: io) else { return nil }
        }
        // Without a sync between commits (deferred durability) the disk may have kept this
        // record and lost bytes of earlier commits: check them back to one that was synced.
        var later = record
        while later.flags & CommitRecord.flagPreviousNotSynced != 0 {
            guard let earlier = try candidateAt(offset: later.previousOffset, io: io, salt: salt),
                  earlier.end == later.bodyStart else { return nil }
            if earlier.flags & CommitRecord.flagBodySynced != 0 { break }
            guard try bodyIsIntact(earlier, io: io) else { return nil }
            later = earlier
        }
        return record
    }

    /// The largest body checked without a sync before its record (bodies over 256 KiB are
    /// synced first); recovery reads no more than this.
    static let largestUncheckedBody: UInt64 = 16 * 1024 * 1024

    /// True when the bytes between a commit's previous commit and its record match its body checksum.
    static func bodyIsIntact(_ record: CommitRecord, io: any FileHandleIO, limit: UInt64 = largestUncheckedBody) throws -> Bool {
        guard record.bodyStart >= UInt64(FileHeader.size), record.bodyStart <= record.offset,
              record.offset - record.bodyStart <= limit else { return false }
        var sum = StreamingChecksum()
        var position = record.bodyStart
        while position < record.offset {
            let count = Int(Swift.min(record.offset - position, 1 << 20))
            let bytes = try io.read(count: count, at: position)
            guard bytes.count == count else { return false }
            bytes.withUnsafeBytes { sum.update($0) }
            position += UInt64(count)
        }
        return sum.value == record.bodyChecksum
    }

    /// The commit record that starts at `offset` (for walking the chain backwards, and for a
    /// commit another process published).
    static func candidateAt(offset: UInt64, io: any FileHandleIO, salt: UInt64) throws -> CommitRecord? {
        guard offset >= UInt64(FileHeader.size) else { return nil }
        let head = try io.read(count: 20, at: offset)
        guard head.count == 20, Array(head[0..<8]) == CommitRecord.magic else { return nil }
        let length = UInt64(head.loadLE32(16))
        guard length <= UInt64(CommitRecord.maximumSize) else { return nil }
        let bytes = try io.read(count: Int(length), at: offset)
        return CommitRecord.decode(bytes, at: offset, salt: salt)
    }
}
