// A seeded random workload on an on-disk store, checked after every step against a plain
// in-memory model: puts, updates, deletes, unique conflicts, commits, rollbacks,
// compactions, reopens, metadata, index drops and long-lived readers.
//
// The seed is printed; replay one with `STRATA_SEED=1234 swift test --filter RandomizedModelTests`.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct RandomizedModelTests {
    static let seeds: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["STRATA_SEED"], let seed = UInt64(text) { return [seed] }
        return [1, 2, 3, 4, 5]
    }()

    @Test(arguments: seeds) func workloadAgreesWithModel(seed: UInt64) throws {
        print("seed", seed)
        var run = try Run(seed: seed)
        try run.go(steps: 500)
    }
}

extension Array {
    /// The first index whose element satisfies `belongs`, for an array partitioned by it.
    func partitioningIndex(where belongs: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if belongs(self[mid]) { high = mid } else { low = mid + 1 }
        }
        return low
    }
}

/// What the store should hold.
private struct Model {
    struct Row: Equatable {
        var record: [UInt8]
        var keys: [IndexKey]
    }
    /// Change rows with `set(_:_:in:)`, which keeps `entries` in step.
    private(set) var rows: [String: [RowID: Row]] = ["a": [:], "b": [:]]
    /// Every index's entries in key order, then row order.
    private(set) var entries: [IndexID: [(key: [UInt8], row: RowID)]] = [:]
    /// Every collection's row ids, in order (dictionary order changes from run to run; this does not).
    private(set) var rowIDs: [String: [RowID]] = ["a": [], "b": []]
    var nextRowID: [String: RowID] = ["a": 1, "b": 1]
    var metadata: [String: [UInt8]] = [:]
    var blobs: [BlobID: [UInt8]] = [:]
    /// Index name ("a.unique", "a.tags", "b.number") to id; "a.tags" is dropped and created again now and then.
    var indexes: [String: IndexID] = [:]

    /// The rows of `collection` holding `key` in a unique index.
    func holder(of key: IndexKey, in collection: String) -> RowID? {
        rows[collection]!.first { $0.value.keys.contains(key) }?.key
    }

    /// Puts (or with nil removes) a row.
    mutating func set(_ row: RowID, _ value: Row?, in collection: String) {
        if let old = rows[collection]![row] {
            for k in old.keys {
                let i = position(of: k.key, row, in: k.index)
                entries[k.index]!.remove(at: i)
            }
        }
        let at = rowIDs[collection]!.partitioningIndex { $0 >= row }
        let present = at < rowIDs[collection]!.count && rowIDs[collection]![at] == row
        if value == nil, present { rowIDs[collection]!.remove(at: at) }
        if value != nil, !present { rowIDs[collection]!.insert(row, at: at) }
        rows[collection]![row] = value
        for k in value?.keys ?? [] {
            entries[k.index, default: []].insert((k.key, row), at: position(of: k.key, row, in: k.index))
        }
    }

    /// Drops an index: its entries, and its keys from every row.
    mutating func drop(_ index: IndexID, in collection: String) {
        entries[index] = nil
        for (row, r) in rows[collection]! { rows[collection]![row]!.keys = r.keys.filter { $0.index != index } }
    }

    /// Where (key, row) is or would go in the index's sorted entries.
    func position(of key: [UInt8], _ row: RowID, in index: IndexID) -> Int {
        let list = entries[index] ?? []
        var low = 0, high = list.count
        while low < high {
            let mid = (low + high) / 2
            let e = list[mid]
            if e.key == key ? e.row < row : bytesPrecede(e.key, key) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

private struct Run {
    let seed: UInt64
    var g: SeededGenerator
    let dir: EngineTestDirectory
    let path: String
    let options: StoreOptions
    /// Optional only so that reopening can let go of the old store (and its lock) first.
    var openStore: Store?
    var store: Store { openStore! }
    var tx: WriteTransaction?
    /// The last commit, and the open transaction's view.
    var committed = Model()
    var pending = Model()
    var collections: [String: CollectionID] = [:]
    var indexes: [String: IndexID] { pending.indexes }
    /// Read transactions kept across later steps, with what they must go on seeing.
    var readers: [(tx: ReadTransaction, model: Model)] = []
    var step = 0
    var commits = 0
    var log: [String] = []

    init(seed: UInt64) throws {
        self.seed = seed
        g = SeededGenerator(seed: seed)
        dir = try EngineTestDirectory("random\(seed)")
        path = dir.path()
        // Small caches for some seeds, so that pages and records are read back from the file.
        options = StoreOptions(durability: seed % 3 == 0 ? .full : .deferred, cacheSize: seed % 2 == 0 ? 64 << 10 : 8 << 20)
        openStore = try Store(path: path, options: options)
        try openStore!.write { tx in
            let a = try tx.createCollection(named: "a")
            let b = try tx.createCollection(named: "b")
            collections = ["a": a, "b": b]
            pending.indexes["a.unique"] = try tx.createIndex(named: "unique", on: a, unique: true)
            pending.indexes["a.tags"] = try tx.createIndex(named: "tags", on: a, unique: false)
            pending.indexes["b.number"] = try tx.createIndex(named: "number", on: b, unique: false)
        }
        committed = pending
    }

    var context: Comment { "seed \(seed) step \(step): \(log.suffix(4).joined(separator: "; "))" }

    mutating func writer() throws -> WriteTransaction {
        if let tx { return tx }
        let t = try store.beginWrite()
        tx = t
        return t
    }

    // MARK: Random values

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &g) < percent }

    mutating func randomRecord() -> [UInt8] {
        let n = chance(5) ? Int.random(in: 1000...40_000, using: &g) : Int.random(in: 0...40, using: &g)
        let words = (0..<(n + 7) / 8).map { _ in g.next() }
        return words.withUnsafeBytes { Array($0.prefix(n)) }
    }

    mutating func randomKeys(for collection: String) -> [IndexKey] {
        var keys: [IndexKey] = []
        if collection == "a" {
            if chance(80) { keys.append(IndexKey(indexes["a.unique"]!, KeyEncoding.encode(Int.random(in: 0..<800, using: &g)))) }
            if let tags = indexes["a.tags"] {
                let words = ["", "a", "a\0", "ab", "abc", "b", "é", "zz"]
                let picked = Set((0..<Int.random(in: 0...2, using: &g)).map { _ in words.randomElement(using: &g)! })
                for w in picked.sorted() { keys.append(IndexKey(tags, KeyEncoding.encode(w, Int.random(in: 0...1, using: &g)))) }
            }
        } else {
            keys.append(IndexKey(indexes["b.number"]!, KeyEncoding.encode(Double(Int.random(in: -20...20, using: &g)) / 4)))
        }
        return keys.shuffled(using: &g)
    }

    mutating func randomCollection() -> String { chance(70) ? "a" : "b" }

    mutating func existingRow(in collection: String) -> RowID? {
        pending.rowIDs[collection]!.randomElement(using: &g)
    }

    // MARK: The workload

    mutating func go(steps: Int) throws {
        for s in 0..<steps {
            step = s
            try doOneStep()
            try check()
        }
        if tx != nil { try commit() }
        try checkCommitted()
        readers.removeAll()
        try reopen()
        try checkCommitted()
        var counts: [String: Int] = [:]
        for entry in log { counts[String(entry.prefix { $0 != " " }).replacingOccurrences(of: "(conflict)", with: ""), default: 0] += 1 }
        print("seed", seed, "done:", committed.rows.mapValues(\.count), "rows,", log.filter { $0.hasSuffix("(conflict)") }.count, "conflicts,",
              counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
    }

    mutating func doOneStep() throws {
        let roll = Int.random(in: 0..<1000, using: &g)
        switch roll {
        case 0..<300: try put(row: nil)
        case 300..<500:
            let c = randomCollection()
            if let row = existingRow(in: c) { try put(row: row, in: c) } else { try put(row: nil) }
        case 500..<600: try delete()
        case 600..<640: try setMetadata()
        case 640..<680: try blob()
        case 680..<800: try commit()
        case 800..<850: rollback()
        case 850..<880: try compact()
        case 880..<900: try reopen()
        case 900..<940:
            if readers.count < 3 {
                log.append("keep a reader")
                readers.append((try store.beginRead(), committed))
            }
        case 940..<980:
            if !readers.isEmpty {
                log.append("release a reader")
                readers.remove(at: Int.random(in: 0..<readers.count, using: &g))
            }
        case 980..<990:
            // A burst of new rows, so that the tree grows past a few pages.
            log.append("burst")
            for _ in 0..<40 { try put(row: nil, in: "a") }
        default: try dropAndRecreateTags()
        }
    }

    mutating func put(row: RowID?, in given: String? = nil) throws {
        let c = given ?? randomCollection()
        let tx = try writer()
        let collection = collections[c]!
        let target: RowID
        if let row { target = row } else {
            target = try tx.allocateRowID(in: collection)
            try #require(target == pending.nextRowID[c]!, context)
            pending.nextRowID[c] = target + 1
        }
        let record = randomRecord()
        let keys = randomKeys(for: c)
        // The model says whether a unique key is held by another row.
        var conflict: (IndexKey, RowID)?
        for k in keys where k.index == indexes["a.unique"] {
            if let holder = pending.holder(of: k, in: c), holder != target { conflict = (k, holder) }
        }
        log.append("put \(c)/\(target) \(record.count)B \(keys.count) keys\(conflict == nil ? "" : " (conflict)")")
        let previous = pending.rows[c]![target]?.keys ?? []
        if chance(5) {
            // Wrong previous keys (one too few, or one too many) are refused and change nothing.
            let wrong = previous.isEmpty || chance(50) ? previous + [IndexKey(indexes["b.number"]!, [0xEE])] : Array(previous.dropFirst())
            log.append("put \(c)/\(target) with wrong previous keys")
            do {
                try tx.put(record, row: target, in: collection, indexKeys: keys, previousKeys: wrong)
                Issue.record("a put with wrong previous keys succeeded: \(context)")
            } catch let error as StoreError where error.code == .indexKeyMismatch {}
        }
        do {
            try tx.put(record, row: target, in: collection, indexKeys: keys, previousKeys: previous)
            try #require(conflict == nil, "a put that takes another row's unique key succeeded: \(context)")
            pending.set(target, Model.Row(record: record, keys: keys), in: c)
        } catch let error as StoreError where error.code == .uniqueConstraintViolation {
            try #require(conflict != nil, "unexpected conflict \(error): \(context)")
            if let (key, holder) = conflict {
                try #require(error.conflict == UniqueConflict(index: key.index, key: key.key, existingRow: holder), context)
            }
        }
    }

    mutating func delete() throws {
        let c = randomCollection()
        let tx = try writer()
        let row = (chance(90) ? existingRow(in: c) : nil) ?? RowID.random(in: 1...1000, using: &g)
        log.append("delete \(c)/\(row)")
        let existed = try tx.delete(row, in: collections[c]!, indexKeys: pending.rows[c]![row]?.keys ?? [])
        try #require(existed == (pending.rows[c]![row] != nil), context)
        pending.set(row, nil, in: c)
    }

    mutating func setMetadata() throws {
        let tx = try writer()
        let name = ["schema", "x", "y"].randomElement(using: &g)!
        let value: [UInt8]? = chance(25) ? nil : randomRecord()
        log.append("metadata \(name) = \(value.map { "\($0.count)B" } ?? "nil")")
        try tx.setMetadata(name, value)
        pending.metadata[name] = value
    }

    mutating func blob() throws {
        let tx = try writer()
        if chance(40), let id = pending.blobs.keys.sorted().randomElement(using: &g) {
            log.append("delete \(id)")
            try tx.deleteBlob(id)
            pending.blobs[id] = nil
        } else {
            let bytes = (0..<Int.random(in: 0...3000, using: &g)).map { _ in UInt8.random(in: 0...255, using: &g) }
            let id = try tx.putBlob(bytes)
            log.append("put \(id) \(bytes.count)B")
            try #require(pending.blobs[id] == nil && committed.blobs[id] == nil, "blob id reused: \(context)")
            pending.blobs[id] = bytes
        }
    }

    mutating func commit() throws {
        log.append("commit")
        guard let tx else { return }
        try tx.commit()
        self.tx = nil
        committed = pending
        commits += 1
        try checkCommitted(full: commits % 4 == 0)
    }

    mutating func rollback() {
        log.append("rollback")
        guard let tx else { return }
        // Sometimes explicitly, sometimes by dropping the transaction.
        if chance(50) { tx.rollback() }
        self.tx = nil
        pending = committed
    }

    /// Compaction and reopening need the write transaction finished first: commit or roll back.
    mutating func finishTransaction() throws {
        if tx != nil { if chance(50) { try commit() } else { rollback() } }
    }

    mutating func compact() throws {
        try finishTransaction()
        log.append("compact")
        let report = try store.compact()
        try #require(report.records == committed.rows.values.reduce(0) { $0 + $1.count }, context)
        try checkCommitted()
    }

    mutating func reopen() throws {
        try finishTransaction()
        log.append("reopen")
        readers.removeAll()   // they keep the old store (and its lock) alive
        store.close()
        openStore = nil
        openStore = try Store(path: path, options: options)
        try checkCommitted()
    }

    /// Drops the non-unique "tags" index (its keys leave every row) and, as often, creates it again (empty).
    mutating func dropAndRecreateTags() throws {
        let tx = try writer()
        if let tags = indexes["a.tags"] {
            log.append("drop tags")
            try tx.dropIndex(tags)
            pending.indexes["a.tags"] = nil
            pending.drop(tags, in: "a")
        } else {
            log.append("create tags")
            let tags = try tx.createIndex(named: "tags", on: collections["a"]!, unique: false)
            try #require(!pending.rows["a"]!.values.contains { $0.keys.contains { $0.index == tags } }, "index id reused: \(context)")
            pending.indexes["a.tags"] = tags
        }
    }

    // MARK: Checks

    /// The open transaction (if any) against the pending model, every reader against its model.
    mutating func check() throws {
        if let tx { try compare(tx, with: pending, full: step % 10 == 0) }
        for (reader, model) in readers { try compare(reader, with: model, full: step % 25 == 0) }
    }

    /// A new reader against the last commit, and `verify()`.
    mutating func checkCommitted(full: Bool = true) throws {
        try store.read { tx in try compare(tx, with: committed, full: full) }
        let report = try store.verify()
        try #require(report.isClean, "\(report): \(context)")
    }

    /// Records, counts, index entries, lookups, random range scans, metadata and blobs.
    /// A partial check reads a sample of rows rather than every one.
    mutating func compare(_ tx: ReadTransaction, with model: Model, full: Bool) throws {
        // A partial check scans a range of one index; a full one of every index.
        let scanned = model.indexes.values.sorted().randomElement(using: &g)
        for (name, collection) in collections.sorted(by: { $0.key < $1.key }) {
            let rows = model.rows[name]!
            try #require(try tx.count(in: collection) == rows.count, context)
            try #require(try tx.nextRowID(in: collection) == model.nextRowID[name]!, context)
            if full {
                var found: [RowID: [UInt8]] = [:]
                var cursor = try tx.rows(in: collection)
                while let (row, record) = try cursor.next() { found[row] = record }
                try #require(found == rows.mapValues(\.record), "rows of \(name): \(context)")
            } else {
                let ids = model.rowIDs[name]!
                for _ in 0..<Swift.min(4, ids.count) {
                    let row = ids.randomElement(using: &g)!
                    try #require(try tx.record(row, in: collection) == rows[row]!.record, "row \(name)/\(row): \(context)")
                }
                try #require(try tx.record(RowID.random(in: 5000...6000, using: &g), in: collection) == nil)
            }
            try #require(Set(tx.indexes(of: collection).map { "\(name).\($0.name)" }) == Set(model.indexes.keys.filter { $0.hasPrefix(name + ".") }), context)
            for index in tx.indexes(of: collection) {
                try #require(model.indexes["\(name).\(index.name)"] == index.id, context)
                let expected = model.entries[index.id] ?? []
                if full {
                    var entries: [(key: [UInt8], row: RowID)] = []
                    var cursor = try tx.entries(in: index.id)
                    while let e = try cursor.next() { entries.append(e) }
                    try #require(entries.map(\.key) == expected.map(\.key) && entries.map(\.row) == expected.map(\.row),
                            "index \(name).\(index.name): \(entries.count) entries, model \(expected.count): \(context)")
                }
                // Lookups of a few present keys and one absent key.
                for _ in 0..<Swift.min(3, expected.count) {
                    let e = expected.randomElement(using: &g)!
                    let first = expected.first { $0.key == e.key }!.row
                    try #require(try tx.lookup(e.key, in: index.id) == first, "lookup in \(name).\(index.name): \(context)")
                }
                try #require(try tx.lookup([0xEE, 1, 2], in: index.id) == nil)
                guard full || index.id == scanned else { continue }
                // A random range, both ways.
                let bound = { (g: inout SeededGenerator) -> [UInt8]? in
                    Bool.random(using: &g) ? expected.randomElement(using: &g)?.key : nil
                }
                let range = KeyRange(lower: bound(&g), lowerInclusive: Bool.random(using: &g), upper: bound(&g), upperInclusive: Bool.random(using: &g))
                let inRange = expected.filter { e in range.lower.map { l in bytesPrecede(l, e.key) || (l == e.key && range.lowerInclusive) } ?? true }
                    .filter { e in range.upper.map { u in bytesPrecede(e.key, u) || (u == e.key && range.upperInclusive) } ?? true }
                var forward: [RowID] = []
                var cursor = try tx.entries(in: index.id, range: range)
                while let e = try cursor.next() { forward.append(e.row) }
                try #require(forward == inRange.map(\.row), "range in \(name).\(index.name): \(context)")
                var backward: [(key: [UInt8], row: RowID)] = []
                var reverse = try tx.entries(in: index.id, range: range, reverse: true)
                while let e = try reverse.next() { backward.append(e) }
                // Keys descending; equal keys (non-unique index) still in row order.
                var expectedBackward: [(key: [UInt8], row: RowID)] = []
                var end = inRange.endIndex
                while end > inRange.startIndex {
                    var start = end - 1
                    while start > inRange.startIndex && inRange[start - 1].key == inRange[end - 1].key { start -= 1 }
                    expectedBackward += inRange[start..<end]
                    end = start
                }
                try #require(backward.map(\.key) == expectedBackward.map(\.key) && backward.map(\.row) == expectedBackward.map(\.row),
                        "reverse range in \(name).\(index.name): \(context)")
                try #require(try tx.countEntries(in: index.id, range: range) == inRange.count, context)
            }
        }
        for name in ["schema", "x", "y"] {
            try #require(try tx.metadata(name) == model.metadata[name], "metadata \(name): \(context)")
        }
        try #require(Set(try tx.blobIDs()) == Set(model.blobs.keys), "blob ids: \(context)")
        if full || Bool.random(using: &g) {
            for (id, bytes) in model.blobs.sorted(by: { $0.key < $1.key }).prefix(full ? .max : 2) {
                try #require(try tx.blob(id) == bytes, "\(id): \(context)")
            }
        }
    }
}
