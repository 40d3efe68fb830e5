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
    /// Checks the whole store: the chain of commit records and every commit's body checksum,
    /// every page of every tree (checksum, structure, key order, bounds), every value, every
    /// index entry's row, the counts in the catalog, and every blob file. Reads everything;
    /// meant for tests and `strata verify`.
    ///
    /// The engine does not keep a row's index keys; `indexKeys`, when given, computes the keys
    /// each record should have: verify then checks that the row's stored key digest matches
    /// them and that every one of them has its index entry naming the row (and so, with the
    /// counts, that the indexes and the records agree both ways). An error it throws is
    /// reported as a problem of that row.
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

private struct Verifier {
    let tx: ReadTransaction
    let progress: ((Double) -> Void)?
    let keysOfRecord: RecordIndexKeys?
    var report = VerifyReport()
    /// Per index: entries the rows' computed keys name (when `keysOfRecord` answered for every row).
    var expectedEntries: [UInt32: UInt64] = [:]
    var allRowsAnswered = true
    var previousKey: [UInt8]?
    var bytesSeen: UInt64 = 0
    let bytesTotal: UInt64

    init(tx: ReadTransaction, progress: ((Double) -> Void)?, keysOfRecord: RecordIndexKeys?) {
        self.tx = tx
        self.progress = progress
        self.keysOfRecord = keysOfRecord
        bytesTotal = Swift.max(tx.catalog.liveBytes, 1)
    }

    var path: String { tx.path }

    mutating func problem(_ message: String, at offset: UInt64? = nil) {
        report.problems.append(.init(offset: offset, message: message))
    }

    mutating func run() throws {
        checkCommitChain()
        try walkTree(.system) { v, key, cell in try v.checkSystemEntry(key, cell) }
        for c in tx.catalog.collections {
            var rows: UInt64 = 0
            try walkTree(.rows(c.id)) { v, key, cell in
                rows += 1
                try v.checkRow(collection: c.id, key: key, cell: cell)
            }
            if rows != c.count { problem("collection \"\(c.name)\" has \(rows) records but the catalog says \(c.count)") }
        }
        for i in tx.catalog.indexes {
            var entries: UInt64 = 0
            try walkTree(.index(i.id)) { v, key, cell in
                entries += 1
                try v.checkIndexEntry(i, key: key, cell: cell)
            }
            if entries != i.entries { problem("index \"\(i.name)\" has \(entries) entries but the catalog says \(i.entries)") }
            if keysOfRecord != nil, allRowsAnswered, expectedEntries[i.id, default: 0] != entries {
                problem("index \"\(i.name)\" has \(entries) entries but its records' keys name \(expectedEntries[i.id, default: 0])")
            }
        }
        progress?(1)
    }

    // MARK: Commits

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
            // and values included, which the tree walk never reads.
            if (try? Recovery.bodyIsIntact(record, io: tx.file.io, limit: .max)) != true {
                problem("the body of commit \(record.sequence) (bytes \(record.bodyStart)..<\(record.offset)) fails its checksum", at: record.bodyStart)
            }
            seen += 1
            offset = record.previousOffset
            if expectedSequence == 0 { break }
            expectedSequence -= 1
        }
        report.commitsChecked = seen
    }

    // MARK: Trees

    typealias Visit = (inout Verifier, [UInt8], (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8)) throws -> Void

    mutating func walkTree(_ tree: TreeID, _ visit: Visit) throws {
        previousKey = nil
        guard let root = tx.root(tree), case .page(let offset) = root else { return }
        try walk(offset, low: nil, high: nil, depth: 0, visit)
    }

    mutating func walk(_ offset: UInt64, low: [UInt8]?, high: [UInt8]?, depth: Int, _ visit: Visit) throws {
        guard depth < 64 else { problem("a tree is deeper than 64 levels"); return }
        let view: PageView
        do { view = try tx.pages.page(at: offset) } catch let error as StoreError where error.code == .corrupt {
            problem(error.message, at: error.offset)
            return
        }
        // Checked again whatever this process remembers (it may have written the page itself).
        guard PageLayout.check(view.base, length: view.length, offset: offset) else {
            problem("the page at byte \(offset) fails its checksum or is malformed", at: offset)
            return
        }
        report.pagesChecked += 1
        bytesSeen += UInt64(view.length)
        if report.pagesChecked % 256 == 0 { progress?(Swift.min(0.99, Double(bytesSeen) / Double(bytesTotal))) }
        var keys: [[UInt8]] = []
        keys.reserveCapacity(view.count)
        for i in 0..<view.count { keys.append(view.key(i)) }
        for (i, key) in keys.enumerated() where view.isLeaf || i > 0 {
            if let low, compareBytes(key, low) < 0 { problem("a key below its page's range", at: offset) }
            if let high, compareBytes(key, high) >= 0 { problem("a key above its page's range", at: offset) }
        }
        if view.isLeaf {
            for (i, key) in keys.enumerated() {
                if let previousKey, compareBytes(previousKey, key) >= 0 { problem("keys out of order", at: offset) }
                previousKey = key
                try visit(&self, key, view.leafCell(i))
            }
            return
        }
        for i in 0..<view.count {
            if i > 1, compareBytes(keys[i - 1], keys[i]) >= 0 { problem("keys out of order", at: offset) }
            try walk(view.child(i), low: i == 0 ? low : keys[i], high: i + 1 < view.count ? keys[i + 1] : high, depth: depth + 1, visit)
        }
    }

    // MARK: Entries

    mutating func checkRow(collection: UInt32, key: [UInt8], cell: (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8)) throws {
        guard key.count == 8 else { problem("a row key of \(key.count) bytes in collection \(collection)"); return }
        let row = key.loadBE64(0)
        report.recordsChecked += 1
        guard let value = RowValue.decode(cell.value, flags: cell.flags) else {
            problem("row \(row) of collection \(collection): a malformed value"); return
        }
        do {
            let computed: ComputedKeys = try tx.withRecordValue(cell.value, flags: cell.flags, row: row) { record in
                guard let keysOfRecord else { return .notAsked }
                do { return try keysOfRecord(CollectionID(rawValue: collection), row, record).map { .keys($0) } ?? .notAsked }
                catch { return .failed("\(error)") }
            }
            switch computed {
            case .notAsked:
                if keysOfRecord != nil { allRowsAnswered = false }
            case .keys(let wanted):
                let keys = WriteTransaction.deduplicated(wanted)
                if KeysDigest.of(keys) != (value.digest ?? 0) {
                    problem("row \(row) of collection \(collection): its stored key digest does not match the keys its record has (\(keys.count))")
                }
                for k in keys { try checkEntryExists(k, row: row, collection: collection) }
            case .failed(let why):
                allRowsAnswered = false
                problem("row \(row) of collection \(collection): the index keys of its record cannot be computed: \(why)")
            }
        } catch let error as StoreError where error.code == .corrupt {
            problem("row \(row) of collection \(collection): \(error.message)", at: error.offset)
        }
    }

    mutating func checkEntryExists(_ k: IndexKey, row: RowID, collection: UInt32) throws {
        guard let info = tx.catalog.index(k.index.rawValue), info.collection == collection else {
            problem("row \(row) of collection \(collection) has a key for \(k.index), which is not one of its indexes")
            return
        }
        expectedEntries[info.id, default: 0] += 1
        let present: Bool
        if info.unique {
            present = try tx.lookup(k.key, in: k.index) == row
        } else {
            present = try TreeKey.entry(k.key, row: row).withUnsafeBytes { try tx.find($0, in: .index(info.id)) } != nil
        }
        if !present { problem("row \(row) of collection \(collection) is missing from index \"\(info.name)\"") }
    }

    mutating func checkIndexEntry(_ info: IndexInfoRecord, key: [UInt8], cell: (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8)) throws {
        report.indexEntriesChecked += 1
        let row: RowID
        if info.unique {
            guard let (r, size) = Varint.decode(cell.value), size == cell.value.count else { problem("a malformed entry of index \"\(info.name)\""); return }
            row = r
        } else {
            guard cell.value.isEmpty, let split = key.withUnsafeBytes({ TreeKey.splitEntry($0) }) else { problem("a malformed entry of index \"\(info.name)\""); return }
            row = split.row
        }
        do {
            if try !tx.contains(row, in: CollectionID(rawValue: info.collection)) {
                problem("an entry of index \"\(info.name)\" points to row \(row) of collection \(info.collection), which does not exist")
            }
        } catch let error as StoreError where error.code == .corrupt {
            problem(error.message, at: error.offset)
        }
    }

    mutating func checkSystemEntry(_ key: [UInt8], _ cell: (suffix: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt8)) throws {
        switch key.first {
        case TreeKey.blobTag:
            guard key.count == 9, cell.value.count == 16 else { problem("a malformed blob entry"); return }
            report.blobsChecked += 1
            do { _ = try tx.blobs.read(key.loadBE64(1), length: cell.value.loadLE64(0), checksum: cell.value.loadLE64(8)) }
            catch let error as StoreError { problem(error.message) }
        case TreeKey.metadataTag:
            guard cell.flags & ValueFlags.inFrame != 0 else { return }
            guard let location = ValueLocation.decode(cell.value) else { problem("a malformed metadata entry"); return }
            do { _ = try tx.pages.withValue(location) { _ in () } }
            catch let error as StoreError { problem(error.message, at: location.offset) }
        default:
            problem("an entry of unknown kind \(key.first ?? 0) in the system tree")
        }
    }
}

/// What the caller's `RecordIndexKeys` said of one record.
private enum ComputedKeys {
    case notAsked
    case keys([IndexKey])
    case failed(String)
}
