import Foundation
import Testing
import Strata

/// Objects outlive the context that fetched them, as in SwiftData: a fetched object's
/// `modelContext` stays set, and its relationships read what the store holds however the
/// fetch was written (`try ModelContext(container).fetch(d)` drops the context at once).
@Suite struct ObjectLifetimeTests {
    private func seed(_ url: URL) throws {
        let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let author = Author(name: "Le Guin")
        context.insert(author)
        for title in ["Earthsea", "Lathe", "Dispossessed"] {
            let book = Book(title: title)
            context.insert(book)
            book.author = author
        }
        try context.save()
    }

    @Test func relationshipsReadThroughAContextThatIsGone() throws {
        let dir = TemporaryDirectory()
        try seed(dir.store())
        let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: dir.store()))
        // The fetching context is released as soon as the statement ends.
        let author = try #require(try ModelContext(container).fetch(FetchDescriptor<Author>()).first)
        #expect(author.modelContext != nil)
        #expect(author.books.count == 3)
        #expect(Set(author.books.map(\.title)) == ["Earthsea", "Lathe", "Dispossessed"])
        let book = try #require(try ModelContext(container).fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "Lathe" })).first)
        #expect(book.author?.name == "Le Guin")
    }

    @Test func relationshipsReadAfterTheContainerVariableIsGone() throws {
        let dir = TemporaryDirectory()
        try seed(dir.store())
        func fetchAuthor() throws -> Author? {
            let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: dir.store()))
            return try ModelContext(container).fetch(FetchDescriptor<Author>()).first
        }
        let author = try #require(try fetchAuthor())
        #expect(author.books.count == 3)
        #expect(author.books.allSatisfy { $0.author === author })
    }

    @Test func anObjectChangedAfterItsContextWentAwayStillReadsItsRelationships() throws {
        let dir = TemporaryDirectory()
        try seed(dir.store())
        let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: dir.store()))
        let author = try #require(try ModelContext(container).fetch(FetchDescriptor<Author>()).first)
        author.name = "Ursula K. Le Guin"     // the change is the context's; it may go now
        #expect(author.books.count == 3)
        #expect(author.name == "Ursula K. Le Guin")
    }

    @Test func theStoreCanBeOpenedAgainWhileFetchedObjectsLive() throws {
        let dir = TemporaryDirectory()
        try seed(dir.store())
        let config = ModelConfiguration(url: dir.store())
        let author = try #require(try ModelContext(ModelContainer(for: Author.self, Book.self, configurations: config)).fetch(FetchDescriptor<Author>()).first)
        // A new container on the same URL in this process opens (it shares the open store).
        let again = try ModelContainer(for: Author.self, Book.self, configurations: config)
        let context = ModelContext(again)
        context.insert(Book(title: "Tehanu"))
        try context.save()
        #expect(try ModelContext(again).fetchCount(FetchDescriptor<Book>()) == 4)
        #expect(author.books.count == 3)
    }

    /// An object refers to its store through its container, unretained, while it holds the
    /// container; a deleted one, detached from its context, keeps its store's handle itself.
    /// (Debug builds check that the handle is alive whenever it is read.)
    @Test func objectsKeepTheirIdentifiersAfterTheirContainerIsGone() throws {
        let dir = TemporaryDirectory()
        try seed(dir.store())
        let config = ModelConfiguration(url: dir.store())
        weak var weakContainer: ModelContainer?
        func fetched(_ index: Int) throws -> (Book, PersistentIdentifier) {
            let container = try ModelContainer(for: Author.self, Book.self, configurations: config)
            weakContainer = container
            let context = ModelContext(container)
            let books = try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
            try #require(books.count > index)
            return (books[index], books[index].persistentModelID)
        }
        func churn() throws {
            // Memory the container and its store used is handed out again.
            for _ in 0..<3 {
                let other = TemporaryDirectory()
                let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: other.store()))
                ModelContext(container).insert(Book(title: "Filler"))
            }
        }
        // Deleted and saved: no context, no container.
        let (deleted, deletedID) = try {
            let (book, id) = try fetched(0)
            let context = try #require(book.modelContext)
            context.delete(book)
            try context.save()
            return (book, id)
        }()
        #expect(weakContainer == nil)
        try churn()
        #expect(deleted.modelContext == nil)
        #expect(deleted.persistentModelID == deletedID)
        #expect(deleted.title == "Dispossessed")
        // Changed after its context went: it holds the container itself.
        let (changed, changedID) = try fetched(0)
        #expect(changed.title == "Earthsea")
        changed.title = "A Wizard of Earthsea"
        try churn()
        #expect(changed.persistentModelID == changedID)
        #expect(changed.author?.name == "Le Guin")
        // Clean: its context holds the container.
        let (clean, cleanID) = try fetched(1)
        try churn()
        #expect(clean.persistentModelID == cleanID)
        #expect(clean.title == "Lathe")
        #expect(clean.author?.books.count == 2)
    }

    @Test func objectsOfAContextGoAwayWithTheirLastReference() throws {
        // Clean objects keep their context alive, never the other way round: nothing leaks.
        let dir = TemporaryDirectory()
        try seed(dir.store())
        let container = try ModelContainer(for: Author.self, Book.self, configurations: ModelConfiguration(url: dir.store()))
        weak var weakContext: ModelContext?
        weak var weakAuthor: Author?
        do {
            let context = ModelContext(container)
            weakContext = context
            let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
            weakAuthor = author
            #expect(author.books.count == 3)
        }
        #expect(weakAuthor == nil)
        #expect(weakContext == nil)
        // A context dropped with unsaved inserts does not leak either.
        weak var weakUnsaved: ModelContext?
        weak var weakInserted: Book?
        do {
            let context = ModelContext(container)
            weakUnsaved = context
            let book = Book(title: "Unsaved")
            weakInserted = book
            context.insert(book)
        }
        #expect(weakUnsaved == nil)
        #expect(weakInserted == nil)
    }
}
