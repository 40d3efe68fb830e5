import Foundation
import Testing
import Strata

enum NotesV1 {
    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        @Attribute var stars: Int = 0
        init() {}
        init(title: String, body: String, stars: Int) { self.title = title; self.body = body; self.stars = stars }
    }
}

enum NotesV2 {
    /// Added `priority` (with a default), renamed `body` to `text`, removed `stars`, added an index.
    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute(originalName: "body") var text: String = ""
        @Attribute var priority: Int = 3
        init() {}
        init(title: String, text: String, priority: Int) { self.title = title; self.text = text; self.priority = priority }
        static var indexes: [[PartialKeyPath<Note>]] { [[\.priority]] }
    }
}

enum NotesUniqueTitle {
    final class Note: PersistentModel {
        @Attribute(.unique) var title: String = ""
        @Attribute var body: String = ""
        @Attribute var stars: Int = 0
        init() {}
    }
}

enum NotesRetyped {
    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: Int = 0
        @Attribute var stars: Int = 0
        init() {}
    }
}

enum NotesNoDefault {
    final class Note: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var body: String = ""
        @Attribute var stars: Int = 0
        @Attribute var due: Date
        init() {}
    }
}

@Suite struct LightweightMigrationTests {
    func writeV1(_ dir: TemporaryDirectory, titles: [String]) throws {
        let context = ModelContext(try ModelContainer(for: NotesV1.Note.self, configurations: ModelConfiguration(url: dir.store())))
        for (i, t) in titles.enumerated() { context.insert(NotesV1.Note(title: t, body: "body of \(t)", stars: i)) }
        try context.save()
    }

    @Test func addedRenamedAndRemovedPropertiesWithoutAPlan() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir, titles: ["a", "b", "c"])
        do {
            let context = ModelContext(try ModelContainer(for: NotesV2.Note.self, configurations: ModelConfiguration(url: dir.store())))
            let notes = try context.fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.title)]))
            #expect(notes.map(\.title) == ["a", "b", "c"])
            #expect(notes.map(\.text) == ["body of a", "body of b", "body of c"])   // renamed
            #expect(notes.allSatisfy { $0.priority == 3 })                           // the default
            // The new index answers queries over old records.
            #expect(try context.fetchCount(FetchDescriptor<NotesV2.Note>(predicate: #Predicate { $0.priority == 3 })) == 3)
            // New records beside old ones; an old one changed and saved.
            context.insert(NotesV2.Note(title: "d", text: "new", priority: 9))
            notes[0].priority = 1
            try context.save()
            #expect(try context.fetch(FetchDescriptor<NotesV2.Note>(predicate: #Predicate { $0.priority > 2 }, sortBy: [SortDescriptor(\.title)])).map(\.title) == ["b", "c", "d"])
        }
        let context = ModelContext(try ModelContainer(for: NotesV2.Note.self, configurations: ModelConfiguration(url: dir.store())))
        let notes = try context.fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.title)]))
        #expect(notes.map(\.priority) == [1, 3, 3, 9])
        #expect(notes.map(\.text) == ["body of a", "body of b", "body of c", "new"])
        #expect(try context.container.stores.first?.verify().isClean == true)
    }

    @Test func aNewUniqueConstraintThatTheDataBreaksIsATypedErrorAndChangesNothing() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir, titles: ["same", "other", "same"])
        let before = try Data(contentsOf: dir.store())
        #expect {
            _ = try ModelContainer(for: NotesUniqueTitle.Note.self, configurations: ModelConfiguration(url: dir.store()))
        } throws: { error in
            "\(error)".contains("same") && "\(error)".contains("title")
        }
        #expect(try Data(contentsOf: dir.store()) == before)
        // Still readable with the schema it was written with.
        let context = ModelContext(try ModelContainer(for: NotesV1.Note.self, configurations: ModelConfiguration(url: dir.store())))
        #expect(try context.fetchCount(FetchDescriptor<NotesV1.Note>()) == 3)
    }

    @Test func changesThatAreNotLightweightNameTheModelAndProperty() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir, titles: ["a"])
        #expect {
            _ = try ModelContainer(for: NotesRetyped.Note.self, configurations: ModelConfiguration(url: dir.store()))
        } throws: { error in
            (error as? StrataError)?.code == .schemaMismatch && "\(error)".contains("Note.body") && "\(error)".contains("type")
        }
        #expect {
            _ = try ModelContainer(for: NotesNoDefault.Note.self, configurations: ModelConfiguration(url: dir.store()))
        } throws: { error in
            (error as? StrataError)?.code == .schemaMismatch && "\(error)".contains("Note.due") && "\(error)".contains("default")
        }
    }
}
