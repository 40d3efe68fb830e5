import Foundation
@_spi(StorageBackend) import Strata
import StrataEngine

// A second storage backend, written against the storage seam's public SPI only (no
// `@testable import`): what a backend in a package of its own sees. It keeps every store in
// memory, by configuration URL, with snapshot reads (a reader copies the committed state) and
// one writer (its copy replaces the state on commit). With `evaluatesQueries` it selects rows
// for a query's index terms itself, as a SQL backend would with a WHERE clause.

/// One store's committed state.
struct MemoryState {
    struct Index {
        let collection: CollectionID
        let name: String
        let unique: Bool
        var entries: [(key: [UInt8], row: RowID)] = []
    }

    var collections: [String: CollectionID] = [:]
    var indexes: [IndexID: Index] = [:]
    var records: [CollectionID: [RowID: [UInt8]]] = [:]
    var nextRow: [CollectionID: RowID] = [:]
    var blobs: [UInt64: [UInt8]] = [:]
    var metadata: [String: [UInt8]] = [:]
    var nextID: UInt64 = 1
}

/// The stores of a provider, by location, and what the tests count.
final class MemoryStores: @unchecked Sendable {
    private let lock = NSLock()
    private var states: [String: MemoryState] = [:]
    private var candidateCalls = 0
    private var failing: String? = nil

    func state(_ location: String) -> MemoryState? { lock.withLock { states[location] } }
    /// Makes every read of the store at `location` fail from now on (nil: none fails), as a
    /// server that went away or a file that could not be read would.
    func failReads(of location: String?) { lock.withLock { failing = location } }
    func readsFail(_ location: String) -> Bool { lock.withLock { failing == location } }
    func set(_ location: String, _ state: MemoryState?) { lock.withLock { states[location] = state } }
    func countCandidates() { lock.withLock { candidateCalls += 1 } }
    var candidatesAsked: Int { lock.withLock { candidateCalls } }
}

struct MemoryProvider: StorageProvider {
    let stores = MemoryStores()
    var evaluatesQueries = false

    func open(_ configuration: ModelConfiguration) throws -> OpenedStorage {
        let location = configuration.isStoredInMemoryOnly ? "memory:\(UUID())" : configuration.url.path
        if stores.state(location) == nil { stores.set(location, MemoryState()) }
        return OpenedStorage(backend: MemoryBackend(stores: stores, location: location, evaluatesQueries: evaluatesQueries,
                                                    readOnly: !configuration.allowsSave),
                             location: location, isShared: false)
    }

    func prepareCopy(of configuration: ModelConfiguration) throws -> (any PreparedStoreCopy)? {
        guard !configuration.isStoredInMemoryOnly, stores.state(configuration.url.path) != nil else { return nil }
        return MemoryStoreCopy(stores: stores, original: configuration.url.path)
    }
}

/// The error of a read `MemoryStores.failReads(of:)` made fail.
struct MemoryReadFailure: Error, Equatable {
    let location: String
}

final class MemoryBackend: StorageBackend, @unchecked Sendable {
    let stores: MemoryStores
    let location: String
    let evaluatesQueries: Bool
    let isReadOnly: Bool
    let rows = RowAllocator()
    private let writerGate = NSLock()

    init(stores: MemoryStores, location: String, evaluatesQueries: Bool, readOnly: Bool) {
        self.stores = stores
        self.location = location
        self.evaluatesQueries = evaluatesQueries
        self.isReadOnly = readOnly
    }

    func read(_ body: (any StorageReader) throws -> Void) throws { try body(try beginRead()) }
    func beginRead() throws -> any StorageReader {
        if stores.readsFail(location) { throw MemoryReadFailure(location: location) }
        return MemoryReader(stores.state(location) ?? MemoryState(), stores: stores)
    }
    func beginWrite() throws -> any StorageWriter {
        writerGate.lock()
        return MemoryWriter(stores.state(location) ?? MemoryState(), stores: stores, location: location) { [writerGate] in writerGate.unlock() }
    }
    func sync() throws {}
    func compact() throws {}
}

class MemoryReader: StorageReader {
    var state: MemoryState
    let stores: MemoryStores

    init(_ state: MemoryState, stores: MemoryStores) {
        self.state = state
        self.stores = stores
    }

    func collection(named name: String) -> CollectionID? { state.collections[name] }
    func indexID(named name: String, in collection: CollectionID) -> IndexID? {
        state.indexes.first { $0.value.collection == collection && $0.value.name == name }?.key
    }
    func indexNames(of collection: CollectionID) -> [(id: IndexID, name: String)] {
        state.indexes.filter { $0.value.collection == collection }.map { ($0.key, $0.value.name) }
    }
    func count(in collection: CollectionID) throws -> Int { state.records[collection]?.count ?? 0 }
    func nextRowID(in collection: CollectionID) throws -> RowID { state.nextRow[collection] ?? 1 }

    func visitRecord(_ row: RowID, in collection: CollectionID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard let record = state.records[collection]?[row] else { return false }
        try record.withUnsafeBytes { try body($0) }
        return true
    }

    func forEachRecord(in collection: CollectionID, from start: RowID?, _ body: (RowID, UnsafeRawBufferPointer) throws -> Bool) throws {
        let records = state.records[collection] ?? [:]
        for row in records.keys.sorted() where row >= (start ?? 0) {
            guard try records[row]!.withUnsafeBytes({ try body(row, $0) }) else { return }
        }
    }

    func lookup(_ key: [UInt8], in index: IndexID) throws -> RowID? {
        state.indexes[index]?.entries.filter { $0.key == key }.map(\.row).min()
    }

    func forEachEntry(in index: IndexID, range: KeyRange, reverse: Bool, _ body: (RowID) throws -> Bool) throws {
        let entries = (state.indexes[index]?.entries ?? []).filter { range.holds($0.key) }.sorted {
            $0.key == $1.key ? $0.row < $1.row : $0.key.lexicographicallyPrecedes($1.key)
        }
        for entry in reverse ? entries.reversed() : entries {
            guard try body(entry.row) else { return }
        }
    }

    /// The rows whose keys meet every term, as a SQL backend's WHERE clause would select them.
    func candidates(_ query: StorageQuery) throws -> StoreCandidates? {
        stores.countCandidates()
        var selected = Set(state.records[query.collection]?.keys.map { $0 } ?? [])
        for term in query.terms {
            let entries = state.indexes[term.index]?.entries ?? []
            let matching = entries.filter { term.holds($0.key) }.map(\.row)
            selected.formIntersection(matching)
        }
        return StoreCandidates(rows: selected.sorted())
    }

    func blob(_ id: BlobID) throws -> [UInt8] {
        guard let bytes = state.blobs[id.rawValue] else { throw StrataError(.corruptRecord, "no blob \(id)") }
        return bytes
    }
    func blobFileExists(_ id: BlobID) throws -> Bool { state.blobs[id.rawValue] != nil }
    func metadata(_ name: String) throws -> [UInt8]? { state.metadata[name] }
}

final class MemoryWriter: MemoryReader, StorageWriter {
    let location: String
    private var finish: (() -> Void)?

    init(_ state: MemoryState, stores: MemoryStores, location: String, finish: @escaping () -> Void) {
        self.location = location
        self.finish = finish
        super.init(state, stores: stores)
    }

    private func newID() -> UInt64 {
        defer { state.nextID += 1 }
        return state.nextID
    }

    func createCollection(named name: String) throws -> CollectionID {
        if let found = state.collections[name] { return found }
        let id = CollectionID(rawValue: UInt32(newID()))
        state.collections[name] = id
        return id
    }

    func createIndex(named name: String, on collection: CollectionID, unique: Bool) throws -> IndexID {
        if let found = indexID(named: name, in: collection) { return found }
        let id = IndexID(rawValue: UInt32(newID()))
        state.indexes[id] = MemoryState.Index(collection: collection, name: name, unique: unique)
        return id
    }

    func dropIndex(_ index: IndexID) throws { state.indexes.removeValue(forKey: index) }

    func put(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID, indexKeys: [IndexKey], previousKeys: [IndexKey]) throws {
        for key in previousKeys { state.indexes[key.index]?.entries.removeAll { $0.row == row && $0.key == key.key } }
        for key in indexKeys { state.indexes[key.index]?.entries.append((key.key, row)) }
        state.records[collection, default: [:]][row] = Array(record)
        state.nextRow[collection] = max(state.nextRow[collection] ?? 1, row + 1)
    }

    func putUnlessHeld(_ record: UnsafeRawBufferPointer, row: RowID, in collection: CollectionID,
                       indexKeys: [IndexKey], previousKeys: [IndexKey]) throws -> StorageConflict? {
        for key in indexKeys where state.indexes[key.index]?.unique == true {
            if let holder = state.indexes[key.index]?.entries.first(where: { $0.key == key.key && $0.row != row }) {
                return StorageConflict(index: key.index, existingRow: holder.row)
            }
        }
        try put(record, row: row, in: collection, indexKeys: indexKeys, previousKeys: previousKeys)
        return nil
    }

    func delete(_ row: RowID, in collection: CollectionID, indexKeys: [IndexKey]) throws -> Bool {
        guard state.records[collection]?.removeValue(forKey: row) != nil else { return false }
        for key in indexKeys { state.indexes[key.index]?.entries.removeAll { $0.row == row && $0.key == key.key } }
        return true
    }

    func putBlob(_ bytes: [UInt8]) throws -> BlobID {
        let id = newID()
        state.blobs[id] = bytes
        return BlobID(rawValue: id)
    }
    func deleteBlob(_ id: BlobID) throws { state.blobs.removeValue(forKey: id.rawValue) }
    func setMetadata(_ name: String, _ value: [UInt8]?) throws { state.metadata[name] = value }

    func commit() throws {
        stores.set(location, state)
        finish?()
        finish = nil
    }

    func rollback() {
        finish?()
        finish = nil
    }

    deinit { finish?() }
}

/// A migration's copy: another location holding the same state, which takes the original's
/// place in one step.
final class MemoryStoreCopy: PreparedStoreCopy {
    let stores: MemoryStores
    let original: String
    private(set) var replaced = false

    init(stores: MemoryStores, original: String) {
        self.stores = stores
        self.original = original
    }

    var url: URL { URL(fileURLWithPath: original + ".migrating") }
    func read(_ body: (any StorageReader) throws -> Void) throws { try body(MemoryReader(stores.state(original) ?? MemoryState(), stores: stores)) }
    func make(progress: (Int64, Int64) -> Void) throws {
        stores.set(url.path, stores.state(original))
        progress(1, 1)
    }
    func setMetadata(_ name: String, _ value: [UInt8]) throws {
        var state = stores.state(url.path) ?? MemoryState()
        state.metadata[name] = value
        stores.set(url.path, state)
    }
    func replaceOriginal() throws {
        stores.set(original, stores.state(url.path))
        replaced = true
    }
    func discard() { stores.set(url.path, nil) }
    func finish() { stores.set(url.path, nil) }
}

extension KeyRange {
    /// True if `key` lies in the range.
    func holds(_ key: [UInt8]) -> Bool {
        if let lower {
            if key.lexicographicallyPrecedes(lower) || (!lowerInclusive && key == lower) { return false }
        }
        if let upper {
            if upper.lexicographicallyPrecedes(key) || (!upperInclusive && key == upper) { return false }
        }
        return true
    }
}

extension StorageQuery.Term {
    /// True if a row's key in the term's index meets it.
    func holds(_ key: [UInt8]) -> Bool {
        switch comparison {
        case .equal: key == keys[0]
        case .oneOf: keys.contains(key)
        case .prefix: key.starts(with: keys[0])
        case .less: key.lexicographicallyPrecedes(keys[0])
        case .lessOrEqual: !keys[0].lexicographicallyPrecedes(key)
        case .greater: keys[0].lexicographicallyPrecedes(key)
        case .greaterOrEqual: !key.lexicographicallyPrecedes(keys[0])
        }
    }
}
