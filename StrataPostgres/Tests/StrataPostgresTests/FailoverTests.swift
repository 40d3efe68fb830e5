// A failover, as Docs/Postgres.md ("Replicas") describes it, on a primary and standby of the
// test's own: two machines' containers on one URL that lists both servers with
// target_session_attrs=read-write; the standby is promoted and the old primary stopped. What was
// committed before stays, the containers go on saving and reading on the new primary without
// being made anew (a save under way may fail with a typed error; the next one works), and a
// store's observers follow the other machine's saves there.
import Foundation
import Testing
import Strata
@testable import StrataPostgres

@Suite struct FailoverTests {
    /// A save, tried again once if the first attempt met the failover (a connection the
    /// stopped server ended): that first error must be a typed one.
    private func save(_ container: ModelContainer, _ id: String) throws {
        func attempt() throws {
            let context = ModelContext(container)
            context.insert(PGBird(id, "wren"))
            try context.save()
        }
        do { try attempt() } catch let error as StrataError {
            print("failover: the save of \(id) met the failover: \(error.code): \(error.message)")
            try attempt()
        }
    }

    private func ids(_ container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)])).map(\.id)
    }

    @Test func containersFollowTheNewPrimaryAfterAFailover() throws {
        let pair = try TestServer.newPair()
        let (p, s) = (pair.primary.port ?? 5432, pair.standby.port ?? 5432)
        let url = URL(string: "postgresql://strata:strata@/strata?host=127.0.0.1,127.0.0.1&port=\(p),\(s)&target_session_attrs=read-write")!
        let configuration = PostgresConfiguration(schema: Schema([PGBird.self]), url: url, namespace: "failover")
        let here = try ModelContainer(for: PGBird.self, configurations: configuration)
        let elsewhere = try ModelContainer(for: PGBird.self, configurations: configuration)
        let watcher = try PostgresStore(configuration, migrationPlan: nil)
        try save(here, "a-before")
        try save(elsewhere, "b-before")
        #expect(try ids(here) == ["a-before", "b-before"])

        // The standby has replayed both saves (a read-only container on it sees them).
        let standbyOnly = PostgresConfiguration(schema: Schema([PGBird.self]), url: pair.standby, namespace: "failover", allowsSave: false)
        let reader = try ModelContainer(for: PGBird.self, configurations: standbyOnly)
        #expect(try eventually { try ids(reader) == ["a-before", "b-before"] }, "the standby never replayed the saves")

        try TestServer.promote(pair.standbyDir)
        try TestServer.stop(pair.primaryDir)

        // Both containers go on, on the new primary, with what was committed before.
        try save(here, "a-after")
        try save(elsewhere, "b-after")
        #expect(try ids(here) == ["a-after", "a-before", "b-after", "b-before"])
        #expect(try ids(elsewhere) == ["a-after", "a-before", "b-after", "b-before"])
        #expect(try ids(reader) == ["a-after", "a-before", "b-after", "b-before"], "the promoted server is the one the read-only container reads")

        // The watcher's observers follow the other machine's saves on the new primary.
        #expect(try eventually { _ = try watcher.changeToken(); return watcher.isListening }, "the watcher never listened again")
        let before = try watcher.changeToken()
        try save(elsewhere, "b-later")
        #expect(try eventually { try watcher.changeToken() != before }, "the watcher's token stayed at \(before)")
        #expect(try ids(here).contains("b-later"))
    }
}
