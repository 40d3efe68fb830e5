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

    /// Calls `body` until it returns true, or gives up after `patience` seconds (generous: the
    /// wait is for something that happens in milliseconds, on a machine that may be very busy).
    private func eventually(patience: TimeInterval = 120, _ body: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(patience)
        while Date() < deadline {
            if try body() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return false
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
}
