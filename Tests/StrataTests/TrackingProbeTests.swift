import Foundation
import Observation
import Testing
@testable import Strata

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
}
