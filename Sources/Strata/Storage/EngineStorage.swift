import Foundation
import StrataEngine
import StrataRecords

/// The storage seam's implementation on StrataEngine: a `Store`, shared by the containers of
/// this process that open the same file (`OpenStores`).
final class EngineStorage: StorageBackend, @unchecked Sendable {
    let opened: OpenStore
    var store: Store { opened.store }
    /// A folder made for an in-memory configuration, removed with the storage.
    private let temporaryDirectory: URL?

    private init(opened: OpenStore, temporaryDirectory: URL?) {
        self.opened = opened
        self.temporaryDirectory = temporaryDirectory
    }

    deinit {
        if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
    }

    var isReadOnly: Bool { store.options.readOnly }
    /// The engine does not evaluate queries: the object layer reads and filters the rows.
    var evaluatesQueries: Bool { false }
    var rows: RowAllocator { opened.rows }
    func read(_ body: (any StorageReader) throws -> Void) throws { try body(try beginRead()) }
    func beginRead() throws -> any StorageReader {
        try opened.checkNotMigrated()
        return try store.beginRead()
    }
    func beginWrite() throws -> any StorageWriter {
        try opened.checkNotMigrated()
        return try store.beginWrite()
    }
    func sync() throws { try store.sync() }
    func compact() throws { try store.compact() }

    /// Opens the store of `configuration` (an in-memory one in a temporary folder), sharing
    /// one this process already has open on the same file. `shared`: it was open already.
    static func open(_ configuration: ModelConfiguration, fileSystem: (any FileSystem)?) throws -> (storage: EngineStorage, shared: Bool) {
        var path = configuration.url.path
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
            let folder = configuration.url.deletingLastPathComponent()
            if configuration.allowsSave && folder.standardizedFileURL.path == ModelConfiguration.defaultDirectory.standardizedFileURL.path
                && !FileManager.default.fileExists(atPath: folder.path) {
                try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
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

// StrataEngine's transactions are the storage seam's readers and writers.

@_spi(StorageBackend)
extension ReadTransaction: StorageReader {
    public func visitRecord(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try visitRecord(row: row, in: collection, body)
    }

    public func forEachRecord(in collection: CollectionID, from start: RowID?, _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        try forEachRecord(in: collection, from: start, reverse: false, body)
    }

    public func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, _ body: (RowID) throws -> Bool) throws {
        var cursor = try entries(in: index, range: range, reverse: reverse)
        while let row = try cursor.nextRow() {
            if try !body(row) { return }
        }
    }

    /// Whole leaves of the index are passed over without reading their entries.
    public func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, skipping skip: Int, _ body: (RowID) throws -> Bool) throws {
        var cursor = try entries(in: index, range: range, reverse: reverse)
        _ = try cursor.skip(skip)
        while let row = try cursor.nextRow() {
            if try !body(row) { return }
        }
    }

    public func indexID(named name: String, in collection: CollectionID) -> IndexID? { index(named: name, in: collection)?.id }

    public func indexNames(of collection: CollectionID) -> [(id: IndexID, name: String)] { indexes(of: collection).map { ($0.id, $0.name) } }

    /// The commit the snapshot reads (a read-only store follows the writer's published one).
    public var commitSequence: UInt64? { sequence }

    /// StrataEngine does not evaluate queries: the object layer reads and filters the rows.
    public func candidates(_ query: StorageQuery) throws -> StoreCandidates? { nil }
}

@_spi(StorageBackend)
extension WriteTransaction: StorageWriter {
    public func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                              indexKeys: [IndexKey], previousKeys: [IndexKey]) throws -> StorageConflict? {
        try putUnlessConflicting(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys)
            .map { StorageConflict(index: $0.index, existingRow: $0.existingRow) }
    }

    public func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey],
                              previousKeysOf: (UnsafeRawBufferPointer) throws -> [IndexKey]) throws -> StorageConflict? {
        try putUnlessConflicting(record, row: row, in: collection, indexKeys: indexKeys, previousKeysOf: previousKeysOf)
            .map { StorageConflict(index: $0.index, existingRow: $0.existingRow) }
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
        return try EngineStoreCopy(path: configuration.url.path, fileSystem: fileSystem ?? DiskFileSystem(), shared: fileSystem == nil)
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
