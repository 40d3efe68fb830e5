// A full disk under ModelContext.save(), as a user meets it: the save throws, the message says
// to free some space and try again, and doing that works, with the same context and container,
// without restarting anything. Through the fault seam (a SimulatedFileSystem whose writes or
// syncs fail with ENOSPC until "space is freed").
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

final class DiskNote: PersistentModel {
    @Attribute(.unique) var number: Int
    @Attribute var title: String
    @Attribute(.externalStorage) var scan: Data = Data()
    init() {}
    init(_ number: Int, scan: Bool = false) {
        self.number = number
        title = "note \(number)"
        if scan { self.scan = Data(repeating: UInt8(number % 256), count: 300) }
    }
}

@Suite struct DiskFullTests {
    static let url = URL(fileURLWithPath: "/notes.store")

    static func open(_ fs: SimulatedFileSystem) throws -> ModelContainer {
        try ModelContainer(for: Schema([DiskNote.self]), configurations: [ModelConfiguration(url: url)], fileSystem: fs)
    }

    /// The notes a fresh container on `image` finds, by number, with their titles and scans.
    static func notes(in image: SimulatedFileSystem) throws -> [Int: String] {
        let context = ModelContext(try open(image))
        let all = try context.fetch(FetchDescriptor<DiskNote>(sortBy: [SortDescriptor(\.number)]))
        for note in all where note.number % 3 == 0 {
            #expect(note.scan == Data(repeating: UInt8(note.number % 256), count: 300), "the scan of note \(note.number)")
        }
        return Dictionary(uniqueKeysWithValues: all.map { ($0.number, $0.title) })
    }

    static func expected(_ numbers: ClosedRange<Int>, changed: Set<Int> = []) -> [Int: String] {
        Dictionary(uniqueKeysWithValues: numbers.map { ($0, changed.contains($0) ? "changed \($0)" : "note \($0)") })
    }

    /// ENOSPC at the Nth write or sync of a save (a blob file's or the store file's), lasting
    /// until space is freed: the save throws `.diskFull` saying to free space and try again;
    /// trying again while the disk is full throws the same; once space is freed the same
    /// context saves, and a fresh open (as is, and after a power cut) holds exactly every note.
    @Test(arguments: [SimulatedFileSystem.Operation.write, .sync], [1, 2, 3])
    func freeSpaceThenSaveAgain(operation: SimulatedFileSystem.Operation, n: Int) throws {
        let fs = SimulatedFileSystem()
        let container = try Self.open(fs)
        let context = ModelContext(container)
        for i in 1...10 { context.insert(DiskNote(i, scan: i % 3 == 0)) }
        try context.save()
        let kept = try context.fetch(FetchDescriptor<DiskNote>(predicate: #Predicate { $0.number == 2 }))

        fs.fail(operation, at: n, errno: SystemError.noSpace, persistent: true)
        for i in 11...15 { context.insert(DiskNote(i, scan: i % 3 == 0)) }
        kept.first?.title = "changed 2"
        let error = try #require(throws: StrataError.self) { try context.save() }
        let cause = try #require(error.underlying as? StoreError, "\(error)")
        #expect(cause.code == .diskFull, "\(error)")
        #expect(error.message.contains("Free some space, then try again"), "\(error)")
        #expect(error.localizedDescription.contains("Free some space, then try again"))
        #expect(try Self.notes(in: fs.clone()) == Self.expected(1...10), "a failed save leaves nothing of itself")

        // Still full: the same answer, and still nothing saved.
        #expect(throws: StrataError.self) { try context.save() }
        #expect(try Self.notes(in: fs.clone()) == Self.expected(1...10))

        fs.disarm()   // space freed
        try context.save()
        #expect(!context.hasChanges)
        let all = Self.expected(1...15, changed: [2])
        #expect(try Self.notes(in: fs.clone()) == all, "the store as it is")
        #expect(try Self.notes(in: fs.powerLoss(.dropUnsynced)) == all, "after a power cut: the save is durable")
        // The container goes on as usual.
        context.insert(DiskNote(16))
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<DiskNote>()) == 16)
        #expect(try Self.notes(in: fs.powerLoss(.dropUnsynced)).count == 16)
        #expect(fs.syncsRetriedAfterFailure == 0, "a sync went through the descriptor whose sync failed")
    }
}
