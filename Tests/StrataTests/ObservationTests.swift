import Foundation
import Observation
import Testing
import Strata

/// Counts how often `withObservationTracking`'s onChange fires for what `read` reads.
private final class Fired: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in lock.withLock { count += 1 } }
    }
}

@Suite struct ObservationTests {
    private func container() throws -> ModelContainer {
        try ModelContainer(for: Trip.self, Author.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func settingAPersistedPropertyOfAFetchedObjectFires() throws {
        let container = try container()
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Lisbon", startDate: .now))
        setup.insert(Trip(name: "Porto", startDate: .now))
        try setup.save()
        let context = ModelContext(container)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        let lisbon = trips[0], porto = trips[1]
        let name = Fired { _ = lisbon.name }
        let other = Fired { _ = porto.name }
        let budget = Fired { _ = lisbon.budget }
        lisbon.name = "Lisboa"
        #expect(name.value == 1)
        #expect(other.value == 0, "another object's property is not observed")
        #expect(budget.value == 0, "another property is not observed")
        #expect(lisbon.hasChanges)
    }

    @Test func settingATransientPropertyFires() throws {
        let context = ModelContext(try container())
        let trip = Trip(name: "Faro", startDate: .now)
        context.insert(trip)
        let expanded = Fired { _ = trip.isExpanded }
        trip.isExpanded = true
        #expect(expanded.value == 1)
        #expect(trip.isExpanded)
    }

    @Test func aNewObjectIsObservedBeforeItIsInserted() throws {
        let trip = Trip(name: "Braga", startDate: .now)
        let name = Fired { _ = trip.name }
        trip.name = "Guimarães"
        #expect(name.value == 1)
        let context = ModelContext(try container())
        context.insert(trip)
        let again = Fired { _ = trip.name }
        trip.name = "Braga"
        #expect(again.value == 1)
    }

    @Test func rollbackRestoringAValueFires() throws {
        let container = try container()
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Evora", startDate: .now))
        try setup.save()
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        trip.name = "Évora"
        let name = Fired { _ = trip.name }
        context.rollback()
        #expect(name.value == 1)
        #expect(trip.name == "Evora")
    }

    @Test func aRelationshipChangeFiresOnBothSides() throws {
        let context = ModelContext(try container())
        let first = Author(name: "Saramago"), second = Author(name: "Pessoa")
        let book = Book(title: "Ensaio")
        context.insert(first)
        context.insert(second)
        first.books = [book]
        try context.save()
        let firstBooks = Fired { _ = first.books }
        let secondBooks = Fired { _ = second.books }
        let author = Fired { _ = book.author }
        book.author = second
        #expect(author.value == 1, "the side that was set")
        #expect(secondBooks.value == 1, "the new other side")
        #expect(firstBooks.value == 1, "the old other side")
        #expect(second.books.map(\.title) == ["Ensaio"])
        #expect(first.books.isEmpty)
    }

    @Test func aRelationshipSetOnTheToManySideFiresOnTheToOneSide() throws {
        let context = ModelContext(try container())
        let author = Author(name: "Eça")
        let book = Book(title: "Os Maias")
        context.insert(author)
        context.insert(book)
        try context.save()
        let side = Fired { _ = book.author }
        author.books = [book]
        #expect(side.value == 1)
        #expect(book.author === author)
    }
}
