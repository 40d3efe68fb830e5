import Foundation
import Testing
@testable @_spi(StorageBackend) import Strata

// A container's history read when one of its stores cannot be read (MemoryStorage.swift's
// `failReads`): `HistoryChanges` reads its stores all or nothing, so that nothing another store
// committed is skipped when the read is tried again, and what `next()` had buffered outlives
// the failed read.

@Suite struct HistoryReadFailureTests {
    /// Two stores on the memory backend: trips in one, books and authors in the other.
    private struct TwoStores {
        let provider = MemoryProvider()
        let locations = ["trips", "books"].map { "/seam/\(UUID().uuidString)-\($0).store" }
        let container: ModelContainer

        init() throws {
            let trips = ModelConfiguration("trips", schema: Schema([Trip.self]), url: URL(fileURLWithPath: locations[0]))
            let books = ModelConfiguration("books", schema: Schema([Book.self, Author.self]), url: URL(fileURLWithPath: locations[1]))
            container = try ModelContainer(for: Schema([Trip.self, Book.self, Author.self]), configurations: [trips, books], storage: provider)
        }

        /// The store identifier of the store at `locations[i]`.
        func storeIdentifier(_ i: Int) -> String? {
            container.handles.first { $0.configuration.url.path == locations[i] }?.storeIdentifier
        }
    }

    /// One save that commits a transaction in each store; a read of the history that fails on
    /// one store; the read again, once the store can be read. Each store's transaction comes
    /// once. (Run failing each store in turn: before the read was all or nothing, the stores
    /// read before the failing one had moved on, and their transactions never came.)
    @Test(arguments: [0, 1])
    func aFailedReadOfOneStoreSkipsNothingOfTheOthers(failing: Int) throws {
        let stores = try TwoStores()
        var changes = stores.container.historyChanges().makeAsyncIterator()
        let context = ModelContext(stores.container)
        context.insert(Trip(name: "Lisbon", startDate: Date(timeIntervalSinceReferenceDate: 0)))
        context.insert(Book(title: "Notes"))
        try context.save()

        stores.provider.stores.failReads(of: stores.locations[failing])
        #expect(throws: MemoryReadFailure(location: stores.locations[failing])) { try changes.available() }
        stores.provider.stores.failReads(of: nil)

        let notices = try changes.available()
        let identifiers = [stores.storeIdentifier(0), stores.storeIdentifier(1)]
        #expect(notices.map(\.token.storeIdentifier).sorted() == identifiers.compactMap { $0 }.sorted())
        #expect(notices.map(\.inserted.count) == [1, 1])
        // Nothing is delivered twice.
        #expect(try changes.available().isEmpty)
    }

    /// `next()` buffers what one read found beyond the notice it returns; a later read that
    /// fails leaves that buffer for the read after it (it was emptied before the read, and the
    /// notice lost with the error).
    @Test func aFailedReadKeepsWhatNextHadBuffered() async throws {
        let stores = try TwoStores()
        var changes = stores.container.historyChanges().makeAsyncIterator()
        let context = ModelContext(stores.container)
        for name in ["Lisbon", "Oslo"] {
            context.insert(Trip(name: name, startDate: Date(timeIntervalSinceReferenceDate: 0)))
            try context.save()
        }
        // One read finds both transactions: the first is returned, the second buffered.
        let first = try #require(try await changes.next())

        stores.provider.stores.failReads(of: stores.locations[1])
        #expect(throws: MemoryReadFailure.self) { try changes.available() }
        stores.provider.stores.failReads(of: nil)

        let rest = try changes.available()
        #expect(rest.count == 1)
        #expect(rest.map(\.token.storeIdentifier) == [first.token.storeIdentifier])
        #expect(rest.allSatisfy { $0.token.tokenValue > first.token.tokenValue })
        #expect(try changes.available().isEmpty)
    }
}
