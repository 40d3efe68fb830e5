import Foundation
import Testing
import StrataData

// SwiftData behaviour that the macros spell and the object layer gives (issue 17, item 3):
// `.ephemeral`, `.transformable(by:)` on a type that is not Codable, optional to-many.

@Model final class Draft {
    var title: String = ""
    @Attribute(.ephemeral) var cursor: Int = 0
    @Transient var isOpen = false
    init(title: String) { self.title = title }
}

/// Not Codable: stored through its transformer.
final class Tint: Equatable {
    let value: UInt8
    init(_ value: UInt8) { self.value = value }
    static func == (a: Tint, b: Tint) -> Bool { a.value == b.value }
}

final class TintTransformer: ValueTransformer {
    override class func allowsReverseTransformation() -> Bool { true }
    override func transformedValue(_ value: Any?) -> Any? { (value as? Tint).map { Data([$0.value]) } }
    override func reverseTransformedValue(_ value: Any?) -> Any? { (value as? Data)?.first.map(Tint.init) }
}

@Model final class Sticker {
    var name: String
    @Attribute(.transformable(by: TintTransformer.self)) var tint: Tint
    @Attribute(.transformable(by: TintTransformer.self)) var shadow: Tint?
    init(name: String, tint: Tint, shadow: Tint? = nil) { self.name = name; self.tint = tint; self.shadow = shadow }
}

@Suite struct RuntimeBehaviourTests {
    @Test func aTransformableAttributeOfATypeThatIsNotCodable() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: Sticker.self, configurations: config))
            context.insert(Sticker(name: "a", tint: Tint(7), shadow: Tint(9)))
            context.insert(Sticker(name: "b", tint: Tint(8)))
            try context.save()
        }
        let loaded = try ModelContext(try ModelContainer(for: Sticker.self, configurations: config))
            .fetch(FetchDescriptor<Sticker>(sortBy: [SortDescriptor(\.name)]))
        #expect(loaded.map(\.tint) == [Tint(7), Tint(8)])
        #expect(loaded.map(\.shadow) == [Tint(9), nil])
    }

    @Test func anEphemeralAttributeIsNeverWritten() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let context = ModelContext(try ModelContainer(for: Draft.self, configurations: config))
            let draft = Draft(title: "a")
            draft.cursor = 42
            context.insert(draft)
            try context.save()
        }
        let loaded = try ModelContext(try ModelContainer(for: Draft.self, configurations: config)).fetch(FetchDescriptor<Draft>())
        #expect(loaded.map(\.title) == ["a"])
        #expect(loaded.map(\.cursor) == [0], "a fetched object's ephemeral property holds its declaration's default")
    }

    // Optional to-many relationships (`var animals: [Animal]? = []`, as CloudKit-ready models
    // declare them): the macro writes the same code for them as for `[Animal]`.
    @Test
    func anOptionalToManyRelationship() throws {
        let context = ModelContext(try ModelContainer(for: Zoo.self, Animal.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        let zoo = Zoo(name: "z")
        context.insert(zoo)
        zoo.animals?.append(Animal(name: "lion"))
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Animal>()).first?.zoo === zoo)
        #expect(zoo.animals?.map(\.name) == ["lion"])
    }
}

@Model final class Zoo {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Animal.zoo) var animals: [Animal]? = []
    init(name: String) { self.name = name }
}

@Model final class Animal {
    var name: String
    var zoo: Zoo?
    init(name: String) { self.name = name }
}
