import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension EngineStorage {
    /// Opens the store of `configuration` (an in-memory one in a temporary folder), sharing
    /// one this process already has open on the same file. `shared`: it was open already.
    static func open(_ configuration: ModelConfiguration, fileSystem: (any FileSystem)?) throws -> (storage: EngineStorage, shared: Bool) {
        var path = FilePaths.path(of: configuration.url)
        var durability = configuration.durability
        var temporary: URL? = nil
        if fileSystem == nil && configuration.isStoredInMemoryOnly {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-memory-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            temporary = dir
            path = dir.appendingPathComponent("memory.store").path
            durability = .deferred
        } else if fileSystem == nil {
            // The default location's folder is made on first use (as SwiftData makes Application
            // Support); the folder of a given url must exist: a mistyped path is an error, not a
            // new empty store somewhere else.
            let folder = FilePaths.standardized(path + "/..")
            if configuration.allowsSave && folder == FilePaths.standardized(ModelConfiguration.defaultDirectoryPath)
                && !FileManager.default.fileExists(atPath: folder) {
                try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
        }
        let options = StoreOptions(durability: durability, cacheSize: configuration.cacheSize, readOnly: !configuration.allowsSave)
        let openedPath = path
        func open() throws -> Store {
            do { return try fileSystem.map { try Store(path: openedPath, options: options, fileSystem: $0) } ?? Store(path: openedPath, options: options) } catch {
                throw EngineStorage.openingError(error, path: openedPath)
            }
        }
        if fileSystem == nil && !configuration.isStoredInMemoryOnly {
            let (opened, shared) = try OpenStores.shared.store(at: OpenStores.key(for: path), readOnly: options.readOnly, open: open)
            return (EngineStorage(opened: opened, temporaryDirectory: nil), shared)
        }
        return (EngineStorage(opened: OpenStore(store: try open(), key: nil), temporaryDirectory: temporary), false)
    }
}

/// StrataEngine's storage provider, the default: a store file per configuration (an in-memory
/// configuration's in a temporary folder), opened once per process, and migration copies made
/// beside it (`EngineStoreCopy`). `fileSystem` is the engine's fault seam (nil: the real disk,
/// and stores shared between the containers of the process).
@_spi(StorageBackend)
public struct EngineStorageProvider: StorageProvider, @unchecked Sendable {
    let fileSystem: (any FileSystem)?

    public init() { fileSystem = nil }

    /// Every file operation through `fileSystem`, for tests that fail writes or cut the power.
    init(fileSystem: (any FileSystem)?) { self.fileSystem = fileSystem }

    public func open(_ configuration: ModelConfiguration) throws -> OpenedStorage {
        let (engine, shared) = try EngineStorage.open(configuration, fileSystem: fileSystem)
        return OpenedStorage(backend: engine, location: engine.store.path, isShared: shared)
    }

    public func prepareCopy(of configuration: ModelConfiguration) throws -> (any PreparedStoreCopy)? {
        guard !configuration.isStoredInMemoryOnly else { return nil }
        return try EngineStoreCopy(path: FilePaths.path(of: configuration.url), fileSystem: fileSystem ?? DiskFileSystem(), shared: fileSystem == nil)
    }
}

extension EngineStorage {
    /// A store file that may not be written is `.readOnly`, with the object layer's way to
    /// read it; anything else is the engine's error, wrapped.
    static func openingError(_ error: any Error, path: String) -> any Error {
        guard let store = error as? StoreError, store.code == .readOnly else { return StrataError.store(error, while: "open the store at \(path)") }
        let reason = (store.underlying as? SystemError).map { " (\($0.reason))" } ?? ""
        return StrataError(.readOnly, "Strata could not open the store at \(path) for saving: its file may not be written\(reason). To read it, open it with allowsSave: false (ModelConfiguration(url:allowsSave:)); to save to it, change its permissions or mount.",
                           underlying: store)
    }
}
