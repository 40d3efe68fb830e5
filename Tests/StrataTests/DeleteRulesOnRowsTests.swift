import Foundation
import Testing
import Strata

// Delete rules on rows: related rows that the application does not hold as objects are
// deleted (cascade), edited (nullify) or counted (deny) in the store without being made into
// objects, and the objects it does hold are updated in memory.
@Suite struct DeleteRulesOnRowsTests {
    private func container(_ dir: TemporaryDirectory, _ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: [ModelConfiguration(url: dir.store())])
    }

    @Test func aCascadeOverUnregisteredRowsDeletesThemAndSparesOthers() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, Voyage.self, Port.self)
        do {
            let context = ModelContext(container)
            let long = Voyage(name: "long"), short = Voyage(name: "short")
            context.insert(long)
            context.insert(short)
            long.ports = (0..<500).map { Port(city: "p\($0)") }
            short.ports = (0..<3).map { Port(city: "s\($0)") }
            try context.save()
        }
        let context = ModelContext(container)
        let long = try #require(try context.fetch(FetchDescriptor<Voyage>(predicate: #Predicate { $0.name == "long" })).first)
        // One port is held by the application: it is updated in memory.
        let held = try #require(try context.fetch(FetchDescriptor<Port>(predicate: #Predicate { $0.city == "p7" })).first)
        context.delete(long)
        try context.save()
        #expect(held.modelContext == nil && !held.isDeleted, "a held object deleted by the cascade leaves its context")
        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<Port>()) == 3)
        #expect(try fresh.fetch(FetchDescriptor<Voyage>()).map(\.name) == ["short"])
        #expect(try fresh.fetch(FetchDescriptor<Voyage>()).first?.ports.count == 3)
    }

    @Test func didSaveListsTheRowsACascadeDeleted() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, Voyage.self, Port.self)
        do {
            let context = ModelContext(container)
            let voyage = Voyage(name: "v")
            context.insert(voyage)
            voyage.ports = (0..<4).map { Port(city: "p\($0)") }
            try context.save()
        }
        let context = ModelContext(container)
        let voyage = try #require(try context.fetch(FetchDescriptor<Voyage>()).first)
        final class Box: @unchecked Sendable { var ids: [PersistentIdentifier] = [] }
        let box = Box()
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { note in
            box.ids = note.userInfo?[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier] ?? []
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        context.delete(voyage)
        try context.save()
        let deleted = box.ids
        #expect(deleted.filter { $0.entityName == "Port" }.count == 4)
        #expect(deleted.filter { $0.entityName == "Voyage" }.count == 1)
    }

    @Test func nullifyEditsTheStoredRowOfTheOtherSide() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, Author.self, Book.self)
        do {
            let context = ModelContext(container)
            let author = Author(name: "Ada")
            context.insert(author)
            author.books = [Book(title: "One"), Book(title: "Two"), Book(title: "Three")]
            try context.save()
        }
        // Only the book is fetched: its author's record is edited without making the author.
        let context = ModelContext(container)
        let two = try #require(try context.fetch(FetchDescriptor<Book>(predicate: #Predicate { $0.title == "Two" })).first)
        context.delete(two)
        try context.save()
        let fresh = ModelContext(container)
        let author = try #require(try fresh.fetch(FetchDescriptor<Author>()).first)
        #expect(author.books.map(\.title) == ["One", "Three"])
    }

    @Test func deleteModelWhereAppliesRulesToRows() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, Voyage.self, Port.self)
        do {
            let context = ModelContext(container)
            for name in ["a", "b", "c"] {
                let voyage = Voyage(name: name)
                context.insert(voyage)
                voyage.ports = (0..<5).map { Port(city: "\(name)\($0)") }
            }
            try context.save()
        }
        let context = ModelContext(container)
        try context.delete(model: Voyage.self, where: #Predicate { $0.name != "b" })
        try context.save()
        let fresh = ModelContext(container)
        #expect(try fresh.fetch(FetchDescriptor<Port>(sortBy: [SortDescriptor(\.city)])).map(\.city) == ["b0", "b1", "b2", "b3", "b4"])
    }

    @Test func denyCountsUnregisteredRows() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, Vault.self, VaultKey.self)
        do {
            let context = ModelContext(container)
            let vault = Vault()
            vault.label = "v"
            context.insert(vault)
            let key = VaultKey()
            key.code = "k"
            vault.keys = [key]
            try context.save()
        }
        let context = ModelContext(container)
        let vault = try #require(try context.fetch(FetchDescriptor<Vault>()).first)
        context.delete(vault)
        #expect { try context.save() } throws: { ($0 as? StrataError)?.code == .deleteDenied }
        context.rollback()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Vault>()) == 1)
    }

    @Test func aNullifyBelowTheMinimumCountRefusesTheSave() throws {
        let dir = TemporaryDirectory()
        let container = try container(dir, ECrew.self, EMember.self)
        do {
            let context = ModelContext(container)
            let crew = ECrew("c")
            context.insert(crew)
            crew.members = [EMember("m")]
            try context.save()
        }
        let context = ModelContext(container)
        let member = try #require(try context.fetch(FetchDescriptor<EMember>()).first)
        context.delete(member)
        #expect { try context.save() } throws: { ($0 as? StrataError)?.code == .relationshipCount }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<EMember>()) == 1, "nothing was saved")
    }
}
