import Foundation
import Observation
import Testing
import StrataData

// SwiftData behaviour that the macros already spell but the object layer does not give yet
// (issue 17, items 2 and 3). Each test is a known issue, reported as such on every run: when
// the runtime catches up, `withKnownIssue` fails ("known issue was not recorded") and the
// wrapper comes off. Nothing here needs a change to what the macros write.

@Model final class Draft {
    var title: String = ""
    @Attribute(.ephemeral) var cursor: Int = 0
    @Transient var isOpen = false
    init(title: String) { self.title = title }
}

/// A flag set from an observation's `onChange` (which may run on another thread).
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false
    func raise() { lock.withLock { raised = true } }
    var isRaised: Bool { lock.withLock { raised } }
}

@Suite struct WaitingForRuntimeTests {
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
        withKnownIssue("waiting for the runtime: @Attribute(.ephemeral) is persisted today (issue 17, item 3)") {
            #expect(loaded.map(\.cursor) == [0], "a fetched object's ephemeral property holds its declaration's default")
        }
    }

    @Test func settingAPropertyFiresObservation() {
        let draft = Draft(title: "a")
        for property in ["title", "isOpen"] {
            let changed = Flag()
            withObservationTracking {
                _ = property == "title" ? draft.title as Any : draft.isOpen as Any
            } onChange: {
                changed.raise()
            }
            if property == "title" { draft.title = "b" } else { draft.isOpen = true }
            withKnownIssue("waiting for the runtime: models are not Observable yet (issue 17, item 2); _modelGet/_modelSet are where it goes") {
                #expect(changed.isRaised, "setting \(property) fires withObservationTracking")
            }
        }
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
