// The records a custom store's bridge keeps between reads and saves are bounded
// (`DataStoreStorage.recordBudget`): a long-lived process does not keep every row it ever read
// or saved, and a record let go is read from the store again when it is needed.
import Foundation
import Testing
@testable import Strata

@Suite struct BridgeRecordBudgetTests {
    private static let budget = 8_192

    /// The records the bridge keeps of `model`, and their bytes as it counts them.
    private func kept(_ bridge: DataStoreStorage, _ model: String) -> (records: Int, bytes: Int) {
        bridge.withState { ($0.tables[model]?.records.count ?? 0, $0.kept.bytes) }
    }

    @Test func theBridgeKeepsRecordsUpToItsBudgetAndReadsTheOthersFromTheStore() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]))
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let bridge = try #require(container.handles.compactMap(\.custom).first)
        #expect(bridge.recordBudget == DataStoreStorage.defaultRecordBudget)
        bridge.recordBudget = Self.budget
        let context = ModelContext(container)
        let journeys = (0..<400).map { Journey("journey \($0) " + String(repeating: "x", count: 100), day: $0) }
        for journey in journeys { context.insert(journey) }
        try context.save()
        // A save keeps the records it wrote (more than the budget: what one operation keeps
        // stays while it runs)...
        #expect(kept(bridge, "Journey").records == 400)
        // ...and the next save or read lets the oldest go, down to the budget, first.
        let other = ModelContext(container)
        other.insert(Journey("one more", day: 1))
        try other.save()
        let after = kept(bridge, "Journey")
        #expect(after.records >= 1 && after.records < 400 / 4)
        #expect(after.bytes <= Self.budget + 200 + BridgeState.KeptRecords.overhead)

        // Objects whose records went are written as ever. An update reads the stored values
        // from the store...
        let fetches = configuration.calls.withLock { $0["fetch", default: 0] }
        journeys[0].name = "renamed"
        try context.save()
        #expect(configuration.calls.withLock { $0["fetch", default: 0] } > fetches)
        // ...and so does a deletion, whose stored values go with it (as a tombstone would).
        other.insert(Journey("and another", day: 2))
        try other.save()
        #expect(kept(bridge, "Journey").records < 400 / 4)
        context.delete(journeys[1])
        try context.save()
        let deleted = try #require(configuration.lastDeleted.withLock { $0 }.first)
        #expect((deleted["name"].map { "\($0)" } ?? "").contains("journey 1 "))

        let stored = try ModelContext(container).fetch(FetchDescriptor<Journey>())
        #expect(stored.count == 401)
        #expect(stored.contains { $0.name == "renamed" })
        #expect(!stored.contains { $0.name.hasPrefix("journey 0 ") || $0.name.hasPrefix("journey 1 ") })
        #expect(stored.first { $0.name.hasPrefix("journey 2 ") }?.start == Date(timeIntervalSince1970: 2 * 86_400))
    }

    @Test func recordsLetGoOfTheObjectsASaveChangesOrDeletesAreReadWithOneFetch() throws {
        let configuration = CountingStoreConfiguration(schema: Schema([Journey.self, Leg.self]), answersIdentifierFetches: true)
        let container = try ModelContainer(for: Journey.self, Leg.self, configurations: configuration)
        let bridge = try #require(container.handles.compactMap(\.custom).first)
        bridge.recordBudget = 0
        let context = ModelContext(container)
        let journeys = (0..<60).map { Journey("journey \($0)", day: $0) }
        for journey in journeys { context.insert(journey) }
        try context.save()
        // Another save lets every record kept before it go (a budget of 0).
        let other = ModelContext(container)
        other.insert(Journey("one more", day: 1))
        try other.save()
        #expect(kept(bridge, "Journey").records == 1)

        for journey in journeys.prefix(40) { journey.name += " changed" }
        for journey in journeys.suffix(20) { context.delete(journey) }
        try context.save()
        // One fetch of the 60 rows, not one a row.
        #expect(configuration.count("fetchByIdentifiers") == 1)
        #expect(configuration.askedIdentifiers.withLock { $0 }.first?.count == 60)
        #expect(configuration.lastDeleted.withLock { $0 }.count == 20)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Journey>())
        #expect(stored.count == 41)
        #expect(stored.filter { $0.name.hasSuffix(" changed") }.count == 40)
    }
}
