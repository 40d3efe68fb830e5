// Crash loops (SQLite's testing page): cut the file at every offset of a commit, append
// garbage tails, and cut the power at every write and sync of a commit (with torn writes),
// then reopen and check that the store holds exactly the commits that completed.
//
// The helpers at the top (a small deterministic workload with a model of what each commit
// leaves) are shared with FaultInjectionTests and CorruptionTests.

import Testing
import StrataTestSupport
@testable import StrataEngine

// MARK: - Shared helpers for the crash, fault and corruption suites

/// Everything the workload's store holds, in a form that compares with `==`.
struct CrashState: Equatable, CustomStringConvertible {
    struct GroupEntry: Hashable { var key: [UInt8]; var row: RowID }

    var sequence: UInt64 = 0
    var rows: [RowID: [UInt8]] = [:]
    var count = 0
    /// The unique index "name": key → row.
    var names: [[UInt8]: RowID] = [:]
    /// The non-unique index "group".
    var groups: Set<GroupEntry> = []
    /// The metadata value "version".
    var version: [UInt8]? = nil
    var blobs: [UInt64: [UInt8]] = [:]
    /// The collection "archive", written by the first commit only.
    var archive: [RowID: [UInt8]] = [:]

    var description: String {
        "commit \(sequence): \(rows.count) rows (count \(count)), \(archive.count) archived, \(names.count) names, \(groups.count) groups, \(blobs.count) blobs, version \(version ?? [])"
    }
}

/// A small deterministic workload: one collection "items" with a unique index "name" and a
/// non-unique index "group", rows put, updated and deleted, a metadata value and blobs.
enum CrashWorkload {
    static let path = "/crash.strata"

    static func open(_ fs: SimulatedFileSystem, durability: Durability = .full, readOnly: Bool = false) throws -> Store {
        try Store(path: path, options: StoreOptions(durability: durability, cacheSize: 1 << 20, readOnly: readOnly), fileSystem: fs)
    }

    static func payload(_ row: RowID, _ version: UInt64) -> [UInt8] {
        Array("row \(row) v\(version) ".utf8) + [UInt8](repeating: UInt8(truncatingIfNeeded: row &* 31 &+ version), count: Int((row &* 7 &+ version &* 13) % 29))
    }

    static func nameKey(_ row: RowID, _ version: UInt64) -> [UInt8] { Array("name-\(row)-\(version)".utf8) }
    static func groupKey(_ row: RowID) -> [UInt8] { [0x67, UInt8(row % 3)] }

    /// Puts `row` at `version` in the transaction and in the model.
    static func put(_ row: RowID, version: UInt64, tx: WriteTransaction, state: inout CrashState) throws {
        let items = tx.collection(named: "items")!
        let name = tx.index(named: "name", in: items)!.id
        let group = tx.index(named: "group", in: items)!.id
        let bytes = payload(row, version)
        try tx.put(bytes, row: row, in: items, indexKeys: [IndexKey(name, nameKey(row, version)), IndexKey(group, groupKey(row))],
                   previousKeys: keys(of: row, tx: tx, state: state))
        if state.rows[row] == nil { state.count += 1 }
        state.names = state.names.filter { $0.value != row }
        state.rows[row] = bytes
        state.names[nameKey(row, version)] = row
        state.groups.insert(.init(key: groupKey(row), row: row))
    }

    /// The index keys `row` has in the model (none when it does not exist).
    static func keys(of row: RowID, tx: WriteTransaction, state: CrashState) -> [IndexKey] {
        guard state.rows[row] != nil, let items = tx.collection(named: "items"),
              let name = tx.index(named: "name", in: items)?.id, let group = tx.index(named: "group", in: items)?.id else { return [] }
        return state.names.filter { $0.value == row }.map { IndexKey(name, $0.key) } + [IndexKey(group, groupKey(row))]
    }

    /// Applies commit number `state.sequence + 1` to the transaction and to the model; the
    /// first one creates the collection with `initialRows` rows (and, with `archiveRows`,
    /// a collection "archive" that no later commit changes, so that its pages stay live).
    static func commit(tx: WriteTransaction, state: inout CrashState, blob: Bool = false, initialRows: Int = 6, archiveRows: Int = 0) throws {
        let k = state.sequence + 1
        if tx.collection(named: "items") == nil {
            // The archive's rows come first in key order, so its first pages stay as written.
            let archive = archiveRows > 0 ? try tx.createCollection(named: "archive") : nil
            let items = try tx.createCollection(named: "items")
            _ = try tx.createIndex(named: "name", on: items, unique: true)
            _ = try tx.createIndex(named: "group", on: items, unique: false)
            for _ in 0..<initialRows {
                try put(try tx.allocateRowID(in: items), version: k, tx: tx, state: &state)
            }
            if let archive {
                for row in 1...RowID(archiveRows) {
                    let bytes = Array("archived \(row)".utf8)
                    try tx.put(bytes, row: row, in: archive)
                    state.archive[row] = bytes
                }
            }
        } else {
            let items = tx.collection(named: "items")!
            let existing = state.rows.keys.sorted()
            // Update one row, delete another, add two.
            if !existing.isEmpty {
                try put(existing[Int(k) % existing.count], version: k, tx: tx, state: &state)
            }
            if existing.count > 3 {
                let victim = existing[Int(k + 1) % existing.count]
                if victim != existing[Int(k) % existing.count] {
                    #expect(try tx.delete(victim, in: items, indexKeys: keys(of: victim, tx: tx, state: state)))
                    state.rows[victim] = nil
                    state.count -= 1
                    state.names = state.names.filter { $0.value != victim }
                    state.groups = state.groups.filter { $0.row != victim }
                }
            }
            for _ in 0..<2 {
                try put(try tx.allocateRowID(in: items), version: k, tx: tx, state: &state)
            }
        }
        let version: [UInt8] = Array("version \(k)".utf8)
        try tx.setMetadata("version", version)
        state.version = version
        if blob {
            if k % 3 == 0, let old = state.blobs.keys.min() {
                try tx.deleteBlob(BlobID(rawValue: old))
                state.blobs[old] = nil
            }
            let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: 700 + Int(k) * 3)
            let id = try tx.putBlob(bytes)
            state.blobs[id.rawValue] = bytes
        }
        state.sequence = k
    }

    /// Commits the next commit of the workload; returns the state it should leave.
    @discardableResult
    static func commit(_ store: Store, after state: CrashState, blob: Bool = false, initialRows: Int = 6, archiveRows: Int = 0) throws -> CrashState {
        var next = state
        try store.write { tx in try commit(tx: tx, state: &next, blob: blob, initialRows: initialRows, archiveRows: archiveRows) }
        return next
    }

    /// Reads everything the store holds (engine errors are thrown, not hidden).
    static func read(_ store: Store) throws -> CrashState {
        try store.read { tx in
            var s = CrashState()
            s.sequence = tx.sequence
            s.version = try tx.metadata("version")
            for id in try tx.blobIDs() { s.blobs[id.rawValue] = try tx.blob(id) }
            if let archive = tx.collection(named: "archive") {
                var cursor = try tx.rows(in: archive)
                while let (row, bytes) = try cursor.next() { s.archive[row] = bytes }
                if try tx.count(in: archive) != s.archive.count { s.archive[0] = [] }  // a count that disagrees
            }
            guard let items = tx.collection(named: "items") else { return s }
            s.count = try tx.count(in: items)
            var cursor = try tx.rows(in: items)
            while let (row, bytes) = try cursor.next() { s.rows[row] = bytes }
            if let name = tx.index(named: "name", in: items) {
                var c = try tx.entries(in: name.id)
                while let (key, row) = try c.next() { s.names[key] = row }
            }
            if let group = tx.index(named: "group", in: items) {
                var c = try tx.entries(in: group.id)
                while let (key, row) = try c.next() { s.groups.insert(.init(key: key, row: row)) }
            }
            return s
        }
    }

    /// Reads each expected value by itself (point lookups); returns the ones that differ.
    /// Engine errors are thrown.
    static func pointReadMismatches(_ store: Store, _ expected: CrashState) throws -> [String] {
        try store.read { tx in
            var wrong: [String] = []
            if tx.sequence != expected.sequence { wrong.append("sequence \(tx.sequence)") }
            guard let items = tx.collection(named: "items") else {
                if !expected.rows.isEmpty { wrong.append("no collection") }
                return wrong
            }
            let name = tx.index(named: "name", in: items)!.id
            if !expected.archive.isEmpty, let archive = tx.collection(named: "archive") {
                // A sample: the scan in `read` sees every archived row.
                for (row, bytes) in expected.archive.sorted(by: { $0.key < $1.key }) where try row % 7 == 1 && tx.record(row, in: archive) != bytes {
                    wrong.append("archived row \(row)")
                }
            } else if !expected.archive.isEmpty {
                wrong.append("no archive")
            }
            for (row, bytes) in expected.rows.sorted(by: { $0.key < $1.key }) {
                if try tx.record(row, in: items) != bytes { wrong.append("record of row \(row)") }
                if try !tx.contains(row, in: items) { wrong.append("contains row \(row)") }
            }
            for (key, row) in expected.names where try tx.lookup(key, in: name) != row {
                wrong.append("lookup of \(String(decoding: key, as: UTF8.self))")
            }
            if try tx.record(99_999, in: items) != nil { wrong.append("row 99999 exists") }
            if try tx.count(in: items) != expected.count { wrong.append("count") }
            for (id, bytes) in expected.blobs where try tx.blob(BlobID(rawValue: id)) != bytes {
                wrong.append("blob \(id)")
            }
            return wrong
        }
    }
}

/// A store built by the workload on a simulated file system, with what each commit left.
struct CrashFixture {
    let fs: SimulatedFileSystem
    /// `states[k]`: what commit k leaves (`states[0]`: the new empty store).
    var states: [CrashState]
    /// `ends[k]`: the end of commit k (the file's size right after it, less the zeros the
    /// writer wrote ahead).
    var ends: [Int]

    var path: String { CrashWorkload.path }
    var last: Int { states.count - 1 }
    /// The file's bytes up to the end of its last commit.
    var bytes: [UInt8] { fs.bytes(of: path)!.strippingZeroTail() }

    static func make(commits: Int, blobs: Bool = false, initialRows: Int = 6, archiveRows: Int = 0,
                     sourceLocation: SourceLocation = #_sourceLocation) throws -> CrashFixture {
        let fs = SimulatedFileSystem()
        var fixture = CrashFixture(fs: fs, states: [CrashState()], ends: [])
        let store = try CrashWorkload.open(fs)
        fixture.ends.append(fixture.bytes.count)
        for _ in 0..<commits {
            let state = try CrashWorkload.commit(store, after: fixture.states.last!, blob: blobs, initialRows: initialRows, archiveRows: archiveRows)
            // The model must agree with the live store, or every later check means nothing.
            #expect(try CrashWorkload.read(store) == state, sourceLocation: sourceLocation)
            fixture.states.append(state)
            fixture.ends.append(fixture.bytes.count)
        }
        // Only the zeros written ahead of the next commit may wait for its sync.
        #expect(fs.durableBytes(of: CrashWorkload.path)?.strippingZeroTail() == fixture.bytes, "a .full commit leaves nothing unsynced", sourceLocation: sourceLocation)
        return fixture
    }

    /// A file system holding only the data file, with these bytes.
    static func fileSystem(holding bytes: [UInt8]) -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        fs.setBytes(bytes, of: CrashWorkload.path)
        return fs
    }
}

/// Runs `body`, which must throw a `StoreError` whose code is one of `codes`; returns it.
@discardableResult
func crashExpectError<R>(_ codes: StoreError.Code..., from call: String = "", sourceLocation: SourceLocation = #_sourceLocation,
                         _ body: () throws -> R) -> StoreError? {
    do {
        _ = try body()
        Issue.record("\(call): expected StoreError \(codes), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        #expect(codes.contains(error.code), "\(call): expected \(codes), got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("\(call): expected StoreError \(codes), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Opens the workload's store on `fs` and checks it holds one of `allowed` (and verifies
/// clean); then commits once more and reopens, to check the store goes on. Returns the
/// sequence it held.
@discardableResult
func crashExpectOpens(_ fs: SimulatedFileSystem, holdingOneOf allowed: [CrashState], goOn: Bool = true, _ context: String,
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> UInt64? {
    let found: CrashState
    do {
        let store = try CrashWorkload.open(fs)
        found = try CrashWorkload.read(store)
        guard allowed.contains(found) else {
            Issue.record("\(context): the store holds \(found); expected one of \(allowed.map(\.description))", sourceLocation: sourceLocation)
            return nil
        }
        let report = try store.verify()
        #expect(report.isClean, "\(context): verify: \(report)", sourceLocation: sourceLocation)
        guard goOn else { return found.sequence }
        let next = try CrashWorkload.commit(store, after: found)
        store.close()
        _ = consume store
        let reopened = try CrashWorkload.open(fs)
        #expect(try CrashWorkload.read(reopened) == next, "\(context): the commit after reopening", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(context): \(error)", sourceLocation: sourceLocation)
        return nil
    }
    return found.sequence
}

// MARK: - Crash tests

@Suite struct CrashTests {
    /// Cuts the file at every byte of the last commit: reopening gives the previous commit,
    /// except for the cut at the very end, which gives the last one.
    @Test func cutAtEveryOffsetOfTheLastCommit() throws {
        let f = try CrashFixture.make(commits: 5)
        let bytes = f.bytes
        let k = f.last
        for cut in f.ends[k - 1]...f.ends[k] {
            let fs = CrashFixture.fileSystem(holding: Array(bytes[..<cut]))
            let expected = cut == f.ends[k] ? f.states[k] : f.states[k - 1]
            // Every 16th cut (and the edges) also commits again and reopens.
            let goOn = cut % 16 == 0 || cut == f.ends[k - 1] || cut >= f.ends[k] - 1
            try crashExpectOpens(fs, holdingOneOf: [expected], goOn: goOn, "cut at byte \(cut)")
            if !goOn {
                #expect(fs.bytes(of: f.path)!.count == f.ends[expected.sequence == UInt64(k) ? k : k - 1],
                        "cut at byte \(cut): the torn tail is cut off on open")
            }
        }
    }

    /// Cuts the file at every byte of a commit in the middle (everything after it is gone).
    @Test func cutAtEveryOffsetOfAMiddleCommit() throws {
        let f = try CrashFixture.make(commits: 6)
        let bytes = f.bytes
        let m = 3
        for cut in f.ends[m - 1]...f.ends[m] {
            let fs = CrashFixture.fileSystem(holding: Array(bytes[..<cut]))
            let expected = cut == f.ends[m] ? f.states[m] : f.states[m - 1]
            try crashExpectOpens(fs, holdingOneOf: [expected], goOn: cut % 32 == 0, "cut at byte \(cut) (commit \(m))")
        }
    }

    /// A cut inside the very first commit of a new store leaves the empty store.
    @Test func cutInsideTheFirstCommit() throws {
        let f = try CrashFixture.make(commits: 1)
        let bytes = f.bytes
        for cut in stride(from: f.ends[0], through: f.ends[1], by: 3) {
            let fs = CrashFixture.fileSystem(holding: Array(bytes[..<cut]))
            try crashExpectOpens(fs, holdingOneOf: [cut == f.ends[1] ? f.states[1] : f.states[0]], goOn: cut % 30 == 0, "cut at byte \(cut)")
        }
    }

    /// Zeros, 0xFF, random bytes, or a copy of the last commit record after the last commit:
    /// reopening gives the last commit and cuts the tail off.
    @Test(arguments: [1, 11, 12, 13, 99, 512, 4097])
    func garbageTailsAreCutOff(length: Int) throws {
        let f = try CrashFixture.make(commits: 4)
        let bytes = f.bytes
        var random = SeededGenerator(seed: UInt64(length))
        let lastRecordStart = f.ends[f.last] - (try lastCommitRecordLength(bytes))
        let tails: [(String, [UInt8])] = [
            ("zeros", [UInt8](repeating: 0, count: length)),
            ("0xFF", [UInt8](repeating: 0xFF, count: length)),
            ("random", (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }),
            ("a copy of the last commit record", Array(bytes[lastRecordStart...]) + [UInt8](repeating: 0, count: length % 5)),
            ("end magic", Array(repeating: CommitRecord.endMagic, count: length / 8 + 1).flatMap { $0 }),
        ]
        for (name, tail) in tails {
            let fs = CrashFixture.fileSystem(holding: bytes + tail)
            try crashExpectOpens(fs, holdingOneOf: [f.states[f.last]], goOn: false, "tail of \(tail.count) bytes: \(name)")
            #expect(fs.bytes(of: f.path)!.count == f.ends[f.last], "tail \(name): cut off on open")
            // Opening read-only does not change the file and sees the same commit.
            let readOnlyFS = CrashFixture.fileSystem(holding: bytes + tail)
            let store = try CrashWorkload.open(readOnlyFS, readOnly: true)
            #expect(try CrashWorkload.read(store) == f.states[f.last], "read-only, tail \(name)")
            #expect(readOnlyFS.bytes(of: f.path)! == bytes + tail)
        }
    }

    /// Cuts the power during each write, sync, truncate and directory change of a commit
    /// (with a blob), keeping all, none or a torn part of what was not synced: the store
    /// reopens with every acknowledged commit, and the interrupted one entirely or not at all.
    @Test(arguments: [SimulatedFileSystem.Operation.write, .sync, .syncDirectory, .open, .truncate, .createDirectory])
    func powerCutDuringACommit(at operation: SimulatedFileSystem.Operation) throws {
        let f = try CrashFixture.make(commits: 3)
        let modes: [SimulatedFileSystem.PowerLoss] = [.dropUnsynced, .keepUnsynced] + (1...6).map { .tearUnsynced(seed: $0) }
        // What the two commits leave, from a run without a power cut.
        var states = [f.states[f.last]]
        do {
            let store = try CrashWorkload.open(f.fs.clone())
            for blob in [true, false] { states.append(try CrashWorkload.commit(store, after: states.last!, blob: blob)) }
        }
        var points = 0
        for mode in modes {
            var n = 1
            while n < 50 {
                let fs = f.fs.clone()
                let store = try CrashWorkload.open(fs)
                fs.cutPower(at: operation, n: n, mode: mode)
                var acknowledged = 0
                // Two commits: the first with a new blob folder, the second without.
                for blob in [true, false] {
                    do {
                        let state = try CrashWorkload.commit(store, after: states[acknowledged], blob: blob)
                        #expect(state == states[acknowledged + 1])
                        acknowledged += 1
                    } catch {
                        #expect(fs.isPoweredOff, "\(mode), \(operation) \(n): \(error)")
                        #expect(error is StoreError, "\(mode), \(operation) \(n): \(error)")
                        break
                    }
                }
                guard fs.isPoweredOff else {
                    fs.disarm()
                    #expect(acknowledged == 2)
                    #expect(try CrashWorkload.read(store) == states[2])
                    break
                }
                points += 1
                let image = try #require(fs.powerLossImage)
                // Acknowledged commits must all be there; the interrupted one may be.
                try crashExpectOpens(image, holdingOneOf: [states[acknowledged], states[min(acknowledged + 1, 2)]],
                                     "\(mode), power cut at \(operation) \(n), \(acknowledged) acknowledged")
                n += 1
            }
        }
        #expect(points > 0, "the power cut never happened at \(operation)")
    }
}

extension CrashTests {
    /// Cuts the power at every call while a new store is created: reopening gives the new,
    /// empty store (or creates it again), never an error.
    @Test(arguments: [SimulatedFileSystem.Operation.open, .truncate, .write, .sync, .syncDirectory])
    func powerCutWhileCreatingAStore(at operation: SimulatedFileSystem.Operation) throws {
        var points = 0
        for mode in [SimulatedFileSystem.PowerLoss.dropUnsynced, .keepUnsynced] + (0..<12).map({ .tearUnsynced(seed: $0) }) {
            var n = 1
            while n < 20 {
                let fs = SimulatedFileSystem()
                fs.cutPower(at: operation, n: n, mode: mode)
                do { _ = try CrashWorkload.open(fs) } catch {}
                guard let image = fs.powerLossImage else { break }
                points += 1
                try crashExpectOpens(image, holdingOneOf: [CrashState()], "creating a store, \(mode), power cut at \(operation) \(n)")
                n += 1
            }
        }
        #expect(points > 0)
    }

    /// With `.deferred` durability a power cut may lose the last commits, never more, and
    /// never leaves a damaged store: whatever subset of the unsynced writes reached the disk,
    /// the store reopens with some earlier commit, entirely (Durability.deferred's promise),
    /// and no record points at a missing blob.
    @Test(arguments: 0..<4 as Range<UInt64>)
    func deferredCommitsSurviveATornPowerCut(seedBase: UInt64) throws {
        let f = try CrashFixture.make(commits: 2)
        let fs = f.fs.clone()
        let store = try CrashWorkload.open(fs, durability: .deferred)
        var states = [f.states[f.last]]
        for i in 0..<4 { states.append(try CrashWorkload.commit(store, after: states.last!, blob: i % 2 == 0)) }
        for seed in (seedBase * 10)..<(seedBase * 10 + 10) {
            let mode = SimulatedFileSystem.PowerLoss.tearUnsynced(seed: seed)
            let image = fs.powerLoss(mode)
            try crashExpectOpens(image, holdingOneOf: states, goOn: false, "deferred, \(mode)")
        }
        try store.sync()
        try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [states.last!], "deferred, after Store.sync()")
    }

    /// The same for a commit whose body is large enough to be written before its commit record.
    @Test func deferredLargeCommitSurvivesATornPowerCut() throws {
        let f = try CrashFixture.make(commits: 2)
        let fs = f.fs.clone()
        let store = try CrashWorkload.open(fs, durability: .deferred)
        var states = [f.states[f.last]]
        states.append(try CrashWorkload.commit(store, after: states.last!))
        states.append(try Self.largeCommit(store, after: states.last!))
        states.append(try CrashWorkload.commit(store, after: states.last!))
        #expect(fs.bytes(of: CrashWorkload.path)!.count - f.ends[f.last] > Int(Store.singleSyncBodyLimit))
        for seed in 0..<16 as Range<UInt64> {
            let mode = SimulatedFileSystem.PowerLoss.tearUnsynced(seed: seed)
            try crashExpectOpens(fs.powerLoss(mode), holdingOneOf: states, goOn: false, "deferred large commit, \(mode)")
        }
    }

    /// A commit whose body is larger than Store.singleSyncBodyLimit (synced before its record).
    static func largeCommit(_ store: Store, after state: CrashState) throws -> CrashState {
        var large = state
        try store.write { tx in
            let items = tx.collection(named: "items")!
            for i in 0..<40 as Range<UInt64> {
                let row = try tx.allocateRowID(in: items)
                let bytes = [UInt8](repeating: UInt8(i), count: 8000)
                try tx.put(bytes, row: row, in: items)
                large.rows[row] = bytes
                large.count += 1
            }
            large.sequence += 1
        }
        return large
    }

    /// Cuts the power during each write and sync of a large commit (its body synced before
    /// its commit record): the store reopens with the commit entirely or not at all.
    @Test(arguments: [SimulatedFileSystem.Operation.write, .sync])
    func powerCutDuringALargeCommit(at operation: SimulatedFileSystem.Operation) throws {
        let f = try CrashFixture.make(commits: 2)
        let before = f.states[f.last]
        let after = try Self.largeCommit(try CrashWorkload.open(f.fs.clone()), after: before)
        var points = 0
        for mode in [SimulatedFileSystem.PowerLoss.dropUnsynced, .keepUnsynced] + (0..<6).map({ .tearUnsynced(seed: $0) }) {
            var n = 1
            while n < 10 {
                let fs = f.fs.clone()
                let store = try CrashWorkload.open(fs)
                fs.cutPower(at: operation, n: n, mode: mode)
                do {
                    let state = try Self.largeCommit(store, after: before)
                    // A power cut after the commit is durable (at its publication in the lock
                    // file, or while zeros are written ahead of the next commits) does not fail it.
                    #expect(state == after)
                    if let image = fs.powerLossImage {
                        try crashExpectOpens(image, holdingOneOf: [after], goOn: false, "large commit, \(mode), power cut at \(operation) \(n) after the commit")
                    }
                } catch {
                    #expect(fs.isPoweredOff, "\(error)")
                }
                guard let image = fs.powerLossImage else { break }
                points += 1
                try crashExpectOpens(image, holdingOneOf: [before, after], goOn: false, "large commit, \(mode), power cut at \(operation) \(n)")
                n += 1
            }
        }
        #expect(points >= 16, "two \(operation)s per large commit")
    }
}

extension Array where Element == UInt8 {
    /// These bytes without the zeros at their end: a store file without the zeros its writer
    /// wrote ahead of its commits (a commit record ends with its nonzero end magic).
    func strippingZeroTail() -> [UInt8] {
        guard let last = lastIndex(where: { $0 != 0 }) else { return [] }
        return Array(self[...last])
    }
}

/// The length of the commit record that ends the file.
func lastCommitRecordLength(_ bytes: [UInt8]) throws -> Int {
    let trailer = Array(bytes[(bytes.count - CommitRecord.trailerSize)...])
    try #require(Array(trailer[4...]) == CommitRecord.endMagic)
    return Int(trailer.loadLE32(0))
}
