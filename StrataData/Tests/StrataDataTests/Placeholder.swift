import Foundation
import Testing
import StrataData

@Model final class Note {
    @Attribute(.unique) var slug: String
    var title: String
    var count = 3
    var rating: Int = 0
    var body: String?
    var folder: Folder?
    var tags: [String] = []
    @Transient var isExpanded = false

    init(slug: String, title: String) {
        self.slug = slug
        self.title = title
    }
}

@Model final class Folder {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []
    init(name: String) { self.name = name }
}

@Test func placeholder() throws {
    let container = try ModelContainer(for: Note.self, Folder.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let context = ModelContext(container)
    let f = Folder(name: "f")
    let n = Note(slug: "a", title: "A")
    n.folder = f
    context.insert(n)
    try context.save()
    #expect(try context.fetch(FetchDescriptor<Note>()).map(\.title) == ["A"])
    #expect(f.notes.map(\.slug) == ["a"])
}
