import Foundation
import Synchronization
import StrataEngine

/// An engine store opened by the containers of this process, and the row ids they hand out.
///
/// Containers that open the same file in one process share it: objects keep their container
/// alive while they live (see `ModelBacking`), so a second `ModelContainer` on the same URL
/// must not need the first one to be gone, as it would if each opened the file (and took its
/// writer lock) itself. Sharing also keeps row ids unique across those containers.
package final class OpenStore: @unchecked Sendable {
    package let store: Store
    /// The registry key (canonical path), or nil for a store that is not shared (in-memory,
    /// or opened through a test's file system).
    package let key: String?
    /// Row ids for new objects, unique across every container sharing this store.
    package let rows = RowAllocator()
    /// Set when a container of this process migrated the file to another schema (the store
    /// was replaced by the migrated copy): the containers of the old schema may fetch and save
    /// no more (`StrataError.schemaChanged`).
    private let migrated = Atomic<Bool>(false)

    package init(store: Store, key: String?) {
        self.store = store
        self.key = key
    }

    deinit {
        if let key { OpenStores.shared.forget(key, self) }
        store.close()
    }

    /// Throws `schemaChanged` once the store was migrated away under this process's old containers.
    @inline(__always)
    package func checkNotMigrated() throws {
        guard migrated.load(ordering: .acquiring) else { return }
        throw StrataError(.schemaChanged, "Another container of this process migrated the store at \(store.path) to a new schema (a ModelContainer with a migration plan), so this container's models no longer match it. Objects already fetched keep their values; open a container with the new models to fetch and save.")
    }

    /// Marks the store as migrated away (see `checkNotMigrated`), and stops its writing: the
    /// migrated copy is at its path now, and takes the writer's lock.
    package func markMigrated() {
        migrated.store(true, ordering: .releasing)
        store.relinquish()
    }
}

/// The stores open in this process, by canonical path.
package final class OpenStores: Sendable {
    package static let shared = OpenStores()
    private struct Entry { weak var store: OpenStore? }
    /// The store openings share, by path; and every store open on a path (a writable one
    /// opened beside a read-only one is not shared), for a migration to find them all.
    private let entries = Mutex<[String: Entry]>([:])
    private let all = Mutex<[String: [Entry]]>([:])

    /// The canonical form of a store path: absolute, symbolic links resolved (as far as the
    /// path exists).
    package static func key(for path: String) -> String {
        FilePaths.canonical(path)
    }

    /// The open store at `key` if there is one this opening may share (a writable one, or a
    /// read-only one for a read-only opening); otherwise one `open` makes, registered.
    ///
    /// A store is shared only while the path still names the file it has open (the same
    /// device and inode), as a new SQLite connection reads the file that is there now: after
    /// another file was renamed over the path, the opening gets that file, and the store of
    /// the old one stops writing (its next save throws `StoreError.replaced`).
    package func store(at key: String, readOnly: Bool, open: () throws -> Store) throws -> (store: OpenStore, shared: Bool) {
        // A store found here is released only after the lock is: if that release were the
        // last, its deinit would take the lock again.
        var found: OpenStore?
        defer { found = nil }
        return try entries.withLock { entries in
            found = entries[key]?.store
            if let existing = found, !existing.store.pathNamesItsFile {
                existing.store.relinquish()
                found = nil
            }
            if let existing = found, readOnly || !existing.store.options.readOnly {
                return (existing, true)
            }
            let made = OpenStore(store: try open(), key: key)
            if found == nil { entries[key] = Entry(store: made) }
            all.withLock { $0[key, default: []].append(Entry(store: made)) }
            return (made, false)
        }
    }

    /// The writable store open at `key` in this process, if there is one.
    package func writableStore(at key: String) -> OpenStore? {
        var found: [OpenStore] = []
        defer { found = [] }   // released after the lock (see `store(at:)`)
        found = all.withLock { $0[key, default: []].compactMap(\.store) }
        return found.first { !$0.store.options.readOnly }
    }

    /// Marks every store open at `key` as migrated away (`OpenStore.markMigrated`), after a
    /// container of this process migrated the file at `key`; the next opening gets the new file.
    package func markMigrated(at key: String) {
        var found: [OpenStore] = []
        defer { found = [] }
        found = all.withLock { $0.removeValue(forKey: key)?.compactMap(\.store) ?? [] }
        entries.withLock { _ = $0.removeValue(forKey: key) }
        for store in found { store.markMigrated() }
    }

    fileprivate func forget(_ key: String, _ store: OpenStore) {
        entries.withLock { entries in
            if let entry = entries[key], entry.store == nil || entry.store === store { entries.removeValue(forKey: key) }
        }
        all.withLock { all in
            all[key]?.removeAll { $0.store == nil || $0.store === store }
            if all[key]?.isEmpty == true { all.removeValue(forKey: key) }
        }
    }
}

/// Hands out row ids for new objects, per model, starting from each collection's next row id.
@_spi(StorageBackend)
public final class RowAllocator: Sendable {
    private struct Counters {
        package var rows: [String: RowID] = [:]
        /// The model asked for last, and where its counter is: objects are inserted in runs of
        /// one model, so the name is not hashed again for each (Docs/Benchmarks.md, "Costs").
        package var lastName: String?
        package var lastPosition: Dictionary<String, RowID>.Index?
    }
    private let next = Mutex(Counters())
    /// Each model's first row.
    private let firstRow: RowID

    /// Rows from `firstRow` (1 for a store's own rows; a custom store's bridge numbers its own
    /// rows above the integer keys, `BridgeRows`).
    public init(firstRow: RowID = 1) { self.firstRow = firstRow }

    /// A row id for a new object of the model named `name`.
    public func allocate(_ name: String) -> RowID {
        next.withLock { counters in
            if let position = counters.lastPosition, counters.lastName == name {
                defer { counters.rows.values[position] += 1 }
                return counters.rows.values[position]
            }
            guard let position = counters.rows.index(forKey: name) else {
                // A model not started: its rows start at `firstRow`. (The new key may move every entry.)
                counters.rows[name] = firstRow + 1
                counters.lastName = nil
                counters.lastPosition = nil
                return firstRow
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
