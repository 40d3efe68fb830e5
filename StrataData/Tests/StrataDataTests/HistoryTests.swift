import Foundation
import Testing
import StrataData

// History read as SwiftData code reads it (WWDC24 "Track model changes with SwiftData
// history"), on @Model classes: tokens kept between fetches, the switch over changes with a
// cast to the model's change type, updated attributes compared with key paths, the
// tombstone's subscript; and a ResultsObserver on @Model objects.

enum HistoryExample {
    @Model final class Trip {
        @Attribute(.unique) var code: String
        @Attribute(.preserveValueOnDeletion) var name: String
        var destination: String

        init(code: String, name: String, destination: String) {
            self.code = code
            self.name = name
            self.destination = destination
        }
    }
}

actor TripWatcher {
    private var observer: ResultsObserver<HistoryExample.Trip, Never>?
    func start(_ container: ModelContainer) throws {
        observer = try ResultsObserver(fetchDescriptor: FetchDescriptor<HistoryExample.Trip>(sortBy: [SortDescriptor(\.code)]),
                                       modelContainer: container)
    }
    func names() -> [String] { observer?.results.map(\.name) ?? [] }
}

@Suite struct SwiftDataHistoryTests {
    typealias Trip = HistoryExample.Trip

    @Test func theSwiftDataPatternReadsEveryChange() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        context.author = "widget"
        let trip = Trip(code: "L", name: "Lisbon weekend", destination: "Lisbon")
        context.insert(trip)
        try context.save()
        let saved = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token)

        trip.destination = "Porto"
        try context.save()
        context.delete(trip)
        try context.save()

        var historyDescriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > saved })
        historyDescriptor.fetchLimit = 10
        var seen: [String] = []
        for transaction in try context.fetchHistory(historyDescriptor) {
            #expect(transaction.author == "widget")
            for change in transaction.changes {
                switch change {
                case .insert(let historyInsert as DefaultHistoryInsert<Trip>):
                    seen.append("insert \(historyInsert.changedPersistentIdentifier.rowID)")
                case .update(let historyUpdate as DefaultHistoryUpdate<Trip>):
                    for attribute in historyUpdate.updatedAttributes where attribute == \Trip.destination {
                        seen.append("destination changed")
                    }
                case .delete(let historyDelete as DefaultHistoryDelete<Trip>):
                    seen.append("deleted \(historyDelete.tombstone[\.name] as? String ?? "?")")
                default:
                    break
                }
            }
        }
        #expect(seen == ["destination changed", "deleted Lisbon weekend"])
    }

    @Test func aResultsObserverFollowsAnotherContext() async throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let watcher = TripWatcher()
        try await watcher.start(container)
        let context = ModelContext(container)
        context.insert(Trip(code: "B", name: "Berlin", destination: "Berlin"))
        context.insert(Trip(code: "A", name: "Athens", destination: "Athens"))
        try context.save()
        var names: [String] = []
        for _ in 0..<2000 where names != ["Athens", "Berlin"] {
            names = await watcher.names()
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(names == ["Athens", "Berlin"])
    }
}
