/// What `Store.verify()` found.
public struct VerifyReport: Sendable, CustomStringConvertible {
    /// One damaged or inconsistent place.
    public struct Problem: Sendable, CustomStringConvertible {
        /// The byte offset in the store file, when the problem has one.
        public let offset: UInt64?
        public let message: String
        public var description: String { offset.map { "at byte \($0): \(message)" } ?? message }
    }

    public var problems: [Problem] = []
    public var commitsChecked = 0
    public var pagesChecked = 0
    public var recordsChecked = 0
    public var indexEntriesChecked = 0
    public var blobsChecked = 0

    /// True when nothing is wrong.
    public var isClean: Bool { problems.isEmpty }

    public var description: String {
        var lines = ["\(isClean ? "clean" : "\(problems.count) problem(s)"): \(commitsChecked) commits, \(pagesChecked) pages, \(recordsChecked) records, \(indexEntriesChecked) index entries, \(blobsChecked) blobs checked"]
        lines += problems.prefix(50).map { "  - \($0)" }
        if problems.count > 50 { lines.append("  ... and \(problems.count - 50) more") }
        return lines.joined(separator: "\n")
    }
}

/// The index keys a record should have, computed by the layer that knows what records mean
/// (the object layer builds one from the schema stored in the file); nil when it cannot tell.
/// `Store.verify(progress:indexKeys:)` checks every row's index entries against it.
public typealias RecordIndexKeys = (_ collection: CollectionID, _ row: RowID, _ record: UnsafeRawBufferPointer) throws -> [IndexKey]?

extension Store {
    /// Checks the whole store: the chain of commit records, every page (checksums, key order,
    /// bounds), every record, that the indexes agree with the records both ways, the counts in
    /// the catalog, and every blob file. Reads everything; meant for tests and `strata verify`.
    ///
    /// `indexKeys`, when given, computes the keys each record should have: verify then checks
    /// that the row's index entries are exactly those (an error it throws is reported as a
    /// problem of that row).
    ///
    /// Damage is reported in the result (with the byte offset), not thrown; throws only when
    /// the store cannot be read at all.
    public func verify(progress: ((Double) -> Void)? = nil, indexKeys: RecordIndexKeys? = nil) throws -> VerifyReport {
        let tx = try beginRead()
        var verifier = Verifier(tx: tx, progress: progress, keysOfRecord: indexKeys)
        try verifier.run()
        return verifier.report
    }
}

/// What the caller's `RecordIndexKeys` said of one record.
private enum ComputedKeys {
    case notAsked
    case keys([IndexKey])
    case failed(String)
}

private struct Verifier {
    let tx: ReadTransaction
    let progress: ((Double) -> Void)?
    var report = VerifyReport()
    var rowCounts: [UInt32: UInt64] = [:]
    var expectedIndexEntries: [UInt32: Int] = [:]
    var actualIndexEntries: [UInt32: Int] = [:]
    var previousKey: [UInt8]? = nil
    /// Index entries whose rows must exist: checked after the walk.
    var rowsToFind: [(collection: UInt32, row: RowID, key: [UInt8])] = []
    var uniqueEntries: [[UInt8]: RowID] = [:]
    let keysOfRecord: RecordIndexKeys?

    init(tx: ReadTransaction, progress: ((Double) -> Void)?, keysOfRecord: RecordIndexKeys?) {
        self.tx = tx
        self.progress = progress
        self.keysOfRecord = keysOfRecord
    }

    var path: String { tx.store.path }

    mutating func problem(_ message: String, at offset: UInt64? = nil) {
        report.problems.append(.init(offset: offset, message: message))
    }

    mutating func run() throws {
        checkCommitChain()
        if let root = tx.base.root {
            try walk(.page(root), low: nil, high: nil, depth: 0)
        }
        checkCounts()
        try checkIndexTargets()
        progress?(1)
    }

    mutating func checkCommitChain() {
        var offset = tx.base.commitOffset
        var expectedSequence = tx.base.sequence
        var seen = 0
        while offset != 0 {
            guard let record = try? Recovery.candidateAt(offset: offset, io: tx.file.io, salt: tx.file.salt) else {
                problem("the commit record of commit \(expectedSequence) is damaged", at: offset)
                return
            }
            if record.sequence != expectedSequence {
                problem("commit record sequence \(record.sequence) where \(expectedSequence) was expected", at: offset)
            }
            // The body checksum covers every byte between commit records, superseded pages
            // and records included, which the tree walk never reads.
            if !bodyMatches(record) {
                problem("the body of commit \(record.sequence) (bytes \(record.bodyStart)..<\(record.offset)) fails its checksum", at: record.bodyStart)
            }
            seen += 1
            offset = record.previousOffset
            if expectedSequence == 0 { break }
            expectedSequence -= 1
        }
        report.commitsChecked = seen
    }

    /// True when a commit's body matches its checksum (read a piece at a time).
    func bodyMatches(_ record: CommitRecord) -> Bool {
        guard record.bodyStart >= UInt64(FileHeader.size), record.bodyStart <= record.offset else { return false }
        var crc: UInt32 = 0
        var position = record.bodyStart
        while position < record.offset {
            let count = Int(Swift.min(record.offset - position, 1 << 20))
            guard let bytes = try? tx.file.io.read(count: count, at: position), bytes.count == count else { return false }
            crc = bytes.withUnsafeBytes { CRC32C.update(crc, $0) }
            position += UInt64(count)
        }
        return crc == record.bodyChecksum
    }

    mutating func walk(_ child: Child, low: [UInt8]?, high: [UInt8]?, depth: Int) throws {
        guard depth < 64 else { problem("the tree is deeper than 64 levels (a page cycle?)"); return }
        let node: Node
        do { node = try tx.reader.node(child) } catch let error as StoreError where error.code == .corrupt {
            problem(error.message, at: error.offset)
            return
        }
        report.pagesChecked += 1
        let pageOffset = node.page?.offset
        if node.count == 0 { problem("an empty page", at: pageOffset) }
        for i in 0..<node.count {
            let key = node.key(i)
            if !node.isLeaf && i == 0 { continue }
            if let low, compareBytes(key, low) < 0 { problem("a key below its page's range", at: pageOffset) }
            if let high, compareBytes(key, high) >= 0 { problem("a key above its page's range", at: pageOffset) }
        }
        if node.isLeaf {
            for i in 0..<node.count {
                let key = node.key(i)
                if let previousKey, compareBytes(previousKey, key) >= 0 {
                    problem("keys out of order", at: pageOffset)
                }
                previousKey = key
                try checkEntry(key: key, value: node.value(i), page: pageOffset)
            }
            return
        }
        for i in 0..<node.count {
            let childLow = i == 0 ? low : node.key(i)
            let childHigh = i + 1 < node.count ? node.key(i + 1) : high
            try walk(node.children[i], low: childLow, high: childHigh, depth: depth + 1)
            if depth == 0 { progress?(Double(i + 1) / Double(node.count) * 0.95) }
        }
    }

    mutating func checkEntry(key: [UInt8], value: [UInt8], page: UInt64?) throws {
        switch key.first {
        case TreeKey.rowTag:
            guard key.count == 13, let location = value.withUnsafeBytes(RecordLocation.decode) else {
                problem("a malformed row entry", at: page); return
            }
            let collection = UInt32(key[1]) << 24 | UInt32(key[2]) << 16 | UInt32(key[3]) << 8 | UInt32(key[4])
            let row = key.loadBE64(5)
            rowCounts[collection, default: 0] += 1
            report.recordsChecked += 1
            do {
                let checked = try tx.file.withBytes(at: location.offset, count: Int(location.length), limit: tx.reader.limit) { raw -> ([IndexKey], ComputedKeys)? in
                    guard let payload = RecordFrame.check(raw) else { return nil }
                    guard let keysOfRecord else { return (RecordFrame.indexKeys(raw), .notAsked) }
                    do {
                        let keys = try keysOfRecord(CollectionID(rawValue: collection), row, UnsafeRawBufferPointer(rebasing: raw[payload...]))
                        return (RecordFrame.indexKeys(raw), keys.map { .keys($0) } ?? .notAsked)
                    } catch {
                        return (RecordFrame.indexKeys(raw), .failed("\(error)"))
                    }
                }
                guard let (keys, computed) = checked else { problem("row \(row) of collection \(collection): the record fails its checksum", at: location.offset); return }
                switch computed {
                case .notAsked: break
                case .keys(let wanted):
                    let own = keys.filter { tx.catalog.index($0.index.rawValue)?.collection == collection }
                    let wanted = WriteTransaction.deduplicated(wanted)
                    if wanted.count != own.count || !wanted.allSatisfy(own.contains) {
                        problem("row \(row) of collection \(collection): its index entries are not the keys its record has (\(own.count) stored, \(wanted.count) computed)", at: location.offset)
                    }
                case .failed(let why):
                    problem("row \(row) of collection \(collection): the index keys of its record cannot be computed: \(why)", at: location.offset)
                }
                for k in keys {
                    guard let info = tx.catalog.index(k.index.rawValue) else { continue }
                    expectedIndexEntries[info.id, default: 0] += 1
                    let present: Bool
                    if info.unique {
                        present = try tx.lookup(k.key, in: k.index) == row
                    } else {
                        let entry = TreeKey.indexEntry(k.index.rawValue, k.key, row: row)
                        present = try entry.withUnsafeBytes { try tx.reader.withValue(root: tx.root, key: $0) { _ in true } } ?? false
                    }
                    if !present { problem("row \(row) of collection \(collection) is missing from index \"\(info.name)\"", at: location.offset) }
                }
            } catch let error as StoreError where error.code == .corrupt {
                problem("row \(row): \(error.message)", at: location.offset)
            }
        case TreeKey.indexTag:
            guard key.count >= 5 else { problem("a malformed index entry", at: page); return }
            let id = UInt32(key[1]) << 24 | UInt32(key[2]) << 16 | UInt32(key[3]) << 8 | UInt32(key[4])
            guard let info = tx.catalog.index(id) else { problem("an entry of index \(id), which the catalog does not list", at: page); return }
            report.indexEntriesChecked += 1
            actualIndexEntries[id, default: 0] += 1
            let row: RowID
            if info.unique {
                guard value.count == 8 else { problem("a malformed unique-index entry", at: page); return }
                row = value.loadLE64(0)
            } else {
                guard key.count >= 13 else { problem("a malformed index entry", at: page); return }
                row = key.loadBE64(key.count - 8)
            }
            rowsToFind.append((info.collection, row, key))
        case TreeKey.blobTag:
            guard key.count == 9, value.count == 12 else { problem("a malformed blob entry", at: page); return }
            report.blobsChecked += 1
            let id = key.loadBE64(1)
            do { _ = try tx.store.blobs.read(id, length: value.loadLE64(0), checksum: value.loadLE32(8)) }
            catch let error as StoreError { problem(error.message) }
        case TreeKey.metadataTag:
            guard let location = value.withUnsafeBytes(RecordLocation.decode) else { problem("a malformed metadata entry", at: page); return }
            do { _ = try tx.withFrame(location) { _ in () } }
            catch let error as StoreError { problem(error.message, at: location.offset) }
        default:
            problem("an entry of unknown kind \(key.first ?? 0)", at: page)
        }
    }

    mutating func checkCounts() {
        for c in tx.catalog.collections where rowCounts[c.id, default: 0] != c.count {
            problem("collection \"\(c.name)\" has \(rowCounts[c.id, default: 0]) records but the catalog says \(c.count)")
        }
        for i in tx.catalog.indexes where expectedIndexEntries[i.id, default: 0] != actualIndexEntries[i.id, default: 0] {
            problem("index \"\(i.name)\" has \(actualIndexEntries[i.id, default: 0]) entries but its records name \(expectedIndexEntries[i.id, default: 0])")
        }
    }

    mutating func checkIndexTargets() throws {
        for (collection, row, _) in rowsToFind {
            if try !tx.contains(row, in: CollectionID(rawValue: collection)) {
                problem("an index entry points to row \(row) of collection \(collection), which does not exist")
            }
        }
    }
}

extension Recovery {
    /// The commit record that starts at `offset` (for walking the chain backwards).
    static func candidateAt(offset: UInt64, io: any FileHandleIO, salt: UInt64) throws -> CommitRecord? {
        let head = try io.read(count: 16, at: offset)
        guard head.count == 16, Array(head[0..<8]) == CommitRecord.magic else { return nil }
        let length = UInt64(head.loadLE32(12))
        guard length <= UInt64(CommitRecord.maximumSize) else { return nil }
        let bytes = try io.read(count: Int(length), at: offset)
        return CommitRecord.decode(bytes, at: offset, salt: salt)
    }
}
