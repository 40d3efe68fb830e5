import Foundation
import Testing
import StrataData

// Model files written for SwiftData, taken as they are: only `import SwiftData` became
// `import StrataData`. (Each sits in an enum of its own so that their class names do not
// clash with the other tests'; a store names an entity by its class name alone.)

/// README.md's example, as SwiftData writes it.
enum ReadmeExample {
    @Model final class Trip {
        #Index<Trip>([\.startDate])

        @Attribute(.unique) var id: String
        var name: String
        var startDate: Date
        var budget: Double?
        @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
        @Transient var isExpanded = false

        init(id: String, name: String, startDate: Date, budget: Double? = nil) {
            self.id = id
            self.name = name
            self.startDate = startDate
            self.budget = budget
        }
    }

    @Model final class Stop {
        var city: String
        var trip: Trip?

        init(city: String) { self.city = city }
    }
}

/// Docs/PortingFromSwiftData.md's "before", as it is there.
enum PortingGuideBefore {
    @Model final class Recipe {
        #Unique<Recipe>([\.name, \.author])
        #Index<Recipe>([\.createdAt])

        @Attribute(.unique) var slug: String
        var name: String
        var author: String
        var minutes: Int
        var createdAt: Date
        var tags: [String] = []
        @Attribute(.externalStorage) var photo: Data? = nil
        @Relationship(deleteRule: .cascade, inverse: \Ingredient.recipe) var ingredients: [Ingredient] = []
        @Transient var isSelected = false

        init(slug: String, name: String, author: String, minutes: Int) {
            self.slug = slug
            self.name = name
            self.author = author
            self.minutes = minutes
            self.createdAt = .now
        }
    }

    @Model final class Ingredient {
        var name: String
        var grams: Double
        var recipe: Recipe?

        init(name: String, grams: Double) {
            self.name = name
            self.grams = grams
        }
    }
}

/// The three-model notes app of issue 17, which took 20 edits to port without macros.
enum NotesApp {
    enum Color: String, Codable { case none, red, blue }
    struct Reminder: Codable, Equatable { var at: Date; var repeats: Bool }

    @Model final class Note {
        var title: String
        var body: String
        var created: Date
        var color: Color = Color.none
        var reminder: Reminder?
        var folder: Folder?
        var tags: [Tag] = []
        var pinned = false
        var wordCount = 0

        init(title: String, body: String = "", folder: Folder? = nil) {
            self.title = title
            self.body = body
            self.created = .now
            self.folder = folder
        }
    }

    @Model final class Folder {
        var name: String
        @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: [Note] = []
        var parent: Folder?
        @Relationship(deleteRule: .cascade, inverse: \Folder.parent) var subfolders: [Folder] = []

        init(name: String, parent: Folder? = nil) {
            self.name = name
            self.parent = parent
        }
    }

    @Model final class Tag {
        @Attribute(.unique) var name: String
        @Relationship(inverse: \Note.tags) var notes: [Note] = []

        init(name: String) { self.name = name }
    }
}

@Suite struct SwiftDataSourceTests {
    @Test func theReadmeExample() throws {
        typealias Trip = ReadmeExample.Trip
        typealias Stop = ReadmeExample.Stop
        let dir = TemporaryDirectory()
        do {
            let container = try ModelContainer(for: Trip.self, Stop.self,
                                               configurations: ModelConfiguration(url: dir.store("trips")))
            let context = ModelContext(container)
            let lisbon = Trip(id: "lisbon-2025", name: "Lisbon", startDate: .now, budget: 1200)
            lisbon.stops = [Stop(city: "Lisboa"), Stop(city: "Sintra")]
            context.insert(lisbon)
            context.insert(Trip(id: "oslo-2025", name: "Oslo", startDate: .now.addingTimeInterval(30 * 86_400)))
            try context.save()
            context.insert(Trip(id: "oslo-2025", name: "Oslo in winter", startDate: .now.addingTimeInterval(60 * 86_400), budget: 900))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: Trip.self, Stop.self,
                                                      configurations: ModelConfiguration(url: dir.store("trips"))))
        let descriptor = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.name.localizedStandardContains("lis") || ($0.budget ?? 0) < 1000 },
            sortBy: [SortDescriptor(\.startDate)])
        let found = try context.fetch(descriptor)
        #expect(found.map(\.name) == ["Lisbon", "Oslo in winter"])
        #expect(found[0].stops.map(\.city) == ["Lisboa", "Sintra"])
        #expect(found[0].stops.allSatisfy { $0.trip === found[0] })
        #expect(found[1].budget == 900 && found[1].stops.isEmpty)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 2)
    }

    @Test func thePortingGuidesBefore() throws {
        typealias Recipe = PortingGuideBefore.Recipe
        typealias Ingredient = PortingGuideBefore.Ingredient
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Recipe.self, Ingredient.self,
                                           configurations: ModelConfiguration(url: dir.store("recipes")))
        let context = ModelContext(container)
        let soup = Recipe(slug: "soup", name: "Tomato soup", author: "Ana", minutes: 25)
        soup.ingredients = [Ingredient(name: "tomato", grams: 800), Ingredient(name: "onion", grams: 150)]
        soup.photo = Data(repeating: 7, count: 100_000)
        context.insert(soup)
        try context.save()

        let quick = try context.fetch(FetchDescriptor<Recipe>(
            predicate: #Predicate { $0.minutes <= 30 && $0.tags.contains("vegetarian") == false },
            sortBy: [SortDescriptor(\.name)]))
        #expect(quick.map(\.name) == ["Tomato soup"])

        // #Unique: another recipe with the same name and author is an upsert of the first.
        context.insert(Recipe(slug: "soup", name: "Tomato soup", author: "Ana", minutes: 20))
        try context.save()
        let fresh = ModelContext(container)
        let stored = try fresh.fetch(FetchDescriptor<Recipe>())
        #expect(stored.map(\.minutes) == [20])
        #expect(try fresh.fetch(FetchDescriptor<Ingredient>(sortBy: [SortDescriptor(\.name)])).map(\.name) == ["onion", "tomato"])
        // The upsert's values replace the stored ones, the photo it did not set included.
        #expect(stored.first?.photo == nil)
        #expect(!(stored.first?.isSelected ?? true))
    }

    @Test func theNotesApp() throws {
        typealias Note = NotesApp.Note
        typealias Folder = NotesApp.Folder
        typealias Tag = NotesApp.Tag
        let dir = TemporaryDirectory()
        let schema = Schema([Note.self, Folder.self, Tag.self])
        do {
            let context = ModelContext(try ModelContainer(for: schema, configurations: [ModelConfiguration(url: dir.store())]))
            let work = Folder(name: "Work")
            let projects = Folder(name: "Projects", parent: work)
            context.insert(work)
            context.insert(projects)
            let urgent = Tag(name: "urgent"), later = Tag(name: "later")
            let plan = Note(title: "Plan", body: "steps", folder: projects)   // set in init, then inserted with the folder
            plan.tags = [urgent, later]
            plan.reminder = NotesApp.Reminder(at: Date(timeIntervalSinceReferenceDate: 1_000), repeats: true)
            plan.color = .red
            let memo = Note(title: "Memo")
            memo.tags = [urgent]
            context.insert(memo)
            #expect(work.subfolders.map(\.name) == ["Projects"])
            #expect(urgent.notes.map(\.title) == ["Plan", "Memo"])
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: schema, configurations: [ModelConfiguration(url: dir.store())]))
        let notes = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]))
        #expect(notes.map(\.title) == ["Memo", "Plan"])
        let (memo, plan) = (notes[0], notes[1])
        #expect(memo.folder == nil && memo.reminder == nil && memo.color == .none && memo.body == "")
        #expect(plan.folder?.name == "Projects" && plan.folder?.parent?.name == "Work")
        #expect(plan.reminder == NotesApp.Reminder(at: Date(timeIntervalSinceReferenceDate: 1_000), repeats: true))
        #expect(plan.color == .red && plan.tags.map(\.name) == ["urgent", "later"])
        let urgent = try #require(try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.name == "urgent" })).first)
        #expect(urgent.notes.map(\.title).sorted() == ["Memo", "Plan"])
        // Cascade through the self-referential folders takes the notes with them.
        let work = try #require(try context.fetch(FetchDescriptor<Folder>(predicate: #Predicate { $0.parent == nil })).first)
        context.delete(work)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Note>()).map(\.title) == ["Memo"])
        #expect(try context.fetchCount(FetchDescriptor<Folder>()) == 0)
    }
}
