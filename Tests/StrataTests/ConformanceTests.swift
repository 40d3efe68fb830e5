// The object layer's conformance scenarios (Sources/StrataConformance), written once, run here
// on Strata's engine and on the two custom stores of CustomStoreSupport.swift. StrataPostgres
// runs the same scenarios on PostgreSQL.
import Foundation
import Testing
@testable import Strata
import StrataConformance
import StrataTestSupport

/// A folder for one test's stores, each verified when the test ends (`TestStore`).
private final class ScenarioFolder: TestStore, @unchecked Sendable {
    init() { super.init("conformance", report: { Issue.record(Comment(rawValue: $0)) }) }
    func file(_ scenario: String, _ ext: String) -> URL { url.appendingPathComponent("\(scenario)-\(UUID().uuidString).\(ext)") }
}

/// Why the custom stores of the tests skip some scenarios (Docs/CustomStores.md and
/// CustomStoreSupport.swift say the same).
private let customStoreLacks: [ConformanceCapability: String] = [
    .recordsHistory: "a custom store keeps no Strata history (Docs/CustomStores.md, History and migration)",
    .rejectsUniqueViolations: "unique constraints are the store's (Docs/CustomStores.md), and this test store checks none on updates",
    .detectsSaveConflicts: "the test store takes an update or deletion of an object another container deleted without a typed conflict (within one container the context finds it)",
    .resolvesCompoundUniqueValues: "unique constraints are the store's (Docs/CustomStores.md), and this test store resolves no compound one",
    .followsOtherWriters: "the test store is not an ObservableDataStore (Docs/CustomStores.md): a container's observers see the saves of its own contexts only",
]

/// Scenarios that show a bug of the custom-store bridge (Sources/Strata/CustomStores) on the
/// custom stores: run as known issues (the run says so, and says when one stops failing), or not
/// run at all where the bug traps and would stop the test process. Remove an entry when its bug
/// is fixed.
private struct BridgeBug {
    let stores: Set<String>
    let traps: Bool
    let reason: String
    init(_ reason: String, on stores: Set<String> = ["counting", "json"], traps: Bool = false) {
        self.stores = stores
        self.traps = traps
        self.reason = reason
    }
}

private let bridgeBugs: [String: BridgeBug] = [:]

/// The share of the randomized scenarios' cases the custom stores of the tests run. They answer
/// every fetch by reading, sorting and handing over all their objects, so those two scenarios took
/// three quarters of their time (about 100 of the suite's 140 seconds, run serially in a debug build); a
/// quarter of the cases still runs every phase of both (stored, pending, saved, reopened) through
/// the bridge. The engine runs them all here, and StrataPostgres on PostgreSQL.
private let customStoreRandomCaseShare = 0.25

@Suite struct ConformanceTests {
    /// Strata's engine: a store file per scenario; reopen is a new container on its url.
    private static func engine(_ folder: ScenarioFolder) -> ConformanceStore {
        ConformanceStore(name: "engine") { schema, scenario in
            let url = folder.file(scenario, "store")
            let open = { try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)]) }
            return ConformanceSession(container: try open(), reopen: open)
        }
    }

    /// The counting store: its objects live in its configuration, which a reopen shares. It
    /// resolves one unique property by name (`code`, as every scenario model spells it).
    private static func counting(integerKeys: Bool = false) -> ConformanceStore {
        var lacks = customStoreLacks
        lacks[.resolvesUniqueValuesAfterTheSavesUpdates] = "the counting store resolves a request's inserts against its objects as they were before the request, and applies the request's updates after its inserts"
        lacks[.stableIdentifiers] = "the counting store names itself with a new UUID in each container (CountingStore.identifier), so another container's identifiers name another store"
        lacks[.batchesReadOneSnapshot] = "the counting store fetches in batches (DataStoreBatchedFetching): fetch(_:batchSize:) reads each batch when it is first read, as the rows are then (BatchedEnumerationTests)"
        return ConformanceStore(name: "counting", lacks: lacks, randomCaseShare: customStoreRandomCaseShare) { schema, _ in
            // It keeps versions, as StrataPostgres does: every scenario runs with them checked.
            let configuration = CountingStoreConfiguration(schema: schema, uniqueProperty: "code", keepsVersions: true, integerKeys: integerKeys)
            // It declines batch deletions (it does not evaluate predicates): the context deletes
            // what they select row by row, reads before the save included.
            configuration.batchDeleteError.withLock { $0 = .preferInMemoryFilter }
            let open = { try ModelContainer(for: schema, configurations: [configuration] as [any DataStoreConfiguration]) }
            return ConformanceSession(container: try open(), reopen: open)
        }
    }

    /// The counting store, its bridge keeping no record from one read or save to the next
    /// (`DataStoreStorage.recordBudget` 0): every record the context asks for again is read
    /// from the store, so no scenario's answer may depend on what the bridge kept. Its keys
    /// are integers, as StrataPostgres's are: the bridge names the rows it reads by their keys
    /// and keeps no map of them (`BridgeRows`).
    private static func countingKeepingNothing() -> ConformanceStore {
        let store = counting(integerKeys: true)
        return ConformanceStore(name: "counting", lacks: store.lacks, randomCaseShare: store.randomCaseShare) { schema, scenario in
            let session = try store.fresh(schema, scenario)
            func keepingNothing(_ container: ModelContainer) -> ModelContainer {
                for handle in container.handles { handle.custom?.recordBudget = 0 }
                return container
            }
            return ConformanceSession(container: keepingNothing(session.container), reopen: { keepingNothing(try session.reopen()) })
        }
    }

    /// WWDC24's JSON-file store: a file per scenario; reopen is a new container on the file.
    private static func json(_ folder: ScenarioFolder) -> ConformanceStore {
        var lacks = customStoreLacks
        lacks[.resolvesUniqueValues] = "the JSON store does not resolve unique values (Docs/CustomStores.md, Unique constraints are the store's)"
        lacks[.exactDates] = "the JSON store encodes dates as ISO 8601 text (whole seconds), as WWDC24's sample does"
        lacks[.nonFiniteNumbers] = "the JSON store's JSONEncoder refuses NaN and infinities"
        lacks[.stableUnsortedOrder] = "the JSON store answers with a Dictionary's values, whose order changes from one read of the file to the next"
        lacks[.readsDuringSaves] = "the JSON store rewrites its whole file in place (Data.write without .atomic), so a read during a save can find half a file"
        return ConformanceStore(name: "json", lacks: lacks, randomCaseShare: customStoreRandomCaseShare) { schema, scenario in
            let url = folder.file(scenario, "json")
            let open = { try ModelContainer(for: schema, configurations: [JSONStoreConfiguration(schema: schema, fileURL: url)] as [any DataStoreConfiguration]) }
            return ConformanceSession(container: try open(), reopen: open)
        }
    }

    private func run(_ name: String, on store: ConformanceStore) async throws {
        guard let scenario = Conformance.scenario(named: name) else {
            Issue.record("no conformance scenario is named \(name)")
            return
        }
        // A cancelled test case shows as passed: the reason is printed too, so that no skip is silent.
        if let reason = store.skipReason(for: scenario.requires) {
            print("conformance: \(store.name) skips \(name): \(reason)")
            try Test.cancel("skipped: \(reason)")
        }
        guard let bug = bridgeBugs[name], bug.stores.contains(store.name) else { return try await perform(scenario, on: store) }
        if bug.traps {
            print("conformance: \(store.name) does not run \(name): known custom-store bridge bug: \(bug.reason)")
            try Test.cancel("not run: known custom-store bridge bug: \(bug.reason)")
        }
        await withKnownIssue("known custom-store bridge bug: \(bug.reason)") { try await perform(scenario, on: store) }
    }

    /// Runs the scenario (awaiting one that waits for events, so that it holds no thread while it
    /// waits); a failed check is an issue at the scenario's line.
    private func perform(_ scenario: ConformanceScenario, on store: ConformanceStore) async throws {
        do {
            try await scenario.run(store)
        } catch let failure as ConformanceFailure {
            Issue.record("\(store.name) / \(scenario.name): \(failure.message)",
                         sourceLocation: SourceLocation(fileID: "StrataConformance/\(URL(fileURLWithPath: failure.file).lastPathComponent)",
                                                        filePath: failure.file, line: failure.line, column: 1))
        }
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func engine(_ name: String) async throws {
        let folder = ScenarioFolder()
        try await run(name, on: Self.engine(folder))
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func countingStore(_ name: String) async throws {
        try await run(name, on: Self.counting())
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func countingStoreKeepingNoRecords(_ name: String) async throws {
        try await run(name, on: Self.countingKeepingNothing())
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func jsonStore(_ name: String) async throws {
        let folder = ScenarioFolder()
        try await run(name, on: Self.json(folder))
    }

    /// Every scenario has a unique name and says where it came from; the engine lacks nothing.
    @Test func theScenarioListIsWellFormed() {
        let names = Conformance.scenarios.map(\.name)
        #expect(Set(names).count == names.count, "scenario names are unique")
        #expect(Conformance.scenarios.allSatisfy { !$0.origin.isEmpty })
        #expect(Self.engine(ScenarioFolder()).lacks.isEmpty)
    }
}
