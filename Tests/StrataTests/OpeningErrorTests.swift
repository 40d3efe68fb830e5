// What a person sees when a store cannot be opened: a typed error whose words say what is
// wrong and what to do, once, in `description` and in `localizedDescription` alike.
import Foundation
import Testing
import Strata
import StrataEngine
import StrataTestSupport

@Suite struct OpeningErrorTests {
    /// The error a container's creation throws, as a `StrataError`.
    func openingError(_ configuration: ModelConfiguration, fileSystem: (any FileSystem)? = nil,
                      sourceLocation: SourceLocation = #_sourceLocation) throws -> StrataError {
        do {
            _ = try ModelContainer(for: Schema([Trip.self]), configurations: [configuration], fileSystem: fileSystem)
        } catch let error as StrataError {
            return error
        }
        throw Failure("the container opened")
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Each piece of the text appears once, and `localizedDescription` is the same text.
    func expectSaidOnce(_ error: StrataError, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = error.description
        #expect((error as any Error).localizedDescription == text, sourceLocation: sourceLocation)
        #expect(!text.contains("The operation could not be completed"), sourceLocation: sourceLocation)
        if let store = error.underlying as? StoreError {
            #expect(text.components(separatedBy: store.message).count <= 2, "the engine's message at most once: \(text)", sourceLocation: sourceLocation)
            #expect(text.components(separatedBy: store.path).count == 2, "the path once: \(text)", sourceLocation: sourceLocation)
            #expect((store as any Error).localizedDescription == store.description, sourceLocation: sourceLocation)
        }
    }

    /// A folder given as the store's path: `.notAStore`, in words that say so, and nothing about
    /// a transaction (an open is not one).
    @Test(arguments: [true, false])
    func aFolderIsNotAStore(allowsSave: Bool) throws {
        let dir = TemporaryDirectory()
        let error = try openingError(ModelConfiguration(url: dir.url, allowsSave: allowsSave))
        #expect(error.code == .storeFailure, "\(error)")
        #expect((error.underlying as? StoreError)?.code == .notAStore, "\(error)")
        #expect(error.message.contains("This path is a folder, not a store file"), "\(error)")
        #expect(!error.description.contains("transaction"), "\(error)")
        expectSaidOnce(error)
    }

    /// Decided: the folder of a store's url must exist. A mistyped path is an error naming the
    /// folder, and nothing is created; only the default location's folder is made on first use.
    @Test func aMissingFolderIsNotCreated() throws {
        let dir = TemporaryDirectory()
        let folder = dir.url.appendingPathComponent("no-such-folder")
        let error = try openingError(ModelConfiguration(url: folder.appendingPathComponent("trips.store")))
        #expect((error.underlying as? StoreError)?.code == .notFound, "\(error)")
        #expect(error.message.contains("The folder \(folder.path) does not exist"), "\(error)")
        #expect(error.message.contains("Create the folder first"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: folder.path), "the folder was created")
        expectSaidOnce(error)
        // Once the folder exists, the same configuration opens.
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        _ = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(url: folder.appendingPathComponent("trips.store")))
    }

    /// A store file that may not be written (permissions, a read-only mount) opened for saving:
    /// `.readOnly`, with the way to read it. Through the fault seam, since CI runs as root.
    @Test(arguments: [SystemError.permissionDenied, SystemError.readOnlyFileSystem])
    func aFileThatMayNotBeWrittenIsReadOnly(errno: Int32) throws {
        let fs = SimulatedFileSystem()
        let configuration = ModelConfiguration(url: URL(fileURLWithPath: "/trips.store"))
        do {
            let context = ModelContext(try ModelContainer(for: Schema([Trip.self]), configurations: [configuration], fileSystem: fs))
            context.insert(Trip(name: "Lisbon", startDate: Date(timeIntervalSince1970: 0)))
            try context.save()
        }
        fs.fail(.open, at: 1, errno: errno)
        let error = try openingError(configuration, fileSystem: fs)
        #expect(error.code == .readOnly, "\(error)")
        #expect((error.underlying as? StoreError)?.code == .readOnly, "\(error)")
        #expect(error.message.contains("allowsSave: false"), "\(error)")
        expectSaidOnce(error)
        // As the message says: without saving, it opens and reads.
        let reader = try ModelContainer(for: Schema([Trip.self]), configurations: [ModelConfiguration(url: configuration.url, allowsSave: false)],
                                        fileSystem: fs)
        #expect(try ModelContext(reader).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Lisbon"])
    }

    /// The engine alone says `.readOnly` too, with its own way to read the store.
    @Test func theEngineSaysReadOnly() throws {
        let fs = SimulatedFileSystem()
        try Store(path: "/s.strata", options: StoreOptions(), fileSystem: fs).close()
        fs.fail(.open, at: 1, errno: SystemError.permissionDenied)
        #expect { try Store(path: "/s.strata", options: StoreOptions(), fileSystem: fs) } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .readOnly && error.message.contains("StoreOptions(readOnly: true)") && !error.message.contains("transaction")
        }
        _ = try Store(path: "/s.strata", options: StoreOptions(readOnly: true), fileSystem: fs)
    }
}
