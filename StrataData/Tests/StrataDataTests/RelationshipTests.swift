// The macro spelling of Tests/StrataTests/RelationshipTests.swift: the same tests, word for word,
// on models written as SwiftData writes them (relationships inferred from their types, no
// `init()`, optionals without `= nil`). Keep the two files in step.

import Foundation
import Testing
import StrataData

@Model final class Author {
    var name: String = ""
    var books: [Book] = []
    init(name: String) { self.name = name }
}

@Model final class Book {
    var title: String = ""
    var pages: Int = 0
    var author: Author?
    init(title: String, pages: Int = 100) { self.title = title; self.pages = pages }
}

@Model final class Student {
    var name: String = ""
    var classes: [Lesson] = []
    init(name: String) { self.name = name }
}

@Model final class Lesson {
    var topic: String = ""
    @Relationship(inverse: \Student.classes) var students: [Student] = []
    init(topic: String) { self.topic = topic }
}

@Model final class Folder {
    var name: String = ""
    @Relationship(deleteRule: .cascade) var children: [Folder] = []
    var parent: Folder?
    init(name: String) { self.name = name }
}

@Model final class Voyage {
    var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Port.voyage) var ports: [Port] = []
    init(name: String) { self.name = name }
}

@Model final class Port {
    var city: String = ""
    var isBooked: Bool = false
    var voyage: Voyage?
    init(city: String, isBooked: Bool = false) { self.city = city; self.isBooked = isBooked }
}

@Model final class Vault {
    var label: String = ""
    @Relationship(deleteRule: .deny) var keys: [VaultKey] = []
}

@Model final class VaultKey {
    var code: String = ""
    var vault: Vault?
}

@Suite struct RelationshipTests {
    func container(_ dir: TemporaryDirectory, _ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: [ModelConfiguration(url: dir.store())])
    }

    @Test func settingOneSideUpdatesTheOtherAndBothSurviveAReopen() throws {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try container(dir, Author.self))
            let ada = Author(name: "Ada")
            context.insert(ada)
            let b1 = Book(title: "Notes")
            b1.author = ada                         // to-one side
            #expect(ada.books.map(\.title) == ["Notes"])
            let b2 = Book(title: "Letters")
            ada.books.append(b2)                    // to-many side
            #expect(b2.author === ada)
            #expect(context.insertedModelsArray.count == 3)   // related new objects were inserted
            try context.save()
        }
        let context = ModelContext(try container(dir, Author.self))
        let authors = try context.fetch(FetchDescriptor<Author>())
        #expect(authors.count == 1)
        let ada = try #require(authors.first)
        #expect(ada.books.map(\.title) == ["Notes", "Letters"])   // order kept
        #expect(ada.books.allSatisfy { $0.author === ada })
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2)
    }

    @Test func movingAToOneTakesTheObjectFromItsPreviousOwner() throws {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try container(dir, Author.self))
            let a = Author(name: "A"), b = Author(name: "B")
            context.insert(a)
            context.insert(b)
            let book = Book(title: "T")
            a.books = [book]
            try context.save()
            book.author = b
            #expect(a.books.isEmpty)
            #expect(b.books.map(\.title) == ["T"])
            try context.save()
        }
        let again = ModelContext(try container(dir, Author.self))
        let authors = try again.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.name)]))
        #expect(authors.map { $0.books.count } == [0, 1])
    }

    @Test func manyToManyWithAnExplicitInverse() throws {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try container(dir, Student.self))
            let s1 = Student(name: "s1"), s2 = Student(name: "s2")
            let math = Lesson(topic: "math"), art = Lesson(topic: "art")
            context.insert(s1)
            context.insert(s2)
            s1.classes = [math, art]
            s2.classes.append(math)
            #expect(math.students.map(\.name) == ["s1", "s2"])
            #expect(art.students.map(\.name) == ["s1"])
            try context.save()
        }
        let context = ModelContext(try container(dir, Student.self))
        let lessons = try context.fetch(FetchDescriptor<Lesson>(sortBy: [SortDescriptor(\.topic)]))
        #expect(lessons.map { $0.students.map(\.name).sorted() } == [["s1"], ["s1", "s2"]])
    }

    @Test func selfReferentialCascadeDeletesThroughManyLevels() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir, Folder.self)
        let context = ModelContext(store)
        let root = Folder(name: "root")
        context.insert(root)
        var level = root
        for depth in 1...5 {
            let child = Folder(name: "d\(depth)")
            level.children.append(child)
            child.children.append(Folder(name: "leaf\(depth)"))
            level = child
        }
        #expect(root.children.first?.parent === root)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Folder>()) == 11)
        context.delete(root)
        try context.save()
        #expect(try ModelContext(store).fetchCount(FetchDescriptor<Folder>()) == 0)
    }

    @Test func nullifyRemovesTheDeletedObjectFromTheInverse() throws {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try container(dir, Author.self))
            let a = Author(name: "A")
            context.insert(a)
            a.books = [Book(title: "1"), Book(title: "2")]
            try context.save()
            context.delete(a)
            try context.save()
        }
        let books = try ModelContext(try container(dir, Author.self)).fetch(FetchDescriptor<Book>())
        #expect(books.count == 2)
        #expect(books.allSatisfy { $0.author == nil })
    }

    @Test func denyRefusesTheSaveAndSavesNothing() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir, Vault.self)
        let context = ModelContext(store)
        let vault = Vault()
        vault.label = "v"
        context.insert(vault)
        let key = VaultKey()
        key.code = "k"
        vault.keys = [key]
        try context.save()
        context.delete(vault)
        #expect {
            try context.save()
        } throws: { error in
            (error as? StrataError)?.code == .deleteDenied && "\(error)".contains("Vault.keys")
        }
        let fresh = ModelContext(store)
        #expect(try fresh.fetchCount(FetchDescriptor<Vault>()) == 1)
    }

    @Test func predicatesAndSortsThroughRelationships() throws {
        let dir = TemporaryDirectory()
        do {
            let context = ModelContext(try container(dir, Voyage.self))
            let v1 = Voyage(name: "North"), v2 = Voyage(name: "South")
            context.insert(v1)
            context.insert(v2)
            v1.ports = [Port(city: "Oslo", isBooked: true), Port(city: "Bergen")]
            v2.ports = [Port(city: "Lisbon", isBooked: true)]
            try context.save()
        }
        let context = ModelContext(try container(dir, Voyage.self))
        let north = try context.fetch(FetchDescriptor<Port>(predicate: #Predicate { $0.voyage?.name == "North" }, sortBy: [SortDescriptor(\.city)]))
        #expect(north.map(\.city) == ["Bergen", "Oslo"])
        let withUnbooked = try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { voyage in
            voyage.ports.filter { !$0.isBooked }.count > 0
        }))
        #expect(withUnbooked.map(\.name) == ["North"])
        let cascade = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.name == "North" })).first)
        context.delete(cascade)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Port>()) == 1)
    }
}

@Model final class Album {
    @Attribute(.unique) var code: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Track.album) var tracks: [Track] = []
    init(code: String) { self.code = code }
}

@Model final class Track {
    var title: String = ""
    var album: Album?
    init(title: String) { self.title = title }
}

extension RelationshipTests {
    /// An upsert takes over the stored object's relationships: tracks the stored album had and
    /// the new one does not lose their album.
    @Test func anUpsertReplacesTheStoredObjectsRelationships() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir, Album.self)
        do {
            let context = ModelContext(store)
            let first = Album(code: "A1")
            context.insert(first)
            first.tracks = [Track(title: "one"), Track(title: "two")]
            try context.save()
        }
        do {
            let context = ModelContext(store)
            let again = Album(code: "A1")
            context.insert(again)
            again.tracks = [Track(title: "three")]
            try context.save()
        }
        let context = ModelContext(store)
        #expect(try context.fetchCount(FetchDescriptor<Album>()) == 1)
        let tracks = try context.fetch(FetchDescriptor<Track>(sortBy: [SortDescriptor(\.title)]))
        #expect(tracks.map(\.title) == ["one", "three", "two"])
        #expect(tracks.map { $0.album?.code } == [nil, "A1", nil])
        #expect(try context.fetch(FetchDescriptor<Album>()).first?.tracks.map(\.title) == ["three"])
    }
}

@Model final class Crew {
    var name: String = ""
    @Relationship(minimumModelCount: 1) var members: [Member] = []
}

@Model final class Member {
    var name: String = ""
    var crew: Crew?
}

extension RelationshipTests {
    /// A save that fails leaves the context as it was: delete rules it applied are undone.
    @Test func aFailedSaveUndoesTheDeleteRulesItApplied() throws {
        let dir = TemporaryDirectory()
        let store = try container(dir, Voyage.self, Crew.self)
        let context = ModelContext(store)
        let voyage = Voyage(name: "v")
        context.insert(voyage)
        voyage.ports = [Port(city: "x")]
        let crew = Crew()
        context.insert(crew)
        let m = Member()
        crew.members = [m]
        try context.save()
        context.delete(voyage)                 // would cascade to the port
        crew.members = []                      // breaks minimumModelCount: the save fails
        #expect(throws: StrataError.self) { try context.save() }
        context.insert(voyage)                 // keep the voyage after all
        let m2 = Member()
        crew.members = [m2]
        try context.save()
        let fresh = ModelContext(store)
        #expect(try fresh.fetchCount(FetchDescriptor<Voyage>()) == 1)
        #expect(try fresh.fetchCount(FetchDescriptor<Port>()) == 1)   // the cascade did not stick
    }
}
