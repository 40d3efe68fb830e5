import Foundation
import Testing
import Strata
import StrataEngine

/// A read-only `ModelContainer` (`allowsSave: false`) on a store another container has open for
/// writing: it opens (once refused as `locked`), sees the writer's durable saves as they come,
/// whole, and cannot save. The engine's locks belong to the open lock file, so a second
/// container in this process stands for another process (`LockTests` runs real processes).
@Suite struct ReadOnlyBesideWriterTests {
    @Test func aReadOnlyContainerReadsAStoreBeingWritten() throws {
        let dir = try ReliabilityDirectory()
        let url = URL(fileURLWithPath: dir.path + "/notes.store")
        let schema = Schema(NotesV1.models)
        let writer = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)])
        let writing = ModelContext(writer)
        func save(_ keys: Range<Int>) throws {
            for key in keys {
                let note = NotesV1.Note()
                note.key = key
                note.text = "note \(key)"
                note.attachment = key % 3 == 0 ? Data(repeating: UInt8(key % 256), count: 5000) : nil
                writing.insert(note)
            }
            try writing.save()
        }
        try save(0..<10)

        let reader = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url, allowsSave: false)])
        func seen() throws -> [Int: String] {
            let notes = try ModelContext(reader).fetch(FetchDescriptor<NotesV1.Note>())
            for note in notes where note.key % 3 == 0 { #expect(note.attachment == Data(repeating: UInt8(note.key % 256), count: 5000)) }
            return Dictionary(uniqueKeysWithValues: notes.map { ($0.key, $0.text) })
        }
        #expect(try seen().count == 10)
        for round in 1...5 {
            try save((round * 10)..<(round * 10 + 10))
            let notes = try seen()
            #expect(notes.count == round * 10 + 10, "every save the writer finished, whole")
            #expect(notes.allSatisfy { $0.value == "note \($0.key)" })
        }
        // Compaction switches files under the reader: it follows.
        try writer.compact()
        try save(60..<70)
        #expect(try seen().count == 70)
        // The reader cannot save; a second writer (another open of the file) is still refused.
        let readContext = ModelContext(reader)
        readContext.insert(NotesV1.Note())
        #expect(throws: StrataError.self) { try readContext.save() }
        do {
            _ = try Store(path: url.path)
            Issue.record("a second writer opened the store")
        } catch let error as StoreError {
            #expect(error.code == .locked)
        }
    }
}
