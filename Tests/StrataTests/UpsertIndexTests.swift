// An upsert replaces a stored row: the index keys the row was stored with come out of the
// indexes and the insert's keys go in. When the indexed attributes hold the same values the
// stored keys are taken to be the insert's (not computed again from the stored record): here
// upserts that keep them, change one indexed attribute or another, or both, in one save and
// across saves, with each index read back and the store verified.
import Foundation
import Testing
import Strata

@Suite struct UpsertIndexTests {
    private func day(_ n: Double) -> Date { Date(timeIntervalSinceReferenceDate: 700_000_000 + n * 86_400) }

    @Test func upsertsKeepOrMoveTheirIndexEntries() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        var ids: [UUID] = []
        for i in 0..<40 {
            let trip = Trip(name: "trip \(i)", startDate: day(Double(i)))
            trip.rating = i % 5
            ids.append(trip.id)
            context.insert(trip)
        }
        try context.save()
        // Expected values by id, changed as the upserts change them.
        var expected: [UUID: (name: String, start: Date, rating: Int)] = [:]
        for (i, id) in ids.enumerated() { expected[id] = ("trip \(i)", day(Double(i)), i % 5) }
        for round in 0..<3 {
            let upserts = ModelContext(container)
            for (i, id) in ids.enumerated() where (i + round) % 3 != 0 {
                let old = expected[id]!
                // i % 4: 0 keeps both indexed values, 1 moves the date, 2 the rating, 3 both.
                let start = i % 4 == 1 || i % 4 == 3 ? day(Double(100 * (round + 1) + i)) : old.start
                let rating = i % 4 >= 2 ? (old.rating + 1) % 7 : old.rating
                let trip = Trip(name: "trip \(i) round \(round)", startDate: start)
                trip.id = id
                trip.rating = rating
                upserts.insert(trip)
                expected[id] = (trip.name, start, rating)
            }
            try upserts.save()
            let check = ModelContext(container)
            #expect(try check.fetchCount(FetchDescriptor<Trip>()) == ids.count)
            for (id, value) in expected {
                let start = value.start
                let byDate = try check.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate == start }))
                #expect(byDate.map(\.id) == [id], "round \(round)")
                #expect(byDate.first?.name == value.name)
            }
            for rating in 0..<7 {
                let byRating = try check.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.rating == rating }))
                #expect(Set(byRating.map(\.id)) == Set(expected.filter { $0.value.rating == rating }.keys), "round \(round)")
            }
            #expect(try container.stores.first?.verify().isClean == true)
        }
    }
}
