import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// What one history transaction changed, as identifiers: the element of `HistoryChanges`.
/// `Sendable` (no model objects), for server code that hands changes to other tasks. Strata
/// extra.
public struct HistoryNotice: Sendable, Hashable {
    public let token: DefaultHistoryToken
    public let timestamp: Date
    public let author: String?
    public let inserted: [PersistentIdentifier]
    public let updated: [PersistentIdentifier]
    public let deleted: [PersistentIdentifier]
}

/// The transactions a container's stores commit from now on (or after given tokens), as
/// they commit: saves through any context of the container, other containers of the process,
/// and another process writing the store (noticed within about 20 ms; `Docs/History.md`).
/// Each element is one whole transaction: a partial commit is never seen. Strata extra (the
/// server-side form of SwiftData's `HistoryObserver`).
///
/// ```swift
/// for try await notice in container.historyChanges() {
///     print(notice.token, notice.inserted.count, notice.deleted.count)
/// }
/// ```
/// It ends when the task is cancelled; it throws `historyTokenExpired` when the history it
/// has yet to read was pruned (it fell more than the retention behind). Transactions of
/// models the container does not have are delivered without those identifiers.
public struct HistoryChanges: AsyncSequence, Sendable {
    public typealias Element = HistoryNotice
    let container: ModelContainer
    let after: [DefaultHistoryToken]?

    public func makeAsyncIterator() -> Iterator { Iterator(container: container, after: after) }

    /// Each store's newest token (0 for a store without history).
    static func newest(_ container: ModelContainer) throws -> [String: Int64] {
        var tokens: [String: Int64] = [:]
        for handle in container.handles {
            tokens[handle.storeIdentifier] = try handle.storage.read { reader in
                try reader.collection(named: HistoryRecord.collection).map { Int64(try reader.nextRowID(in: $0)) - 1 } ?? 0
            }
        }
        return tokens
    }

    public struct Iterator: AsyncIteratorProtocol {
        let container: ModelContainer
        /// The last token delivered (or skipped) per store, by store identifier; nil until the
        /// first read (then: the newest token, unless tokens were given).
        var last: [String: Int64]?
        var buffer: [HistoryNotice] = []

        init(container: ModelContainer, after: [DefaultHistoryToken]?) {
            self.container = container
            container.changeHub.observe()
            if let after { last = Dictionary(after.map { ($0.storeIdentifier, $0.tokenValue) }, uniquingKeysWith: Swift.max) }
        }

        public mutating func next() async throws -> HistoryNotice? {
            if last == nil { last = try HistoryChanges.newest(container) }
            while true {
                if !buffer.isEmpty { return buffer.removeFirst() }
                if Task.isCancelled { return nil }
                let generation = container.changeHub.generation
                buffer = try read()
                if buffer.isEmpty { await container.changeHub.wait(after: generation) }
            }
        }

        /// The transactions committed since the last read, at once (none when there are none).
        /// When the read fails, what `next()` had buffered stays for the next call.
        mutating func available() throws -> [HistoryNotice] {
            if last == nil { last = try HistoryChanges.newest(container) }
            let fresh = try read()
            defer { buffer = [] }
            return buffer + fresh
        }


        /// The transactions after `last`, each store's read from one snapshot. All or nothing:
        /// when one store's read fails, `last` stays as it was for every store, so that the
        /// transactions of the stores read before it are read again, not skipped.
        private mutating func read() throws -> [HistoryNotice] {
            var found: [HistoryNotice] = []
            var read = last
            for handle in container.handles {
                let after = read?[handle.storeIdentifier] ?? 0
                try handle.storage.read { reader in
                    let pruned = Int64(try HistoryStore.pruned(reader))
                    if after < pruned {
                        throw StrataError(.historyTokenExpired, "The history after token \(after) of store \(handle.storeIdentifier) was pruned before it was read (transactions up to \(pruned) are gone). Fetch the objects again and follow the history from the newest token.")
                    }
                    try HistoryStore.forEach(reader, from: RowID(after + 1)) { token, record in
                        found.append(notice(record, token: token, handle: handle))
                        return true
                    }
                }
                if let newest = found.last(where: { $0.token.storeIdentifier == handle.storeIdentifier }) {
                    read?[handle.storeIdentifier] = newest.token.tokenValue
                }
            }
            last = read
            return found
        }

        private func notice(_ record: HistoryRecord, token: RowID, handle: StoreHandle) -> HistoryNotice {
            var inserted: [PersistentIdentifier] = [], updated: [PersistentIdentifier] = [], deleted: [PersistentIdentifier] = []
            for run in record.runs {
                let location = container.location(ofEntityNamed: run.entity)
                let scope = location.map { $0.0.identifierScope(for: $0.1.entity) } ?? IdentifierScope(entityName: run.entity, storeIdentifier: handle.identifier)
                let ids = (0..<run.count).map { i -> PersistentIdentifier in
                    let row = run.firstRow + RowID(i)
                    if let (owner, table) = location, let custom = owner.custom { return custom.identifier(table.entity, row) }
                    return PersistentIdentifier(scope: scope, rowID: Int64(row))
                }
                switch run.kind {
                case .insert: inserted += ids
                case .update: updated += ids
                case .delete: deleted += ids
                }
            }
            return HistoryNotice(token: DefaultHistoryToken(tokenValue: Int64(token), storeIdentifier: handle.storeIdentifier),
                                 timestamp: record.timestamp, author: record.author, inserted: inserted, updated: updated, deleted: deleted)
        }
    }
}

extension ModelContainer {
    /// The transactions the container's stores commit after `tokens` (nil: from now on), as
    /// they commit. Strata extra; see `HistoryChanges`.
    public func historyChanges(after tokens: [DefaultHistoryToken]? = nil) -> HistoryChanges {
        if tokens == nil, let newest = try? HistoryChanges.newest(self) {
            return HistoryChanges(container: self, after: newest.map { DefaultHistoryToken(tokenValue: $0.value, storeIdentifier: $0.key) })
        }
        return HistoryChanges(container: self, after: tokens)
    }
}
