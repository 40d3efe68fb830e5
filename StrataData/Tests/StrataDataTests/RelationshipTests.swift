// The models of Tests/StrataTests/RelationshipTests.swift as SwiftData writes them
// (relationships inferred from their types, no `init()`, optionals without `= nil`), which
// other suites here use. Its tests run as conformance scenarios on @Model models
// (ConformanceTests.swift).

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
}
