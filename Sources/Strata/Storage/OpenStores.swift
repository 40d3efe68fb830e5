import Foundation
import Synchronization
import StrataEngine

/// An engine store opened by the containers of this process, and the row ids they hand out.
///
/// Containers that open the same file in one process share it: objects keep their container
/// alive while they live (see `ModelBacking`), so a second `ModelContainer` on the same URL
/// must not need the first one to be gone, as it would if each opened the file (and took its
/// writer lock) itself. Sharing also keeps row ids unique across those containers.
final class OpenStore: @unchecked Sendable {
    let store: Store
    /// The registry key (canonical path), or nil for a store that is not shared (in-memory,
    /// or opened through a test's file system).
    let key: String?
    /// Row ids for new objects, unique across every container sharing this store.
    let rows = RowAllocator()

    init(store: Store, key: String?) {
        self.store = store
        self.key = key
    }

    deinit {
        if let key { OpenStores.shared.forget(key, self) }
        store.close()
    }
}

/// The stores open in this process, by canonical path.
final class OpenStores: Sendable {
    static let shared = OpenStores()
    private struct Entry { weak var store: OpenStore? }
    private let entries = Mutex<[String: Entry]>([:])

    /// The canonical form of a store path: absolute, symbolic links resolved (as far as the
    /// path exists).
    static func key(for path: String) -> String {
        URL(filePath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The open store at `key` if there is one this opening may share (a writable one, or a
    /// read-only one for a read-only opening); otherwise one `open` makes, registered.
    func store(at key: String, readOnly: Bool, open: () throws -> Store) throws -> (store: OpenStore, shared: Bool) {
        // A store found here is released only after the lock is: if that release were the
        // last, its deinit would take the lock again.
        var found: OpenStore?
        defer { found = nil }
        return try entries.withLock { entries in
            found = entries[key]?.store
            if let existing = found, readOnly || !existing.store.options.readOnly {
                return (existing, true)
            }
            let made = OpenStore(store: try open(), key: key)
            if found == nil { entries[key] = Entry(store: made) }
            return (made, false)
        }
    }

    fileprivate func forget(_ key: String, _ store: OpenStore) {
        entries.withLock { entries in
            if let entry = entries[key], entry.store == nil || entry.store === store { entries.removeValue(forKey: key) }
        }
    }
}

/// Hands out row ids for new objects, per model, starting from each collection's next row id.
@_spi(StorageBackend)
public final class RowAllocator: Sendable {
    private struct Counters {
        var rows: [String: RowID] = [:]
        /// The model asked for last, and where its counter is: objects are inserted in runs of
        /// one model, and hashing its name for each was a sixtieth of an upsert.
        var lastName: String?
        var lastPosition: Dictionary<String, RowID>.Index?
    }
    private let next = Mutex(Counters())

    public init() {}

    /// A row id for a new object of the model named `name`.
    public func allocate(_ name: String) -> RowID {
        next.withLock { counters in
            if let position = counters.lastPosition, counters.lastName == name {
                defer { counters.rows.values[position] += 1 }
                return counters.rows.values[position]
            }
            guard let position = counters.rows.index(forKey: name) else {
                // A model not started: its rows start at 1. (The new key may move every entry.)
                counters.rows[name] = 2
                counters.lastName = nil
                counters.lastPosition = nil
                return 1
            }
            counters.lastName = name
            counters.lastPosition = position
            defer { counters.rows.values[position] += 1 }
            return counters.rows.values[position]
        }
    }

    /// Starts allocation for models this allocator has not allocated for yet.
    public func start(_ first: [String: RowID]) {
        next.withLock { counters in
            for (name, row) in first where counters.rows[name] == nil { counters.rows[name] = row }
            // (A new key may move every entry: the remembered position is found again.)
            counters.lastName = nil
            counters.lastPosition = nil
        }
    }
}
