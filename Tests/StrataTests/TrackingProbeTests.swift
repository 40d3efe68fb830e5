import Foundation
import Observation
import Testing
@testable import Strata

/// A model whose discovery (its `init()`, run by the entity registry) can be held open.
final class SlowlyDiscovered: PersistentModel {
    @Attribute var name: String = ""
    init() { SlowlyDiscovered.gate.holdFirstDiscovery() }
    init(name: String) { self.name = name }

    static let gate = DiscoveryGate()
}

/// Holds the first discovery of `SlowlyDiscovered` until the test lets it go.
final class DiscoveryGate: @unchecked Sendable {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var held = false

    func holdFirstDiscovery() {
        let first = lock.withLock { defer { held = true }; return !held }
        guard first else { return }
        started.signal()
        proceed.wait()
    }
}

/// `TrackingProbe` answers whether a read is tracked, and objects get a registrar only then
/// (ModelBacking.observe). If Observation ever stopped revealing a tracked access, these fail
/// before any application's observers silently stop firing.
@Suite struct TrackingProbeTests {
    private func container() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, Author.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func theProbeSeesTrackingOnlyInsideIt() {
        #expect(!TrackingProbe.isTracking())
        var inside = false
        withObservationTracking { inside = TrackingProbe.isTracking() } onChange: {}
        #expect(inside)
        #expect(!TrackingProbe.isTracking())
    }

    @Test func untrackedReadsMakeNoRegistrarAndATrackedReadDoes() throws {
        let container = try container()
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Évora", startDate: .now))
        try setup.save()
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        _ = trip.name
        _ = trip.budget
        #expect(trip.backing?.observers == nil, "nobody tracked a read")
        final class Count: @unchecked Sendable { var value = 0 }
        let fired = Count()
        withObservationTracking { _ = trip.name } onChange: { fired.value += 1 }
        #expect(trip.backing?.observers != nil)
        trip.budget = 12
        #expect(fired.value == 0, "another property")
        trip.name = "Evora"
        #expect(fired.value == 1, "an object read untracked first is still observed once tracked")
    }

    /// A new object made on one thread while another thread is discovering its model is still
    /// given a backing, so reading it under tracking observes it.
    @Test func anObjectMadeWhileAnotherThreadDiscoversItsModelIsObserved() async throws {
        let gate = SlowlyDiscovered.gate
        let discovering = Thread { _ = try? EntityRegistry.shared.discover(SlowlyDiscovered.self) }
        discovering.start()
        gate.started.wait()
        defer { gate.proceed.signal() }
        let note = SlowlyDiscovered(name: "a")
        final class Count: @unchecked Sendable { var value = 0 }
        let fired = Count()
        withObservationTracking { _ = note.name } onChange: { fired.value += 1 }
        #expect(note.backing != nil, "the object was attached while its model was being discovered elsewhere")
        note.name = "b"
        #expect(fired.value == 1)
    }
}
