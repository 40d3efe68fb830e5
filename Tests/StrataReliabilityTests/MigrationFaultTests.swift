// A migration plan's run is all-or-nothing: power cuts, full disks and I/O errors at every
// call of a migration, through the engine's fault seam (a SimulatedFileSystem under
// ModelContainer(for:migrationPlan:configurations:)).
//
// The plan deletes objects in willMigrate (their external-storage blobs go), fills a new
// property and replaces an external value in didMigrate (a new blob file), so the run copies
// the store, links blob files, removes some and adds others, saves, and swaps the copy in.
// After each cut the disk must hold the store exactly as it was (V1) or exactly migrated (V2),
// and opening it with the plan must then give the migrated store.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

enum NotesV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self] }
    final class Note: PersistentModel {
        @Attribute(.unique) var key: Int = 0
        @Attribute var text: String = ""
        @Attribute(.externalStorage) var attachment: Data? = nil
        init() {}
    }
}

enum NotesV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Note.self] }
    final class Note: PersistentModel {
        @Attribute(.unique) var key: Int = 0
        @Attribute var text: String = ""
        @Attribute(.externalStorage) var attachment: Data? = nil
        @Attribute var length: Int = -1
        init() {}
    }
}

enum NotesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: { context in
            try context.delete(model: NotesV1.Note.self, where: #Predicate { $0.key % 4 == 0 })
        }, didMigrate: { context in
            for note in try context.fetch(FetchDescriptor<NotesV2.Note>()) {
                note.length = note.text.count
                if note.key == 1 { note.attachment = MigrationFaults.attachment(100) }
            }
        })]
    }
}

enum MigrationFaults {
    static let path = "/notes.store"
    static let keys = 1...10

    static func attachment(_ key: Int) -> Data? {
        key % 3 == 0 ? nil : Data((0..<(600 + key * 37)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key) })
    }

    /// A note as the test compares it: key, text, length (nil in V1), attachment.
    struct Row: Equatable, CustomStringConvertible {
        var key: Int, text: String, length: Int?, attachment: Data?
        var description: String { "\(key) \(text) \(length.map(String.init) ?? "-") \(attachment?.count ?? 0)B" }
    }

    static let before: [Row] = keys.map { Row(key: $0, text: String(repeating: "n\($0) ", count: $0), length: nil, attachment: attachment($0)) }
    static let after: [Row] = before.filter { $0.key % 4 != 0 }.map {
        Row(key: $0.key, text: $0.text, length: $0.text.count, attachment: $0.key == 1 ? attachment(100) : $0.attachment)
    }

    static func configuration() -> ModelConfiguration { ModelConfiguration(url: URL(fileURLWithPath: path)) }

    /// A disk holding the V1 store, everything on it durable.
    static func base() throws -> SimulatedFileSystem {
        let fs = SimulatedFileSystem()
        let container = try ModelContainer(for: Schema(NotesV1.models), configurations: [configuration()], fileSystem: fs)
        let context = ModelContext(container)
        for row in before {
            let note = NotesV1.Note()
            note.key = row.key; note.text = row.text; note.attachment = row.attachment
            context.insert(note)
        }
        try context.save()
        return fs.powerLoss(.keepUnsynced)
    }

    static func migrate(_ fs: SimulatedFileSystem) throws -> ModelContainer {
        try ModelContainer(for: Schema(NotesV2.models), migrationPlan: NotesPlan.self, configurations: [configuration()], fileSystem: fs)
    }

    static func rowsV1(_ fs: SimulatedFileSystem) throws -> [Row] {
        let container = try ModelContainer(for: Schema(NotesV1.models), configurations: [configuration()], fileSystem: fs)
        return try ModelContext(container).fetch(FetchDescriptor<NotesV1.Note>(sortBy: [SortDescriptor(\.key)]))
            .map { Row(key: $0.key, text: $0.text, length: nil, attachment: $0.attachment) }
    }

    static func rowsV2(_ container: ModelContainer) throws -> [Row] {
        try ModelContext(container).fetch(FetchDescriptor<NotesV2.Note>(sortBy: [SortDescriptor(\.key)]))
            .map { Row(key: $0.key, text: $0.text, length: $0.length, attachment: $0.attachment) }
    }

    /// The schema version the store at `path` records, or nil (a store written without a plan).
    static func recordedVersion(_ fs: SimulatedFileSystem) throws -> Schema.Version? {
        let store = try Store(path: path, options: StoreOptions(readOnly: true), fileSystem: fs)
        defer { store.close() }
        return try store.read { tx in
            try tx.metadata("strata.schema.version").map { try JSONDecoder().decode(Schema.Version.self, from: Data($0)) }
        }
    }

    /// `image` holds the store as it was or fully migrated, nothing in between; opening it
    /// with the plan then gives the migrated store, clean, with no leftovers of the run.
    static func expectBeforeOrAfter(_ image: SimulatedFileSystem, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let version = try recordedVersion(image.clone())
            if version == nil || version == NotesV1.versionIdentifier {
                #expect(try rowsV1(image.clone()) == before, "\(context): the store is not as it was", sourceLocation: sourceLocation)
            } else {
                #expect(version == NotesV2.versionIdentifier, "\(context): version \(String(describing: version))", sourceLocation: sourceLocation)
                let container = try ModelContainer(for: Schema(NotesV2.models), configurations: [configuration()], fileSystem: image.clone())
                #expect(try rowsV2(container) == after, "\(context): the migrated store is not whole", sourceLocation: sourceLocation)
            }
            let container = try migrate(image)
            #expect(try rowsV2(container) == after, "\(context): migrating again", sourceLocation: sourceLocation)
            #expect(try container.stores.first?.verify().isClean == true, "\(context): verify", sourceLocation: sourceLocation)
            #expect(!image.fileExists(path + ".migrating") && !image.fileExists(path + ".migrating.blobs"),
                    "\(context): leftovers of the run", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(context): \(error)", sourceLocation: sourceLocation)
        }
    }

    /// The names of the store's files (the store and its blob folder), each with its size and
    /// a hash of its bytes.
    static func files(_ fs: SimulatedFileSystem) -> [String: String] {
        var out: [String: String] = [:]
        func summary(_ bytes: [UInt8]?) -> String {
            guard let bytes else { return "missing" }
            return "\(bytes.count) B, fnv \(bytes.reduce(UInt64(0xcbf29ce484222325)) { ($0 ^ UInt64($1)) &* 0x100000001b3 })"
        }
        // Less the zeros a writer wrote ahead of its commits (opening cuts them off): they hold nothing.
        out[path] = summary(fs.bytes(of: path).map { bytes in Array(bytes[..<((bytes.lastIndex { $0 != 0 } ?? -1) + 1)]) })
        for name in (try? fs.listDirectory(path + ".blobs")) ?? [] { out[name] = summary(fs.bytes(of: path + ".blobs/" + name)) }
        return out
    }
}

@Suite struct MigrationFaultTests {
    typealias Operation = SimulatedFileSystem.Operation
    static let operations: [Operation] = [.open, .write, .sync, .syncDirectory, .rename, .truncate, .remove, .createDirectory, .link, .removeDirectory]

    @Test func aCleanRunMigratesAndLeavesNothingBehind() throws {
        let fs = try MigrationFaults.base()
        #expect(try MigrationFaults.rowsV1(fs.clone()) == MigrationFaults.before)
        let blobsBefore = try fs.listDirectory(MigrationFaults.path + ".blobs").count
        var container: ModelContainer? = try MigrationFaults.migrate(fs)
        #expect(try MigrationFaults.rowsV2(try #require(container)) == MigrationFaults.after)
        #expect(try container?.stores.first?.verify().isClean == true)
        container = nil
        #expect(try MigrationFaults.recordedVersion(fs) == NotesV2.versionIdentifier)
        #expect(!fs.fileExists(MigrationFaults.path + ".migrating") && !fs.fileExists(MigrationFaults.path + ".migrating.blobs"))
        // The folder holds exactly the migrated store's blobs: the new attachment's joined it,
        // the deleted notes' and the replaced attachment's went.
        #expect(blobsBefore == MigrationFaults.before.filter { $0.attachment != nil }.count)
        #expect(try fs.listDirectory(MigrationFaults.path + ".blobs").count == MigrationFaults.after.filter { $0.attachment != nil }.count)
        // Opening again runs nothing and writes nothing.
        let size = fs.bytes(of: MigrationFaults.path)?.count
        _ = try MigrationFaults.migrate(fs)
        #expect(fs.bytes(of: MigrationFaults.path)?.count == size)
    }

    /// The power goes at each call of the migration; whatever the disk kept (only what was
    /// synced, everything, or a torn mix), the store is as it was or migrated, never between.
    @Test func powerCutAtEveryCallOfAMigration() throws {
        let base = try MigrationFaults.base()
        var cuts = 0, images = 0
        for operation in Self.operations {
            for point in 1... {
                let fs = base.clone()
                fs.cutPower(at: operation, n: point, mode: .dropUnsynced)
                _ = try? MigrationFaults.migrate(fs)
                guard fs.isPoweredOff else { break }   // the migration was done before call `point`
                cuts += 1
                for (mode, image) in [("dropUnsynced", try #require(fs.powerLossImage)), ("keepUnsynced", fs.powerLoss(.keepUnsynced)),
                                      ("tearUnsynced", fs.powerLoss(.tearUnsynced(seed: UInt64(point * 7 + cuts))))] {
                    images += 1
                    MigrationFaults.expectBeforeOrAfter(image, "power cut at \(operation) \(point), \(mode)")
                }
            }
        }
        #expect(cuts > 40)
        print("MigrationFaultTests: \(cuts) power cuts during a migration, \(images) disk images checked")
    }

    /// ENOSPC or EIO at each call: the open throws a typed error and the store's files are
    /// byte for byte as they were; once the disk works, opening with the plan migrates it.
    @Test(arguments: [SystemError.noSpace, SystemError.ioError])
    func failedCallAtEveryPointOfAMigration(errno: Int32) throws {
        let base = try MigrationFaults.base()
        let original = MigrationFaults.files(base)
        var failures = 0
        for operation in Self.operations {
            for point in 1... {
                let fs = base.clone()
                fs.fail(operation, at: point, errno: errno)
                let context = "errno \(errno) at \(operation) \(point)"
                do {
                    let container = try MigrationFaults.migrate(fs)
                    guard fs.faultsTriggered > 0 else { break }   // the migration was done before call `point`
                    // The failed call was one whose failure changes nothing (cleaning up).
                    #expect(try MigrationFaults.rowsV2(container) == MigrationFaults.after, "\(context)")
                    continue
                } catch let error as StrataError {
                    failures += 1
                    #expect(error.code == .storeFailure, "\(context): \(error)")
                } catch {
                    Issue.record("\(context): an untyped error: \(error)")
                }
                // Failed before the swap: the store's files are as they were. Failed after it
                // (making the rename durable, or opening the migrated store): it is migrated.
                if MigrationFaults.files(fs) != original {
                    #expect(try MigrationFaults.recordedVersion(fs.clone()) == NotesV2.versionIdentifier, "\(context): the store's files changed, and it is not migrated")
                }
                fs.disarm()
                MigrationFaults.expectBeforeOrAfter(fs, context)
            }
        }
        #expect(failures > 30)
        print("MigrationFaultTests: errno \(errno): \(failures) failed calls during a migration")
    }
}
