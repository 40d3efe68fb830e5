// Power loss, full disk and I/O errors under a ModelContext.save() and a compaction, through
// the engine's fault seam (a SimulatedFileSystem under a ModelContainer). The engine's own
// suites (CrashTests, FaultInjectionTests) do this for commits; here it is the object layer's
// saves (the torture workload: batches, upserts, changes, deletes, batch deletes, external
// storage blobs), checked against the model of every save with TortureCheck.
//
// Each test cuts the power (or fails with ENOSPC / EIO) at the Nth call of an operation, for
// N = 1, 2, ... until the save completes untouched. By default a spread of N and two seeds are
// tried so that `swift test` stays fast; STRATA_RELIABILITY_FULL=1 (scripts/faults.sh) tries
// every N, on twenty seeds.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

enum ObjectFaults {
    static let path = "/objects.store"
    static let full = ProcessInfo.processInfo.environment["STRATA_RELIABILITY_FULL"] != nil
    /// Seeds of the workload (even: full durability, odd: deferred).
    static let seeds: [UInt64] = full ? Array(4..<24) : [4, 5]

    /// The points to try: every one in a full run, else 1, 2, 3, 5, 8, 13, ...
    static func points() -> AnySequence<Int> {
        if full { return AnySequence(1...) }
        return AnySequence(sequence(state: (1, 2)) { state -> Int? in
            defer { state = (state.1, state.0 + state.1) }
            return state.0
        })
    }

    static func open(_ fs: SimulatedFileSystem, seed: UInt64) throws -> ModelContainer {
        var configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
        configuration.durability = tortureDurability(seed: seed)
        return try ModelContainer(for: Schema(tortureModels), configurations: [configuration], fileSystem: fs)
    }

    /// A closed store holding saves 1...n-1 of `seed`, where save n is the first of `kind`.
    static func base(kind: String, seed: UInt64) throws -> (fs: SimulatedFileSystem, n: Int) {
        let n = try #require((3..<500).first { ObjectSave(seed: seed, n: $0).kind == kind })
        let fs = SimulatedFileSystem()
        let container = try open(fs, seed: seed)
        for i in 1..<n { try ObjectSave(seed: seed, n: i).apply(to: container, seed: seed) }
        return (fs, n)
    }

    /// Checks `image` holds exactly the acknowledged saves (or the one in flight too), then
    /// that a save after reopening works and is there after another reopen.
    static func expectIntact(_ image: SimulatedFileSystem, seed: UInt64, acknowledged: Int, goOn: Bool, _ context: String,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        var model = ObjectModel(seed: seed)
        let result = TortureCheck.objects(path: path, seed: seed, model: &model, acknowledged: acknowledged, fileSystem: image)
        #expect(result.problems.isEmpty, "\(context): \(result.problems)", sourceLocation: sourceLocation)
        guard goOn, result.problems.isEmpty else { return }
        do {
            try ObjectSave(seed: seed, n: result.saves + 1).apply(to: try open(image, seed: seed), seed: seed)
        } catch {
            Issue.record("\(context): saving after the reopen failed: \(error)", sourceLocation: sourceLocation)
            return
        }
        let again = TortureCheck.objects(path: path, seed: seed, model: &model, acknowledged: result.saves + 1, fileSystem: image)
        #expect(again.problems.isEmpty && again.saves == result.saves + 1, "\(context), then a save: \(again.problems)", sourceLocation: sourceLocation)
    }
}

@Suite struct ObjectPowerLossTests {
    typealias Operation = SimulatedFileSystem.Operation
    static let operations: [Operation] = [.write, .sync, .syncDirectory, .open, .truncate, .createDirectory, .remove, .rename]

    /// The power goes at each write, sync, directory sync, open... of a save; whatever the
    /// disk kept (only what was synced, everything, or a torn mix), the reopened store holds
    /// exactly the acknowledged saves, or those and the interrupted one, whole.
    @Test(arguments: ["single", "batch", "change", "delete", "batchDelete", "mixed"], ObjectFaults.seeds)
    func powerCutDuringASave(kind: String, seed: UInt64) throws {
        let (base, n) = try ObjectFaults.base(kind: kind, seed: seed)
        let save = ObjectSave(seed: seed, n: n)
        var cuts = 0
        for operation in Self.operations {
            for point in ObjectFaults.points() {
                let fs = base.clone()
                var saved = false
                do {
                    let container = try ObjectFaults.open(fs, seed: seed)
                    fs.cutPower(at: operation, n: point, mode: .dropUnsynced)
                    try save.apply(to: container, seed: seed)
                    saved = true
                } catch {}
                guard fs.isPoweredOff else { break }   // the save is done before call `point`
                cuts += 1
                let context = "seed \(seed) save \(n) (\(kind)), power cut at \(operation) \(point)"
                let images: [(String, SimulatedFileSystem)] = [
                    ("dropUnsynced", try #require(fs.powerLossImage)),
                    ("keepUnsynced", fs.powerLoss(.keepUnsynced)),
                    ("tearUnsynced", fs.powerLoss(.tearUnsynced(seed: UInt64(point)))),
                ]
                // A save that returned is durable with full durability; with deferred durability a
                // power cut may lose it (never corrupt it): the store then holds the saves before
                // it, which opening synced.
                let durable = saved && tortureDurability(seed: seed) == .full
                for (mode, image) in images {
                    ObjectFaults.expectIntact(image, seed: seed, acknowledged: durable ? n : n - 1, goOn: mode == "tearUnsynced", "\(context), \(mode)")
                }
            }
        }
        #expect(cuts > 0)
        print("ObjectPowerLossTests: seed \(seed) \(kind): \(cuts) power cuts, \(cuts * 3) images checked")
    }

    /// The power goes at each step of a compaction: the store holds the same saves after.
    @Test(arguments: ObjectFaults.seeds.prefix(ObjectFaults.full ? 20 : 1))
    func powerCutDuringACompaction(seed: UInt64) throws {
        let (base, n) = try ObjectFaults.base(kind: "mixed", seed: seed)
        var cuts = 0
        for operation in Self.operations {
            for point in ObjectFaults.points() {
                let fs = base.clone()
                do {
                    let container = try ObjectFaults.open(fs, seed: seed)
                    fs.cutPower(at: operation, n: point, mode: .tearUnsynced(seed: UInt64(point)))
                    try container.compact()
                } catch {}
                guard fs.isPoweredOff else { break }
                cuts += 1
                for (mode, image) in [("torn", try #require(fs.powerLossImage)), ("dropUnsynced", fs.powerLoss(.dropUnsynced))] {
                    ObjectFaults.expectIntact(image, seed: seed, acknowledged: n - 1, goOn: mode == "torn", "compaction, power cut at \(operation) \(point), \(mode)")
                }
            }
        }
        #expect(cuts > 0)
        print("ObjectPowerLossTests: seed \(seed) compaction: \(cuts) power cuts, \(cuts * 2) images checked")
    }
}

@Suite struct ObjectIOErrorTests {
    typealias Operation = SimulatedFileSystem.Operation

    /// ENOSPC or EIO at each write, sync, open (blob files), directory sync of a save: the
    /// save throws a typed error, nothing acknowledged is lost, and once the disk works again
    /// the same container saves (its store reopens its file by itself), durably.
    @Test(arguments: [SystemError.noSpace, SystemError.ioError], ["batch", "mixed", "single"])
    func failedWriteDuringASave(errno: Int32, kind: String) throws {
        for seed in ObjectFaults.full ? Array(UInt64(6)..<26) : [6] { try failedWriteDuringASave(errno: errno, kind: kind, seed: seed) }
    }

    func failedWriteDuringASave(errno: Int32, kind: String, seed: UInt64) throws {
        let (base, n) = try ObjectFaults.base(kind: kind, seed: seed)
        let save = ObjectSave(seed: seed, n: n)
        let expected: StoreError.Code = errno == SystemError.noSpace ? .diskFull : .ioFailure
        var faults = 0
        for operation in [Operation.write, .sync, .open, .syncDirectory, .createDirectory, .truncate] {
            for point in ObjectFaults.points() {
                let fs = base.clone()
                let container = try ObjectFaults.open(fs, seed: seed)
                fs.fail(operation, at: point, errno: errno)
                var saved = false
                do {
                    try save.apply(to: container, seed: seed)
                    saved = true
                } catch let error as StrataError {
                    let context = "\(kind) save \(n), errno \(errno) at \(operation) \(point)"
                    #expect(error.code == .storeFailure, "\(context): \(error)")
                    #expect((error.underlying as? StoreError)?.code == expected, "\(context): \(error)")
                    // Space freed: the same container saves again.
                    fs.disarm()
                    do {
                        try save.apply(to: container, seed: seed)
                        saved = true
                    } catch {
                        Issue.record("\(context): the save after the failure: \(error)")
                    }
                }
                if fs.faultsTriggered == 0 { break }    // the save is done before call `point`
                faults += 1
                withExtendedLifetime(container) {}
                let context = "\(kind) save \(n), errno \(errno) at \(operation) \(point)\(saved ? " (saved)" : "")"
                fs.disarm()
                ObjectFaults.expectIntact(fs.clone(), seed: seed, acknowledged: saved ? n : n - 1, goOn: true, "\(context), reopened as is")
                let durable = saved && tortureDurability(seed: seed) == .full
                ObjectFaults.expectIntact(fs.powerLoss(.dropUnsynced), seed: seed, acknowledged: durable ? n : n - 1, goOn: false, "\(context), then a power cut")
            }
        }
        #expect(faults > 0)
        print("ObjectIOErrorTests: seed \(seed) errno \(errno) \(kind): \(faults) failed calls")
    }

    /// The same during a compaction: it throws, and the store holds what it held.
    @Test(arguments: [SystemError.noSpace, SystemError.ioError])
    func failedWriteDuringACompaction(errno: Int32) throws {
        let seed: UInt64 = 6
        let (base, n) = try ObjectFaults.base(kind: "batch", seed: seed)
        var faults = 0
        for operation in [Operation.write, .sync, .open, .syncDirectory, .rename, .truncate, .remove] {
            for point in ObjectFaults.points() {
                let fs = base.clone()
                let container = try ObjectFaults.open(fs, seed: seed)
                fs.fail(operation, at: point, errno: errno)
                do { try container.compact() } catch let error as StrataError {
                    #expect(error.code == .storeFailure, "compaction, errno \(errno) at \(operation) \(point): \(error)")
                }
                if fs.faultsTriggered == 0 { break }
                faults += 1
                withExtendedLifetime(container) {}
                fs.disarm()
                ObjectFaults.expectIntact(fs.clone(), seed: seed, acknowledged: n - 1, goOn: true, "compaction, errno \(errno) at \(operation) \(point)")
            }
        }
        #expect(faults > 0)
        print("ObjectIOErrorTests: compaction errno \(errno): \(faults) failed calls")
    }
}
