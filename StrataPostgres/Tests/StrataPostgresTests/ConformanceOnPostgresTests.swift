// The object layer's conformance scenarios (the root package's StrataConformance, run there on
// the engine and on custom stores) on PostgreSQL: a namespace of its own per scenario; a reopen
// is a new container on the same namespace (as another process would open it).
import Foundation
import Testing
import Strata
import StrataConformance
import StrataPostgres

@Suite struct ConformanceOnPostgresTests {
    /// What PostgreSQL does not do, with the reason (none of it is silent).
    static let lacks: [ConformanceCapability: String] = [
        .nulInStrings: "PostgreSQL's text cannot hold U+0000: such a save fails with a typed error and saves nothing (PostgresStoreTests.aStringWithNULIsRefusedWithATypedError)",
        .batchesReadOneSnapshot: "fetch(_:batchSize:) reads the identifiers, then each batch when it is first read, as the rows are then, so that memory holds one batch (PostgresStoreTests.fetchWithABatchSizeReadsOneBatchAtATime)",
    ]

    static func postgres() throws -> ConformanceStore {
        let url = try TestServer.url()
        return ConformanceStore(name: "postgres", lacks: lacks) { schema, scenario in
            let namespace = TestServer.namespace(scenario)
            let open = {
                try ModelContainer(for: schema, configurations: [PostgresConfiguration(schema: schema, url: url, namespace: namespace)] as [any DataStoreConfiguration])
            }
            return ConformanceSession(container: try open(), reopen: open)
        }
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func postgres(_ name: String) async throws {
        let store = try Self.postgres()
        guard let scenario = Conformance.scenario(named: name) else {
            Issue.record("no conformance scenario is named \(name)")
            return
        }
        if let reason = store.skipReason(for: scenario.requires) {
            print("conformance: postgres skips \(name): \(reason)")
            try Test.cancel("skipped: \(reason)")
        }
        do {
            try await scenario.run(store)
        } catch let failure as ConformanceFailure {
            Issue.record("postgres / \(name): \(failure.message)",
                         sourceLocation: SourceLocation(fileID: "StrataConformance/\(URL(fileURLWithPath: failure.file).lastPathComponent)",
                                                        filePath: failure.file, line: failure.line, column: 1))
        }
    }
}
