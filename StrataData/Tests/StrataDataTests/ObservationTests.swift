import Foundation
import Observation
import Testing
import StrataData

// A @Model class is Observable as SwiftData's are: the macro's getters and setters go through
// `_modelGet` / `_modelSet`, which observe the property and notify its observers (issue 17,
// item 2). The same cases as the root package's ObservationTests, spelled with the macros.

/// Counts how often `withObservationTracking`'s onChange fires for what `read` reads.
private final class Fired: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }

    init(_ read: () -> Void) {
        withObservationTracking(read) { [self] in lock.withLock { count += 1 } }
    }
}

@Model final class Note {
    var title: String = ""
    @Transient var isOpen = false
    init(title: String) { self.title = title }
}

@Suite struct MacroObservationTests {
    private func container() throws -> ModelContainer {
        try ModelContainer(for: Note.self, Author.self, Book.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    }

    @Test func settingAPropertyOfANewObjectFires() {
        let note = Note(title: "a")
        let title = Fired { _ = note.title }
        let open = Fired { _ = note.isOpen }
        note.title = "b"
        #expect(title.value == 1, "a persisted property")
        #expect(open.value == 0, "another property is not observed")
        note.isOpen = true
        #expect(open.value == 1, "a transient property")
    }

    @Test func settingAPropertyOfAFetchedObjectFires() throws {
        let container = try container()
        let setup = ModelContext(container)
        setup.insert(Note(title: "a"))
        try setup.save()
        let context = ModelContext(container)
        let note = try #require(try context.fetch(FetchDescriptor<Note>()).first)
        let title = Fired { _ = note.title }
        note.title = "b"
        #expect(title.value == 1)
        #expect(note.hasChanges)
    }

}
