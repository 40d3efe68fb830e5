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
    private let nextRows = Mutex<[String: RowID]>([:])

    init(store: Store, key: String?) {
        self.store = store
        self.key = key
    }

    deinit {
        if let key { OpenStores.shared.forget(key, self) }
        store.close()
    }

    /// A row id for a new object of `entity`, unique across every context of every container
    /// sharing this store. `first` gives the collection's next row id the first time.
    func allocateRow(_ entity: Entity) -> RowID {
        nextRows.withLock { rows in
            let row = rows[entity.name, default: 1]
            rows[entity.name] = row + 1
            return row
        }
    }

    /// Starts row allocation for entities this store has not allocated for yet.
    func startRows(_ first: [String: RowID]) {
        nextRows.withLock { rows in
            for (name, row) in first where rows[name] == nil { rows[name] = row }
        }
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
