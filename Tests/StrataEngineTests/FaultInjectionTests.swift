// Fault loops: fail the Nth write, sync, rename (or other call) of a commit or a compaction,
// once or from then on, with ENOSPC and EIO, raising N until the work completes. After each
// failure the store must throw a typed error, reopen (as it is, and after a power cut) with
// the commit entirely or not at all, and, once the disk works again, go on: the next write
// reopens the file through a new descriptor, and what it commits is durable.

import Testing
import StrataTestSupport
@testable import StrataEngine

@Suite struct FaultInjectionTests {
    typealias Operation = SimulatedFileSystem.Operation

    static let errnos: [Int32] = [SystemError.noSpace, SystemError.ioError]

    static func expectedCode(_ errno: Int32) -> StoreError.Code {
        errno == SystemError.noSpace ? .diskFull : .ioFailure
    }

    /// What a failed store must do: still read its last commit; while the disk still fails,
    /// throw a typed error for every kind of write (or do it, when it needs no failing call);
    /// once the disk works, go on by itself, durably (even when a failed compaction left its
    /// new file in the store's place). Returns the store's state at the end.
    @discardableResult
    static func expectGoesOn(_ store: Store, _ fs: SimulatedFileSystem, holding state: CrashState, failing code: StoreError.Code,
                             persistent: Bool, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> CrashState {
        var state = state
        if persistent {
            // The disk still fails: a write reopens the file and fails again, or gets through.
            do { state = try CrashWorkload.commit(store, after: state) } catch let error as StoreError {
                #expect(error.code == code, "\(context): write while failing: \(error)", sourceLocation: sourceLocation)
            }
            do { try store.sync() } catch let error as StoreError {
                #expect(error.code == code, "\(context): sync while failing: \(error)", sourceLocation: sourceLocation)
            }
        }
        fs.disarm()
        #expect(try CrashWorkload.read(store) == state, "\(context): readers see the last commit", sourceLocation: sourceLocation)
        // Space freed: the next write goes on, and is durable.
        state = try CrashWorkload.commit(store, after: state)
        #expect(try CrashWorkload.read(store) == state, "\(context): the commit after the failure is read back", sourceLocation: sourceLocation)
        try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [state], "\(context): the commit after the failure is durable",
                             sourceLocation: sourceLocation)
        try store.sync()
        #expect(fs.syncsRetriedAfterFailure == 0, "\(context): a sync went through the descriptor whose sync failed", sourceLocation: sourceLocation)
        return state
    }

    /// The disk as it is, and after each kind of power cut: each must hold one of `allowed`.
    static func expectAllOrNothing(_ fs: SimulatedFileSystem, _ allowed: [CrashState], _ context: String,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let images: [(String, SimulatedFileSystem)] = [
            ("as is", fs.clone()),
            ("dropUnsynced", fs.powerLoss(.dropUnsynced)),
            ("keepUnsynced", fs.powerLoss(.keepUnsynced)),
            ("tearUnsynced(1)", fs.powerLoss(.tearUnsynced(seed: 1))),
            ("tearUnsynced(2)", fs.powerLoss(.tearUnsynced(seed: 2))),
        ]
        for (name, image) in images {
            try crashExpectOpens(image, holdingOneOf: allowed, goOn: name != "tearUnsynced(2)", "\(context), reopened \(name)",
                                 sourceLocation: sourceLocation)
            #expect(!image.fileExists(CrashWorkload.path + ".compact"), "\(context), \(name): the compaction file is removed on open",
                    sourceLocation: sourceLocation)
        }
    }

    // MARK: Commit

    /// Fails the Nth call of `operation` in a commit that writes a blob, for every N.
    @Test(arguments: [Operation.write, .sync, .syncDirectory, .open, .truncate, .createDirectory], [false, true])
    func failedCommitIsAllOrNothing(operation: Operation, persistent: Bool) throws {
        let f = try CrashFixture.make(commits: 3)
        let before = f.states[f.last]
        let after = try CrashWorkload.commit(try CrashWorkload.open(f.fs.clone()), after: before, blob: true)
        for errno in Self.errnos {
            var n = 1
            while n < 50 {
                let context = "\(operation) \(n) fails\(persistent ? " from then on" : "") with errno \(errno)"
                let fs = f.fs.clone()
                let store = try CrashWorkload.open(fs)
                fs.fail(operation, at: n, errno: errno, persistent: persistent)
                do {
                    let state = try CrashWorkload.commit(store, after: before, blob: true)
                    // Publishing the commit to other processes (a write to the lock file) and
                    // writing zeros ahead of the next commits come after it is durable; their
                    // failure is not the commit's.
                    #expect(fs.failedPaths.allSatisfy { $0.hasSuffix(".lock") || $0 == CrashWorkload.path }, "\(context): the commit succeeded although a call failed")
                    #expect(state == after)
                    try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [after], goOn: false, "\(context): the commit is durable")
                    fs.disarm()
                    #expect(try CrashWorkload.read(store) == after, "\(context)")
                    break
                } catch let error as StoreError {
                    #expect(fs.faultsTriggered > 0, "\(context): \(error)")
                    #expect(error.code == Self.expectedCode(errno), "\(context): \(error)")
                    #expect(error.underlying is SystemError, "\(context): the cause is kept: \(error)")
                }
                try Self.expectAllOrNothing(fs, [before, after], context)
                try Self.expectGoesOn(store, fs, holding: before, failing: Self.expectedCode(errno), persistent: persistent, context)
                n += 1
            }
            #expect(n > 1, "\(operation) never happened in a commit")
        }
    }

    /// A failed sync is never retried on its descriptor: the writes it should have flushed
    /// may be lost although reads still see them. The next write (or, with `.deferred`
    /// durability, the next `sync()`) reopens the file, writes those bytes again and syncs
    /// them: after a power cut they are there.
    @Test(arguments: [false, true])
    func failedSyncIsNeverRetried(deferred: Bool) throws {
        let f = try CrashFixture.make(commits: 2)
        let before = f.states[f.last]
        let fs = f.fs.clone()
        let store = try CrashWorkload.open(fs, durability: deferred ? .deferred : .full)
        var after = before
        fs.fail(.sync, at: 1, errno: SystemError.ioError)
        if deferred {
            after = try CrashWorkload.commit(store, after: before)
            crashExpectError(.ioFailure) { try store.sync() }
        } else {
            crashExpectError(.ioFailure) { try CrashWorkload.commit(store, after: before) }
        }
        #expect(fs.faultsTriggered == 1)
        // The writes the failed sync should have flushed are lost, though reads see them.
        #expect(try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [before], "sync failed: nothing new is durable") == before.sequence)
        #expect(try CrashWorkload.read(store) == after)
        fs.disarm()
        if deferred {
            try store.sync()
            #expect(try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [after], "the next sync wrote the commit again") == after.sequence)
        }
        let next = try CrashWorkload.commit(store, after: after)
        try store.sync()
        #expect(try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [next], "a commit after the failure, then a power cut") == next.sequence)
        #expect(fs.syncsRetriedAfterFailure == 0, "a sync went through the descriptor whose sync failed")
    }

    /// A failed commit leaves nothing of itself in the file, as its error says: reopening
    /// the store as it is (no power cut) gives the previous commit. After a failed sync the
    /// kernel may have dropped the commit's pages while reads still see them, so a later
    /// session that opened on that commit would build on bytes the disk does not hold.
    @Test(arguments: [Operation.write, .sync])
    func failedCommitLeavesNothingBehind(operation: Operation) throws {
        let f = try CrashFixture.make(commits: 3)
        let before = f.states[f.last]
        let fs = f.fs.clone()
        let store = try CrashWorkload.open(fs)
        fs.fail(operation, at: 1, errno: SystemError.ioError)
        crashExpectError(.ioFailure) { try CrashWorkload.commit(store, after: before) }
        #expect(fs.bytes(of: CrashWorkload.path)!.count == f.ends[f.last], "the failed commit's bytes are cut off")
        // A later session on the store as it is, then a power cut: its commit is all there.
        let reopened = fs.clone()
        try crashExpectOpens(reopened, holdingOneOf: [before], "reopened after a failed \(operation)")
        try crashExpectOpens(reopened.powerLoss(.dropUnsynced), holdingOneOf: [try Self.successor(of: before, in: f)],
                             "a commit after reopening, then a power cut")
    }

    /// A store that goes on after a failure keeps its lock all along: no other writer gets in,
    /// before or after the reopen; closing it releases the lock.
    @Test(arguments: [Operation.write, .sync])
    func storeThatGoesOnKeepsItsLock(operation: Operation) throws {
        let f = try CrashFixture.make(commits: 2)
        let before = f.states[f.last]
        let fs = f.fs.clone()
        let store = try CrashWorkload.open(fs)
        fs.fail(operation, at: 1, errno: SystemError.noSpace)
        crashExpectError(.diskFull) { try CrashWorkload.commit(store, after: before) }
        crashExpectError(.locked, from: "after the failure") { try CrashWorkload.open(fs) }
        fs.disarm()
        let after = try CrashWorkload.commit(store, after: before)
        crashExpectError(.locked, from: "after the reopen") { try CrashWorkload.open(fs) }
        // A reader (here or in another process) may read beside it: it reads the commit the
        // store published after the reopen.
        #expect(try CrashWorkload.read(try CrashWorkload.open(fs, readOnly: true)) == after)
        store.close()
        #expect(try CrashWorkload.read(try CrashWorkload.open(fs)) == after)
    }

    /// The state one workload commit after `state` leaves, from a scratch copy of the fixture.
    static func successor(of state: CrashState, in f: CrashFixture) throws -> CrashState {
        try CrashWorkload.commit(try CrashWorkload.open(f.fs.clone()), after: state)
    }

    // MARK: Compaction

    /// Fails the Nth call of `operation` in a compaction, for every N.
    @Test(arguments: [Operation.open, .write, .sync, .rename, .syncDirectory, .remove], [false, true])
    func failedCompactionLosesNothing(operation: Operation, persistent: Bool) throws {
        let f = try CrashFixture.make(commits: 6, blobs: true)
        let state = f.states[f.last]
        for errno in Self.errnos {
            var n = 1
            while n < 50 {
                let context = "compaction: \(operation) \(n) fails\(persistent ? " from then on" : "") with errno \(errno)"
                let fs = f.fs.clone()
                // A blob file that no commit refers to, which compaction removes.
                fs.setBytes([1, 2, 3], of: CrashWorkload.path + ".blobs/00000000000000ff.blob")
                let store = try CrashWorkload.open(fs)
                fs.fail(operation, at: n, errno: errno, persistent: persistent)
                do {
                    let report = try store.compact()
                    // Only removing a stray blob file may fail without failing the compaction.
                    #expect(fs.failedPaths.allSatisfy { $0.hasSuffix(".lock") } || operation == .remove, "\(context): compaction succeeded although a call failed")
                    #expect(report.bytesAfter < report.bytesBefore)
                    fs.disarm()
                    #expect(try CrashWorkload.read(store) == state, "\(context)")
                    try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [state], "\(context): power cut after compaction")
                    if fs.faultsTriggered == 0 {
                        #expect(!fs.fileExists(CrashWorkload.path + ".blobs/00000000000000ff.blob"), "the stray blob is removed")
                        #expect(fs.bytes(of: CrashWorkload.path)!.count == report.bytesAfter)
                        // The compacted store goes on.
                        let next = try CrashWorkload.commit(store, after: state, blob: true)
                        try crashExpectOpens(fs.powerLoss(.dropUnsynced), holdingOneOf: [next], "\(context): commit after compaction")
                        break
                    }
                    n += 1
                    continue
                } catch let error as StoreError {
                    #expect(fs.faultsTriggered > 0, "\(context): \(error)")
                    #expect(error.code == Self.expectedCode(errno), "\(context): \(error)")
                }
                try Self.expectAllOrNothing(fs, [state], context)
                try Self.expectGoesOn(store, fs, holding: state, failing: Self.expectedCode(errno), persistent: persistent, context)
                n += 1
            }
            #expect(n > 1, "\(operation) never happened in a compaction")
        }
    }

    /// Cuts the power at every call of a compaction: the store reopens with the same commit.
    @Test(arguments: [Operation.open, .write, .sync, .rename, .syncDirectory, .remove])
    func powerCutDuringCompaction(at operation: Operation) throws {
        let f = try CrashFixture.make(commits: 5, blobs: true)
        let state = f.states[f.last]
        var points = 0
        for mode in [SimulatedFileSystem.PowerLoss.dropUnsynced, .keepUnsynced, .tearUnsynced(seed: 7), .tearUnsynced(seed: 8)] {
            var n = 1
            while n < 50 {
                let fs = f.fs.clone()
                let store = try CrashWorkload.open(fs)
                fs.cutPower(at: operation, n: n, mode: mode)
                do {
                    try store.compact()
                } catch {
                    #expect(fs.isPoweredOff, "\(mode), \(operation) \(n): \(error)")
                }
                guard let image = fs.powerLossImage else { break }
                points += 1
                try crashExpectOpens(image, holdingOneOf: [state], "compaction, \(mode), power cut at \(operation) \(n)")
                #expect(!image.fileExists(CrashWorkload.path + ".compact"), "the compaction file is removed on open")
                n += 1
            }
        }
        #expect(points > 0 || operation == .remove, "the power cut never happened at \(operation)")
    }

    // MARK: Reads

    /// A blob file that cannot be opened because of an I/O error is an I/O failure, not damage.
    @Test func blobReadIOErrorIsNotReportedAsDamage() throws {
        let f = try CrashFixture.make(commits: 2, blobs: true)
        let store = try CrashWorkload.open(f.fs)
        let id = try #require(f.states[f.last].blobs.keys.first)
        f.fs.fail(.open, at: 1, errno: SystemError.ioError)
        crashExpectError(.ioFailure) { try store.read { try $0.blob(BlobID(rawValue: id)) } }
        #expect(try store.read { try $0.blob(BlobID(rawValue: id)) } == f.states[f.last].blobs[id])
    }

    // MARK: Locks

    /// Two stores on one simulated path behave as two processes would: one writer at a time
    /// (the lock file's byte-range lock); a read-only store opens beside the writer and reads
    /// each commit it publishes; an old reader keeps its commit.
    @Test func simulatedStoresShareAPathLikeProcesses() throws {
        let fs = SimulatedFileSystem()
        let writer = try CrashWorkload.open(fs)
        crashExpectError(.locked) { try CrashWorkload.open(fs) }
        let reader = try CrashWorkload.open(fs, readOnly: true)
        let first = try CrashWorkload.commit(writer, after: CrashState())
        #expect(try CrashWorkload.read(reader) == first)
        let old = try reader.beginRead()
        let second = try CrashWorkload.commit(writer, after: first, blob: true)
        #expect(try CrashWorkload.read(reader) == second)
        #expect(old.sequence == first.sequence)
        try writer.compact()
        let third = try CrashWorkload.commit(writer, after: second, blob: true)
        #expect(try CrashWorkload.read(reader) == third, "the reader follows the writer to the compacted file")
        #expect(try old.count(in: #require(old.collection(named: "items"))) == first.count, "and the old reader keeps its commit")
        writer.close()
        let again = try CrashWorkload.open(fs)
        #expect(try CrashWorkload.read(again) == third)
        withExtendedLifetime((reader, old)) {}
    }

    // MARK: The simulation itself

    /// The durability rules the other tests rely on.
    @Test func simulatedDurabilityRules() throws {
        let fs = SimulatedFileSystem()
        try fs.createDirectory("/d")
        try fs.syncDirectory("/")
        let a = try fs.openFile("/d/a", readOnly: false, create: true)
        try a.write([1, 2, 3], at: 0)
        // Not synced, entry not synced: a power cut drops the file.
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/a") == nil)
        #expect(fs.powerLoss(.keepUnsynced).bytes(of: "/d/a") == [1, 2, 3])
        try fs.syncDirectory("/d")
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/a") == [])
        try a.sync()
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/a") == [1, 2, 3])
        // A rename is durable only after its folder is synced; it is atomic under tearing.
        try fs.rename("/d/a", to: "/d/b")
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/a") == [1, 2, 3])
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/b") == nil)
        for seed in 0..<20 as Range<UInt64> {
            let torn = fs.powerLoss(.tearUnsynced(seed: seed))
            #expect((torn.bytes(of: "/d/a") == nil) != (torn.bytes(of: "/d/b") == nil))
        }
        try fs.syncDirectory("/d")
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/b") == [1, 2, 3])
        // A failed sync loses its writes for good, though reads still see them.
        try a.write([9, 9], at: 3)
        fs.fail(.sync, at: 1, errno: SystemError.ioError)
        #expect(throws: SystemError.self) { try a.sync() }
        try a.sync()
        #expect(fs.bytes(of: "/d/b") == [1, 2, 3, 9, 9])
        #expect(fs.powerLoss(.dropUnsynced).bytes(of: "/d/b") == [1, 2, 3])
        // Tearing keeps whole sectors of unsynced writes, never more than was written.
        let big = [UInt8](repeating: 7, count: 3 * SimulatedFileSystem.sectorSize)
        try a.write(big, at: 100)
        var seen = Set<Int>()
        for seed in 0..<40 as Range<UInt64> {
            let torn = try #require(fs.powerLoss(.tearUnsynced(seed: seed)).bytes(of: "/d/b"))
            #expect(Array(torn.prefix(3)) == [1, 2, 3])
            #expect(torn.count <= 100 + big.count)
            seen.insert(torn.count)
        }
        #expect(seen.count > 1, "tearing varies with the seed")
        // Faults count from when they are armed, once or from then on.
        fs.fail(.write, at: 2, errno: SystemError.noSpace, persistent: true)
        try a.write([1], at: 0)
        for _ in 0..<3 {
            #expect { try a.write([1], at: 0) } throws: { ($0 as? SystemError)?.errno == SystemError.noSpace }
        }
        #expect(fs.faultsTriggered == 4)
        fs.disarm()
        try a.write([1], at: 0)
    }
}
