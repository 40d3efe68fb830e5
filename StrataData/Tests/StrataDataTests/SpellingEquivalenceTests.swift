import Foundation
import Testing
import Strata       // both imports, as a file that ports a model at a time may have them:
import StrataData   // `@Attribute` is still StrataData's macro (else `@Model` would not compile)

// `@Model` writes what a hand-written model declares: the same storages in the same order, so
// the two spellings of one model read and write the same stores, with no migration between
// them. (In a file that imports StrataData, `@Attribute` is the macro, also when the file
// imports Strata too; the property wrappers are spelled `@Strata.Attribute`.)

enum HandSpelled {
    final class Trip: PersistentModel {
        @Strata.Attribute(.unique) var id: UUID
        @Strata.Attribute var name: String
        @Strata.Attribute var budget: Double? = nil
        @Strata.Attribute(originalName: "when") var startDate: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Strata.Attribute(.externalStorage) var notes: Data? = nil
        @Strata.Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
        @Strata.Transient var isExpanded = false
        init() {}
        init(name: String) { id = UUID(); self.name = name }
        static var indexes: [[PartialKeyPath<Trip>]] { [[\.name]] }
    }

    final class Stop: PersistentModel {
        @Strata.Attribute var city: String = ""
        @Strata.Relationship var trip: Trip? = nil
        init() {}
        init(city: String) { self.city = city }
    }
}

enum MacroSpelled {
    @Model final class Trip {
        #Index<Trip>([\.name])

        @Attribute(.unique) var id: UUID
        var name: String
        var budget: Double?
        @Attribute(originalName: "when") var startDate: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Attribute(.externalStorage) var notes: Data?
        @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
        @Transient var isExpanded = false
        init(name: String) { id = UUID(); self.name = name }
    }

    @Model final class Stop {
        var city: String = ""
        var trip: Trip?
        init(city: String) { self.city = city }
    }
}

@Suite struct SpellingEquivalenceTests {
    @Test func aStoreWrittenWithTheMacroOpensWithTheHandSpellingUnchanged() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: MacroSpelled.Trip.self, MacroSpelled.Stop.self, configurations: config))
            let trip = MacroSpelled.Trip(name: "Lisbon")
            trip.budget = 12.5
            trip.notes = Data("long notes".utf8)
            trip.stops = [MacroSpelled.Stop(city: "Lisboa"), MacroSpelled.Stop(city: "Sintra")]
            context.insert(trip)
            try context.save()
        }
        let bytes = try Data(contentsOf: config.url)
        let context = ModelContext(try ModelContainer(for: HandSpelled.Trip.self, HandSpelled.Stop.self, configurations: config))
        let trips = try context.fetch(FetchDescriptor<HandSpelled.Trip>(predicate: #Predicate { $0.name == "Lisbon" }))
        #expect(trips.map(\.budget) == [12.5])
        #expect(trips.first?.notes == Data("long notes".utf8))
        #expect(trips.first?.stops.map(\.city) == ["Lisboa", "Sintra"])
        #expect(try Data(contentsOf: config.url) == bytes, "no migration: the schemas are the same")
    }

    @Test func aStoreWrittenByHandOpensWithTheMacroSpellingUnchanged() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: HandSpelled.Trip.self, HandSpelled.Stop.self, configurations: config))
            let trip = HandSpelled.Trip(name: "Oslo")
            trip.stops = [HandSpelled.Stop(city: "Bergen")]
            context.insert(trip)
            try context.save()
        }
        let bytes = try Data(contentsOf: config.url)
        let context = ModelContext(try ModelContainer(for: MacroSpelled.Trip.self, MacroSpelled.Stop.self, configurations: config))
        let stops = try context.fetch(FetchDescriptor<MacroSpelled.Stop>())
        #expect(stops.map(\.city) == ["Bergen"])
        #expect(stops.first?.trip?.name == "Oslo" && stops.first?.trip?.budget == nil)
        #expect(try Data(contentsOf: config.url) == bytes, "no migration: the schemas are the same")
    }
}
