import Testing
@testable import StrataEngine
import StrataTestSupport

/// The zeros a writer writes ahead of its durable commits (Docs/Durability.md, "Space
/// written ahead"): commits overwrite them instead of growing the file; they never hold a
/// commit, cost no commit its durability, and are cut off on close and on the next open.
@Suite struct PreallocationTests {
    /// Runs `commits` commits of the crash workload on a new store; returns the states.
    static func commit(_ store: Store, _ commits: Int, after state: CrashState = CrashState()) throws -> [CrashState] {
        var states = [state]
        for _ in 0..<commits { states.append(try CrashWorkload.commit(store, after: states.last!)) }
        return states
    }

    @Test func commitsOverwriteZerosWrittenAheadAndCloseCutsThemOff() throws {
        let fs = SimulatedFileSystem()
        let store = try CrashWorkload.open(fs)
        _ = try Self.commit(store, 1)
        let afterOne = fs.bytes(of: CrashWorkload.path)!
        let end = afterOne.strippingZeroTail().count
        #expect(afterOne.count >= end + 32 * 1024 && afterOne.count % 4096 == 0, "zeros written ahead after a durable commit")
        fs.resetCounts()
        _ = try Self.commit(store, 3, after: try CrashWorkload.read(store))
        #expect(fs.bytes(of: CrashWorkload.path)!.count == afterOne.count, "the next commits fall inside the zeros: the file does not grow")
        #expect(fs.count(.truncate) == 0)
        let data = fs.bytes(of: CrashWorkload.path)!.strippingZeroTail()
        store.close()
        #expect(fs.bytes(of: CrashWorkload.path)! == data, "closing cuts the zeros off")
        #expect(fs.durableBytes(of: CrashWorkload.path)!.strippingZeroTail() == data)
    }

    /// Deferred commits do not sync, so nothing would be gained: they append as they always did.
    @Test func deferredCommitsWriteNoZeros() throws {
        let fs = SimulatedFileSystem()
        let store = try CrashWorkload.open(fs, durability: .deferred)
        _ = try Self.commit(store, 3)
        let bytes = fs.bytes(of: CrashWorkload.path)!
        #expect(bytes.last != 0)
    }

    /// A power cut leaves the zeros after the last commit (whether they reached the disk or
    /// not): both kinds of open find the last commit, and the writer cuts the zeros off.
    @Test(arguments: [SimulatedFileSystem.PowerLoss.dropUnsynced, .keepUnsynced, .tearUnsynced(seed: 1), .tearUnsynced(seed: 2)])
    func aPowerCutLeavesZerosThatOpeningSkips(_ mode: SimulatedFileSystem.PowerLoss) throws {
        let fs = SimulatedFileSystem()
        let store = try CrashWorkload.open(fs)
        let states = try Self.commit(store, 4)
        let image = fs.powerLoss(mode)
        let data = image.bytes(of: CrashWorkload.path)!.strippingZeroTail()
        #expect(image.bytes(of: CrashWorkload.path)!.count > data.count || mode == .dropUnsynced)
        let reader = try CrashWorkload.open(image, readOnly: true)
        #expect(try CrashWorkload.read(reader) == states.last!)
        reader.close()
        try crashExpectOpens(image, holdingOneOf: [states.last!], goOn: false, "after a power cut (\(mode))")
        #expect(image.bytes(of: CrashWorkload.path)! == data, "the writer's open cuts the zeros off")
    }

    /// A commit whose zeros cannot be written (a full disk) is still a commit; the next ones
    /// append, and everything verifies.
    @Test func zerosThatCannotBeWrittenCostNothing() throws {
        let fs = SimulatedFileSystem()
        let store = try CrashWorkload.open(fs)
        // The first commit writes its body and record in one write, then the zeros.
        fs.fail(.write, at: 2, errno: SystemError.noSpace, persistent: false)
        var states = try Self.commit(store, 1)
        #expect(fs.faultsTriggered == 1)
        #expect(fs.bytes(of: CrashWorkload.path)!.last != 0, "the partial zeros were cut off")
        states += try Self.commit(store, 2, after: states.last!).dropFirst()
        #expect(try CrashWorkload.read(store) == states.last!)
        try expectClean(store)
        store.close()
        try crashExpectOpens(fs, holdingOneOf: [states.last!], "after zeros that could not be written")
    }

    /// A rolled-back transaction leaves the zeros (they hold no commit) unless it wrote into them.
    @Test func aRollbackKeepsTheZerosAheadUnlessItWroteIntoThem() throws {
        let fs = SimulatedFileSystem()
        let store = try CrashWorkload.open(fs)
        let states = try Self.commit(store, 2)
        let size = fs.bytes(of: CrashWorkload.path)!.count
        let tx = try store.beginWrite()
        try tx.setMetadata("version", [1, 2, 3])
        tx.rollback()
        #expect(fs.bytes(of: CrashWorkload.path)!.count == size)
        // A transaction large enough to flush part of itself into the zeros, rolled back.
        let big = try store.beginWrite()
        let items = big.collection(named: "items")!
        for _ in 0..<300 { try big.put([UInt8](repeating: 9, count: 4000), row: try big.allocateRowID(in: items), in: items) }
        big.rollback()
        let data = fs.bytes(of: CrashWorkload.path)!
        #expect(data.last != 0, "what it wrote (zeros included) is cut off")
        #expect(try CrashWorkload.read(store) == states.last!)
        _ = try Self.commit(store, 1, after: states.last!)
        try expectClean(store)
    }
}
