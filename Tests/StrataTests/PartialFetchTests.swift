import Foundation
import Testing
import Strata

// `propertiesToFetch` and `relationshipKeyPathsForPrefetching`.
@Suite struct PartialFetchTests {
    @Test func propertiesToFetchLoadsThoseAndTheRestOnAccess() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        do {
            let context = ModelContext(container)
            let trip = Trip(name: "Lisbon", startDate: Date(timeIntervalSinceReferenceDate: 100), budget: 12.5)
            trip.tags = ["sea", "tram"]
            context.insert(trip)
            try context.save()
        }
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Trip>()
        descriptor.propertiesToFetch = [\.name]
        let trip = try #require(try context.fetch(descriptor).first)
        #expect(trip.name == "Lisbon")
        #expect(trip.tags == ["sea", "tram"], "a property left out loads when read")
        #expect(trip.budget == 12.5)
        #expect(!trip.hasChanges)
        trip.rating = 4
        try context.save()
        let again = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        #expect(again.rating == 4 && again.tags == ["sea", "tram"] && again.startDate == Date(timeIntervalSinceReferenceDate: 100))
    }

    /// The two lists share one box in the descriptor: each keeps its value when the other is
    /// set, and a copy of a descriptor does not see a change made to the original.
    @Test func theKeyPathListsAreValuesOfTheirOwn() {
        var descriptor = FetchDescriptor<Voyage>()
        #expect(descriptor.propertiesToFetch.isEmpty && descriptor.relationshipKeyPathsForPrefetching.isEmpty)
        descriptor.propertiesToFetch = [\.name]
        descriptor.relationshipKeyPathsForPrefetching = [\.ports]
        #expect(descriptor.propertiesToFetch == [\Voyage.name])
        #expect(descriptor.relationshipKeyPathsForPrefetching == [\Voyage.ports])
        let copy = descriptor
        descriptor.propertiesToFetch = []
        #expect(descriptor.propertiesToFetch.isEmpty)
        #expect(descriptor.relationshipKeyPathsForPrefetching == [\Voyage.ports])
        #expect(copy.propertiesToFetch == [\Voyage.name], "the copy keeps its list")
        descriptor.relationshipKeyPathsForPrefetching = []
        #expect(descriptor.propertiesToFetch.isEmpty && descriptor.relationshipKeyPathsForPrefetching.isEmpty)
        #expect(copy.relationshipKeyPathsForPrefetching == [\Voyage.ports])
    }

    /// `sortBy`'s count and `includePendingChanges` share one stored value: each keeps its
    /// value when the other changes, and the fetch sees both.
    @Test func sortAndPendingChangesAreValuesOfTheirOwn() throws {
        var descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])
        #expect(descriptor.includePendingChanges && descriptor.sortBy.count == 1)
        descriptor.includePendingChanges = false
        descriptor.sortBy.append(SortDescriptor(\.budget, order: .reverse))
        #expect(!descriptor.includePendingChanges && descriptor.sortBy.count == 2)
        descriptor.sortBy = []
        #expect(!descriptor.includePendingChanges && descriptor.sortBy.isEmpty)
        descriptor.includePendingChanges = true
        descriptor.sortBy = [SortDescriptor(\.name, order: .reverse)]
        #expect(descriptor.includePendingChanges && descriptor.sortBy.count == 1)

        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        let context = ModelContext(container)
        context.insert(Trip(name: "a", startDate: .now, budget: 1))
        try context.save()
        context.insert(Trip(name: "b", startDate: .now, budget: 2))
        #expect(try context.fetch(descriptor).map(\.name) == ["b", "a"], "sorted, with the pending insert")
        descriptor.includePendingChanges = false
        #expect(try context.fetch(descriptor).map(\.name) == ["a"], "the pending insert left out")
    }

    /// A descriptor of seven or more stored values (those of the structs inside it counted) is
    /// copied and destroyed by its caller through `FetchDescriptor<T>`'s value witnesses, and
    /// the caller's lookup of that metadata costs a fresh process a scan of every protocol
    /// conformance loaded (about 250k instructions, W8). A new stored property must fit.
    @Test func aDescriptorHasAtMostSixStoredValues() {
        func storedValues(_ value: Any) -> Int {
            let mirror = Mirror(reflecting: value)
            guard mirror.displayStyle == .struct, !mirror.children.isEmpty else { return 1 }
            return mirror.children.reduce(0) { $0 + storedValues($1.value) }
        }
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name != "" }, sortBy: [SortDescriptor(\.name)])
        descriptor.fetchLimit = 2
        descriptor.propertiesToFetch = [\.name]
        #expect(storedValues(descriptor) <= 6)
    }

    @Test func aChangedPartialObjectSavesWhatItDidNotLoad() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: dir.store()))
        do {
            let context = ModelContext(container)
            let trip = Trip(name: "Porto", startDate: .now, budget: 3)
            trip.address = Address(street: "Rua", city: "Porto")
            context.insert(trip)
            try context.save()
        }
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Trip>()
        descriptor.propertiesToFetch = [\.rating]
        let trip = try #require(try context.fetch(descriptor).first)
        trip.rating = 5        // set before anything else was read
        try context.save()
        let again = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        #expect(again.rating == 5 && again.name == "Porto" && again.address?.city == "Porto" && again.budget == 3)
    }

    @Test func prefetchingReadsTheRelatedRowsWithTheFetch() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Voyage.self, Port.self, configurations: ModelConfiguration(url: dir.store()))
        do {
            let context = ModelContext(container)
            for name in ["a", "b"] {
                let voyage = Voyage(name: name)
                context.insert(voyage)
                voyage.ports = (0..<3).map { Port(city: "\(name)\($0)") }
            }
            try context.save()
        }
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.name)])
        descriptor.relationshipKeyPathsForPrefetching = [\.ports]
        let voyages = try context.fetch(descriptor)
        // Another context deletes the ports in the store: the prefetched rows were read before.
        let other = ModelContext(container)
        try other.delete(model: Port.self)
        try other.save()
        #expect(voyages.map { $0.ports.map(\.city) } == [["a0", "a1", "a2"], ["b0", "b1", "b2"]])

        // Without prefetching, the ports are read when first accessed (and are gone now).
        let later = try ModelContext(container).fetch(FetchDescriptor<Voyage>(sortBy: [SortDescriptor(\.name)]))
        #expect(later.map { $0.ports.count } == [0, 0])
    }
}
