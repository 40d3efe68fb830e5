// The server drops the store's connections (a restart, a failover, a proxy's idle timeout;
// here an administrator's `pg_terminate_backend`): what was committed stays, each operation
// under way either finishes or gets a typed error, the next ones work, and observers keep
// following other writers.
import Foundation
import Testing
import Strata
@testable import StrataPostgres

@Suite struct LostConnectionTests {
    /// Ends every connection of the server whose last statement named `namespace` (the
    /// store's pooled connections and its listener; the fixture's own session is spared), and
    /// waits until each backend has exited. Returns how many it ended.
    @discardableResult
    private func dropConnections(of fixture: PGFixture, matching pattern: String? = nil) throws -> Int {
        let like = pattern ?? "%\(fixture.namespace)%"
        let rows = try fixture.sql("""
            SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 60000))::text FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND backend_type = 'client backend' AND query LIKE $1
            """, [like])
        return Int(rows.first?.first.flatMap { $0 } ?? "") ?? 0
    }

    /// The store's LISTEN connection dropped: a save committed meanwhile still changes its
    /// token (it reads the save counter until it listens again), and once it listens again, a
    /// notification wakes it as before. Before, the token stopped for good, and every
    /// `ResultsObserver` and `historyChanges()` of the process with it, without an error.
    @Test func aDroppedListenerStillSeesOtherWritersSaves() throws {
        let fixture = try PGFixture([PGBird.self])
        let watcher = try PostgresStore(fixture.configuration, migrationPlan: nil)
        let writer = try fixture.container()
        let listen = "LISTEN \"\(PostgresStore.channel(of: fixture.namespace))\""
        func save(_ name: String) throws {
            let context = ModelContext(writer)
            context.insert(PGBird(name, "wren"))
            try context.save()
        }
        #expect(watcher.isListening)
        for round in 1...3 {
            // Dropped, then a save before the watcher asks: its notification reaches no one.
            let before = try watcher.changeToken()
            #expect(try eventually { try dropConnections(of: fixture, matching: listen) >= 1 }, "round \(round)")
            try save("unheard \(round)")
            #expect(try eventually { try watcher.changeToken() != before }, "round \(round): the watcher's token stayed at \(before)")
            // Listening again (it tries as it is asked): the next save wakes it by its notification.
            #expect(try eventually { _ = try watcher.changeToken(); return watcher.isListening }, "round \(round): never listened again")
            let listening = try watcher.changeToken()
            try save("heard \(round)")
            #expect(try eventually { try watcher.changeToken() != listening }, "round \(round): no notification after listening again")
        }
    }

    /// The pool's connections dropped while idle: a fetch reads through a new connection, and
    /// a save is saved, or fails with a typed error and is then saved by the next `save()`.
    /// Nothing committed before is lost.
    @Test func droppedPoolConnectionsLoseNothingAndTheNextSaveWorks() throws {
        let fixture = try PGFixture([PGBird.self, PGTrip.self, PGStop.self])
        let container = try fixture.container()
        let context = ModelContext(container)
        for i in 0..<5 { context.insert(PGBird("b\(i)", "wren")) }
        let trip = PGTrip("T1", "Lisboa")
        trip.stops = [PGStop("Belém"), PGStop("Alfama")]
        context.insert(trip)
        try context.save()
        // Several connections in the pool: fetches on threads at once.
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            _ = try? ModelContext(container).fetchCount(FetchDescriptor<PGBird>())
        }
        for round in 1...3 {
            #expect(try dropConnections(of: fixture) >= 1, "round \(round): no connection of the store was found")
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGBird>()) == 4 + round, "round \(round)")
            try dropConnections(of: fixture)
            let saving = ModelContext(container)
            saving.insert(PGBird("new \(round)", "robin"))
            var failures: [String] = []
            var saved = false
            for _ in 0..<12 where !saved {
                do {
                    try saving.save()
                    saved = true
                } catch let error as StrataError {
                    failures.append("\(error)")
                } catch {
                    Issue.record("round \(round): an untyped error \(error)")
                    break
                }
            }
            #expect(saved, "round \(round): \(failures)")
            #expect(failures.count <= 1, "round \(round): more than one failed save: \(failures)")
            try dropConnections(of: fixture)
            let fresh = ModelContext(container)
            #expect(try fresh.fetchCount(FetchDescriptor<PGBird>()) == 5 + round, "round \(round)")
            let stops = try fresh.fetch(FetchDescriptor<PGTrip>()).first?.stops.map(\.place).sorted()
            #expect(stops == ["Alfama", "Belém"], "round \(round)")
        }
    }

    /// A statement sent on a connection the server has already closed (in a transaction,
    /// between two statements) gets a typed error, sent by `execute`, by `query` and ahead by
    /// `rowsSoon` alike, and the next transaction runs on a new connection. Before,
    /// postgres-nio dropped the statement unsent and its answer was waited for forever.
    @Test func aStatementOnAClosedConnectionThrowsInsteadOfWaitingForever() throws {
        let fixture = try PGFixture([PGBird.self])
        let session = PostgresSession(configuration: try fixture.configuration.connectionConfiguration(), location: "test")
        let sends: [(String, (SQLConnection) throws -> Void)] = [
            ("execute", { try $0.execute("SELECT 2") }),
            ("query", { try $0.query("SELECT $1::text", ["x"]) }),
            ("rowsSoon", { _ = try $0.rowsSoon("SELECT 3").wait() }),
        ]
        for (name, send) in sends {
            let marker = "strata_closed_\(name)"
            var closed = false
            do {
                try session.transaction(retries: 0) { c in
                    try c.execute("SELECT '\(marker)'")
                    #expect(try dropConnections(of: fixture, matching: "%\(marker)%") == 1, "\(name)")
                    closed = eventually { c.raw.isClosed }
                    try send(c)
                }
                Issue.record("\(name): a statement on a closed connection succeeded")
            } catch let error as StrataError {
                #expect(error.code == .storeFailure, "\(name): \(error)")
                #expect(error.message.contains("lost its connection"), "\(name): \(error.message)")
            }
            #expect(closed, "\(name): the client never saw its connection close")
            // The next transaction runs on a new connection.
            #expect(try session.transaction { try $0.query("SELECT 'again'") } == [["again"]], "\(name)")
        }
    }

    /// The connection of an enumeration under way dropped between two batches: the
    /// enumeration throws a typed error (the batches it handed over stay handed over, none is
    /// handed twice), and the next enumeration reads every object on a new connection.
    @Test func anEnumerationWhoseConnectionDropsThrowsATypedErrorAndTheNextOneWorks() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let context = ModelContext(container)
        for i in 0..<40 { context.insert(PGBird(String(format: "b%02d", i), "wren")) }
        try context.save()
        // (In the order saved: a sort on text is made in memory, after one fetch of all.)
        let reader = ModelContext(container)
        var seen: [String] = []
        var dropped = 0
        do {
            try reader.enumerate(FetchDescriptor<PGBird>(), batchSize: 5) { bird in
                seen.append(bird.id)
                if seen.count == 7 { dropped = try dropConnections(of: fixture, matching: "%strata_batches%") }
            }
            Issue.record("the enumeration ended without an error after \(seen.count) objects (\(dropped) connections dropped)")
        } catch let error as StrataError {
            #expect(dropped >= 1)
            #expect(seen.count >= 7 && seen.count < 40, "\(seen.count) objects before \(error)")
            #expect(seen == (0..<seen.count).map { String(format: "b%02d", $0) }, "an object handed twice or skipped")
        } catch {
            Issue.record("an untyped error: \(error)")
        }
        var again: [String] = []
        try ModelContext(container).enumerate(FetchDescriptor<PGBird>(), batchSize: 5) { again.append($0.id) }
        #expect(again == (0..<40).map { String(format: "b%02d", $0) })
    }
}
