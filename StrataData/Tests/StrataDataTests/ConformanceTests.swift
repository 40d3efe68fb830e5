// The object layer's conformance scenarios (the root's Sources/StrataConformance), run on a
// store file with the scenarios' models spelled as SwiftData writes them
// (Sources/StrataDataConformance/Models.swift): one copy of each scenario, two spellings.
import Foundation
import Testing
import StrataData
import StrataDataConformance

@Suite struct ConformanceTests {
    /// A store file per scenario, in a folder removed when the test ends; reopen is a new
    /// container on its url.
    private static func engine(_ folder: TemporaryDirectory) -> ConformanceStore {
        let base = folder.url
        return ConformanceStore(name: "engine, @Model") { schema, scenario in
            let url = base.appendingPathComponent("\(scenario)-\(UUID().uuidString).store")
            let open = { try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)]) }
            return ConformanceSession(container: try open(), reopen: open)
        }
    }

    @Test(arguments: Conformance.scenarios.map(\.name))
    func engine(_ name: String) async throws {
        let folder = TemporaryDirectory()
        defer { withExtendedLifetime(folder) {} }
        let store = Self.engine(folder)
        let scenario = try #require(Conformance.scenario(named: name))
        #expect(store.skipReason(for: scenario.requires) == nil, "the engine lacks nothing")
        do {
            try await scenario.run(store)
        } catch let failure as ConformanceFailure {
            Issue.record("\(store.name) / \(scenario.name): \(failure.message)",
                         sourceLocation: SourceLocation(fileID: "StrataConformance/\(URL(fileURLWithPath: failure.file).lastPathComponent)",
                                                        filePath: failure.file, line: failure.line, column: 1))
        }
    }
}
