import Foundation
import Testing
import Strata
import StrataEngine

@Suite struct MultipleStoresTests {
    /// Each configuration keeps its models in its own file; one context reads and saves across
    /// them, including a relationship from one store to the other.
    @Test func oneContextAcrossTwoStores() throws {
        let dir = TemporaryDirectory()
        let books = ModelConfiguration("books", schema: Schema([Book.self]), url: dir.store("books"))
        let authors = ModelConfiguration("authors", schema: Schema([Author.self]), url: dir.store("authors"))
        let full = Schema([Book.self, Author.self])
        do {
            let container = try ModelContainer(for: full, configurations: books, authors)
            let context = ModelContext(container)
            let ada = Author(name: "Ada")
            context.insert(ada)
            ada.books = [Book(title: "Notes"), Book(title: "Letters")]
            try context.save()
        }
        // Each file holds only its own models (and its own history of them).
        for (file, expected) in [("books", ["Book", "strata.history"]), ("authors", ["Author", "strata.history"])] {
            let store = try Store(path: dir.store(file).path, options: StoreOptions(readOnly: true))
            #expect(try store.read { $0.collectionNames } == expected)
            store.close()
        }
        let container = try ModelContainer(for: full, configurations: books, authors)
        let context = ModelContext(container)
        let ada = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        #expect(ada.books.map(\.title) == ["Notes", "Letters"])
        // One save, one transaction in each store, each with its store's identifier.
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.count == 2 && Set(history.map(\.storeIdentifier)).count == 2)
        #expect(Set(history.map { $0.changes.count }) == [1, 2])
        let notes = try #require(try context.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "Notes" })).first)
        #expect(notes.author === ada)
    }
}
