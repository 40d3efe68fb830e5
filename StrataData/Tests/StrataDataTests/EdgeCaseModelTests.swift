import Foundation
import Testing
import StrataData

// Declarations the macros meet in real model files.

/// An initializer whose arguments all have defaults: `Settings()` is the user's, as in SwiftData.
@Model final class Settings {
    var theme: String
    var fontSize: Int
    init(theme: String = "light", fontSize: Int = 12) { self.theme = theme; self.fontSize = fontSize }
}

/// Names that need backticks, implicitly unwrapped and spelled-out optionals, a nested type.
@Model final class Odd {
    enum Kind: String, Codable { case plain, fancy }
    var `default`: Int = 0
    var `class`: String?
    var legacy: String!
    var maybe: Optional<Int> = nil   // spelled out, Swift gives it no nil by itself
    var kind: Kind = .plain
    var counts: [String: [Int]] = [:]
    private(set) var visits: Int = 0
    init() { legacy = "old" }
    func visit() { visits += 1 }
}

/// A relationship whose inverse is declared on one side only (declared on both, `@Relationship`
/// arguments refer to each other and Swift reports a circular reference, as with SwiftData).
@Model final class Owner {
    var name: String = ""
    @Relationship(inverse: \Pet.owner) var pets: [Pet] = []
    init(name: String) { self.name = name }
}

@Model final class Pet {
    var name: String = ""
    var owner: Owner?
    init(name: String) { self.name = name }
}

@Suite struct EdgeCaseModelTests {
    @Test func anInitWithDefaultedArgumentsIsTheOneCalledWithout() {
        let settings = Settings()
        #expect(settings.theme == "light" && settings.fontSize == 12)
    }

    @Test func oddPropertyNamesAndTypes() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: Odd.self, configurations: config))
            let odd = Odd()
            odd.default = 7
            odd.class = "c"
            odd.maybe = 3
            odd.kind = .fancy
            odd.counts = ["a": [1, 2]]
            odd.visit()
            #expect(odd.legacy == "old")
            odd.legacy = nil
            context.insert(odd)
            context.insert(Odd())
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: Odd.self, configurations: config))
        let all = try context.fetch(FetchDescriptor<Odd>(sortBy: [SortDescriptor(\.default)]))
        #expect(all.map(\.default) == [0, 7])
        #expect(all[0].class == nil && all[0].maybe == nil && all[0].legacy == "old" && all[0].kind == .plain)
        #expect(all[1].class == "c" && all[1].maybe == 3 && all[1].legacy == nil && all[1].kind == .fancy)
        #expect(all[1].counts == ["a": [1, 2]] && all[1].visits == 1 && all[0].visits == 0)
        #expect(try context.fetchCount(FetchDescriptor<Odd>(predicate: #Predicate { $0.class == "c" })) == 1)
    }

    @Test func anInverseDeclaredOnOneSide() throws {
        let context = ModelContext(try ModelContainer(for: Owner.self, Pet.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        let ada = Owner(name: "Ada")
        context.insert(ada)
        let rex = Pet(name: "Rex")
        rex.owner = ada
        #expect(ada.pets.map(\.name) == ["Rex"])
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Pet>()).first?.owner === ada)
    }
}
