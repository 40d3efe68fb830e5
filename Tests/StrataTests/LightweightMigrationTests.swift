import Foundation
import Testing
import Strata
import StrataEngine

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

/// A property renamed twice: `first` → `second` → `third`.
enum CardsV1 {
    final class Card: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var first: String = ""
        init() {}
        init(title: String, first: String) { self.title = title; self.first = first }
    }
}

enum CardsV2 {
    final class Card: PersistentModel {
        @Attribute var title: String = ""
        @Attribute(originalName: "first") var second: String = ""
        init() {}
        init(title: String, second: String) { self.title = title; self.second = second }
    }
}

enum CardsV3 {
    final class Card: PersistentModel {
        @Attribute var title: String = ""
        @Attribute(originalName: "second") var third: String = ""
        init() {}
        init(title: String, third: String) { self.title = title; self.third = third }
    }
}

/// `originalName:` dropped once the rename has been applied: the store remembers the names.
enum CardsV4 {
    final class Card: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var third: String = ""
        init() {}
    }
}

/// `priority` added with the default 3, which a later version of the app changes to 5.
enum ChoresV1 {
    final class Chore: PersistentModel {
        @Attribute var title: String = ""
        init() {}
        init(title: String) { self.title = title }
    }
}

enum ChoresV2 {
    final class Chore: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var priority: Int = 3
        init() {}
        init(title: String, priority: Int) { self.title = title; self.priority = priority }
    }
}

enum ChoresV3 {
    final class Chore: PersistentModel {
        @Attribute var title: String = ""
        @Attribute var priority: Int = 5
        init() {}
        init(title: String, priority: Int) { self.title = title; self.priority = priority }
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

    func open<T: PersistentModel>(_ type: T.Type, _ dir: TemporaryDirectory, allowsSave: Bool = true) throws -> ModelContext {
        ModelContext(try ModelContainer(for: type, configurations: ModelConfiguration(url: dir.store(), allowsSave: allowsSave)))
    }

    @Test func aDoubleRenameKeepsTheValuesOfRecordsWrittenBeforeBothRenames() throws {
        let dir = TemporaryDirectory()
        do {
            let context = try open(CardsV1.Card.self, dir)
            context.insert(CardsV1.Card(title: "a", first: "written as first"))
            try context.save()
        }
        do {
            let context = try open(CardsV2.Card.self, dir)
            #expect(try context.fetch(FetchDescriptor<CardsV2.Card>()).map(\.second) == ["written as first"])
            context.insert(CardsV2.Card(title: "b", second: "written as second"))
            try context.save()
        }
        for round in 0..<2 {
            // The second time, the store's schema already has `third`.
            let context = try open(CardsV3.Card.self, dir)
            let cards = try context.fetch(FetchDescriptor<CardsV3.Card>(sortBy: [SortDescriptor(\.title)]))
            #expect(cards.map(\.third).prefix(2) == ["written as first", "written as second"], "round \(round)")
            if round == 0 {
                context.insert(CardsV3.Card(title: "c", third: "written as third"))
                try context.save()
            }
        }
        let context = try open(CardsV4.Card.self, dir)
        let cards = try context.fetch(FetchDescriptor<CardsV4.Card>(sortBy: [SortDescriptor(\.title)]))
        #expect(cards.map(\.third) == ["written as first", "written as second", "written as third"])
        #expect(try context.fetchCount(FetchDescriptor<CardsV4.Card>(predicate: #Predicate { $0.third == "written as first" })) == 1)
        #expect(try context.container.stores.first?.verify().isClean == true)
    }

    @Test func changingAnAddedPropertysDefaultLaterDoesNotChangeWhatOldRecordsReadAs() throws {
        let dir = TemporaryDirectory()
        do {
            let context = try open(ChoresV1.Chore.self, dir)
            context.insert(ChoresV1.Chore(title: "old"))
            try context.save()
        }
        do {
            let context = try open(ChoresV2.Chore.self, dir)
            #expect(try context.fetch(FetchDescriptor<ChoresV2.Chore>()).map(\.priority) == [3])
            context.insert(ChoresV2.Chore(title: "new", priority: 7))
            try context.save()
        }
        // The app now says 5; the record written before `priority` existed still reads 3, as
        // a row does after SQLite's ALTER TABLE ADD COLUMN ... DEFAULT 3. Nothing in the
        // store changes for that: opening writes nothing.
        let bytes = try Data(contentsOf: dir.store())
        let context = try open(ChoresV3.Chore.self, dir)
        #expect(try Data(contentsOf: dir.store()) == bytes)
        let chores = try context.fetch(FetchDescriptor<ChoresV3.Chore>(sortBy: [SortDescriptor(\.title)]))
        #expect(chores.map(\.title) == ["new", "old"])
        #expect(chores.map(\.priority) == [7, 3])
        #expect(try context.fetchCount(FetchDescriptor<ChoresV3.Chore>(predicate: #Predicate { $0.priority == 3 })) == 1)
        #expect(ChoresV3.Chore().priority == 5)
    }

    /// The stored schema as JSON objects, edited by `body` and written back with the engine.
    func editSchema(_ dir: TemporaryDirectory, _ body: (inout [[String: Any]]) throws -> Void) throws {
        let store = try Store(path: dir.store().path)
        defer { store.close() }
        try store.write { tx in
            let bytes = try #require(try tx.metadata("strata.schema"))
            var schema = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            var entities = try #require(schema["entities"] as? [[String: Any]])
            try body(&entities)
            schema["entities"] = entities
            try tx.setMetadata("strata.schema", Array(try JSONSerialization.data(withJSONObject: schema)))
        }
    }

    func storedEntities(_ dir: TemporaryDirectory) throws -> [[String: Any]] {
        let store = try Store(path: dir.store().path, options: StoreOptions(readOnly: true))
        defer { store.close() }
        let bytes = try #require(try store.read { try $0.metadata("strata.schema") })
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        return try #require(schema["entities"] as? [[String: Any]])
    }

    @Test func aStoreWrittenBeforeFormerNamesAndDefaultsWereKeptStillOpensAndReads() throws {
        let dir = TemporaryDirectory()
        try writeV1(dir, titles: ["a", "b"])
        do {
            let context = try open(NotesV2.Note.self, dir)
            context.insert(NotesV2.Note(title: "c", text: "new", priority: 9))
            try context.save()
        }
        var found: [String: Any] = [:]
        try editSchema(dir) { entities in
            found = entities[0]
            // As a store written before this version: no former names, no defaults.
            for i in entities.indices {
                entities[i]["formerNames"] = nil
                entities[i]["defaults"] = nil
            }
        }
        #expect((found["formerNames"] as? [String: [String]]) == ["text": ["body"]])
        #expect((found["defaults"] as? [String: String])?.keys.sorted() == ["priority"])
        let check = { (context: ModelContext) throws in
            let notes = try context.fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.title)]))
            #expect(notes.map(\.text) == ["body of a", "body of b", "new"])
            #expect(notes.map(\.priority) == [3, 3, 9])
        }
        // Read-only: the defaults come from init(), and nothing needs writing.
        try check(try open(NotesV2.Note.self, dir, allowsSave: false))
        let before = try storedEntities(dir)[0]
        #expect(before["defaults"] == nil && before["formerNames"] == nil)
        // Writable: the same, and the store records them from now on.
        try check(try open(NotesV2.Note.self, dir))
        let after = try storedEntities(dir)[0]
        #expect((after["formerNames"] as? [String: [String]]) == ["text": ["body"]])
        #expect((after["defaults"] as? [String: String])?.keys.sorted() == ["priority"])
        try check(try open(NotesV2.Note.self, dir, allowsSave: false))
    }
}
