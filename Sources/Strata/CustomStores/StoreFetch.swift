import Foundation
@_spi(StorageBackend) import StrataRecords

/// A fetch as a custom store is asked it: a descriptor of a known model type, asked again
/// without the part the store refuses (`DataStoreError.preferInMemoryFilter`,
/// `.preferInMemorySort`). The context filters and sorts every answer itself anyway (it
/// checks the predicate on each row it reads), so a refusal only costs rows.
protocol StoreFetch: Sendable {
    /// The store's snapshots for the descriptor. A limit goes to the store as offset + limit +
    /// `extra` (rows the context's unsaved changes may take out), without an offset: the
    /// context pages the rows itself. Unless the fetch `pushesOffset` (the context has no
    /// unsaved change) and the store takes the whole descriptor: then the offset goes too, the
    /// answer is the page, and `skippedOffset` says so.
    func fetch(in store: any AnyDataStore, extra: Int, _ editingState: EditingState) throws
        -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot], skippedOffset: Bool)
    /// How many objects the store counts for the predicate (no paging), or nil when it
    /// does not evaluate the predicate.
    func count(in store: any AnyDataStore, _ editingState: EditingState) throws -> Int?
    /// The store's snapshots a batch at a time, with the descriptor's offset and limit if
    /// `paging` (else the context pages); false when the store does not fetch in batches or
    /// refuses a part of the descriptor (the context then fetches it whole).
    func fetchBatches(in store: any AnyDataStore, batchSize: Int, paging: Bool, _ editingState: EditingState,
                      _ body: ([DefaultSnapshot]) throws -> Bool) throws -> Bool
    /// The identifiers of the objects the whole descriptor selects (offset and limit too), in
    /// its order, from a store that fetches in batches (`DataStoreBatchedFetching`, whose
    /// `fetchIdentifiers` reads only them); nil from any other store, or when the store refuses
    /// a part of the descriptor.
    func identifiers(in store: any AnyDataStore, _ editingState: EditingState) throws -> [PersistentIdentifier]?
}

/// A `StoreFetch` of a typed descriptor.
struct DescriptorFetch<T: PersistentModel>: StoreFetch, @unchecked Sendable {
    // @unchecked: a descriptor's key paths are not Sendable; it is only read.
    let descriptor: FetchDescriptor<T>
    /// The offset may go to the store: nothing unsaved in the context can take rows out of
    /// the store's answer or add its own (a page deep in a large table reads one page).
    var pushesOffset = false
    /// The predicate and sort are the context's to apply, on objects (unsaved changes to the
    /// models they reach through relationships): the store is asked for every row.
    var evaluatesHere = false

    func fetch(in store: any AnyDataStore, extra: Int, _ editingState: EditingState) throws
        -> (fetched: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot], skippedOffset: Bool) {
        if pushesOffset, extra == 0, let offset = descriptor.fetchOffset, offset > 0 {
            // The whole descriptor, or the context's way below if the store refuses a part of it.
            var asked = descriptor
            if asked.fetchLimit.map({ $0 <= 0 }) == true { asked.fetchLimit = nil }
            do {
                let answer = try store.fetch(asked, editingState)
                return (answer.fetched, answer.related, true)
            } catch DataStoreError.preferInMemoryFilter {
            } catch DataStoreError.preferInMemorySort {
            }
        }
        var asked = descriptor
        asked.fetchOffset = nil
        if evaluatesHere {
            asked.predicate = nil
            asked.sortBy = []
            asked.fetchLimit = nil
            let answer = try store.fetch(asked, editingState)
            return (answer.fetched, answer.related, false)
        }
        // A limit of 0 or below is no limit, an offset below 0 is 0, and a sum past Int.max is no
        // limit (the context pages any value a caller passes; FetchEdgeTests).
        asked.fetchLimit = descriptor.fetchLimit.flatMap { limit -> Int? in
            guard limit > 0 else { return nil }
            let (withOffset, overflow) = limit.addingReportingOverflow(max(0, descriptor.fetchOffset ?? 0))
            let (total, overflowAgain) = withOffset.addingReportingOverflow(extra)
            return overflow || overflowAgain ? nil : total
        }
        for _ in 0..<3 {
            do {
                let answer = try store.fetch(asked, editingState)
                return (answer.fetched, answer.related, false)
            } catch DataStoreError.preferInMemoryFilter where asked.predicate != nil {
                asked.predicate = nil
                asked.fetchLimit = nil
            } catch DataStoreError.preferInMemorySort where !asked.sortBy.isEmpty {
                asked.sortBy = []
                asked.fetchLimit = nil
            }
        }
        let answer = try store.fetch(asked, editingState)
        return (answer.fetched, answer.related, false)
    }

    func fetchBatches(in store: any AnyDataStore, batchSize: Int, paging: Bool, _ editingState: EditingState,
                      _ body: ([DefaultSnapshot]) throws -> Bool) throws -> Bool {
        guard !evaluatesHere else { return false }
        var asked = descriptor
        // As the context pages: a limit of 0 or below is none, an offset below 0 is 0.
        asked.fetchOffset = paging ? descriptor.fetchOffset.flatMap { $0 > 0 ? $0 : nil } : nil
        asked.fetchLimit = paging ? descriptor.fetchLimit.flatMap { $0 > 0 ? $0 : nil } : nil
        do {
            return try store.fetch(asked, batchSize: batchSize, editingState, body)
        } catch DataStoreError.preferInMemoryFilter {
            return false
        } catch DataStoreError.preferInMemorySort {
            return false
        }
    }

    func identifiers(in store: any AnyDataStore, _ editingState: EditingState) throws -> [PersistentIdentifier]? {
        guard store.pagesFetches, !evaluatesHere else { return nil }
        var asked = descriptor
        // As the context pages: a limit of 0 or below is none, an offset below 0 is 0.
        asked.fetchOffset = descriptor.fetchOffset.flatMap { $0 > 0 ? $0 : nil }
        asked.fetchLimit = descriptor.fetchLimit.flatMap { $0 > 0 ? $0 : nil }
        do { return try store.fetchIdentifiers(asked, editingState) } catch DataStoreError.preferInMemoryFilter {
            return nil
        } catch DataStoreError.preferInMemorySort {
            return nil
        }
    }

    func count(in store: any AnyDataStore, _ editingState: EditingState) throws -> Int? {
        guard !evaluatesHere else { return nil }
        var asked = descriptor
        asked.fetchOffset = nil
        asked.fetchLimit = nil
        asked.sortBy = []
        do { return try store.fetchCount(asked, editingState) } catch DataStoreError.preferInMemoryFilter {
            return nil
        } catch DataStoreError.preferInMemorySort {
            return nil
        }
    }

}

enum StoreFetches {
    /// Every object of the model `type` (for a scan or a count).
    static func all(_ type: any PersistentModel.Type) -> any StoreFetch {
        func make<M: PersistentModel>(_: M.Type) -> any StoreFetch { DescriptorFetch<M>(descriptor: FetchDescriptor<M>()) }
        return make(type)
    }

    /// The objects of the model `type` with these identifiers (in any order).
    static func some(_ type: any PersistentModel.Type, _ ids: [PersistentIdentifier]) -> any StoreFetch {
        func make<M: PersistentModel>(_: M.Type) -> any StoreFetch {
            let predicate = Predicate<M> { object in
                PredicateExpressions.build_contains(PredicateExpressions.build_Arg(ids),
                                                    PredicateExpressions.build_KeyPath(root: object, keyPath: \M.persistentModelID))
            }
            return DescriptorFetch<M>(descriptor: FetchDescriptor<M>(predicate: predicate))
        }
        return make(type)
    }

    /// The object of the model `type` with identifier `id`.
    static func one(_ type: any PersistentModel.Type, _ id: PersistentIdentifier) -> any StoreFetch {
        func make<M: PersistentModel>(_: M.Type) -> any StoreFetch {
            let predicate = Predicate<M> { object in
                PredicateExpressions.build_Equal(lhs: PredicateExpressions.build_KeyPath(root: object, keyPath: \M.persistentModelID),
                                                 rhs: PredicateExpressions.build_Arg(id))
            }
            return DescriptorFetch<M>(descriptor: FetchDescriptor<M>(predicate: predicate))
        }
        return make(type)
    }
}

/// A custom store's fetch, carried through the storage seam on a `StorageQuery`.
final class StoreFetchAttachment: QueryAttachment, @unchecked Sendable {
    let fetch: any StoreFetch
    init(_ fetch: any StoreFetch) { self.fetch = fetch }
}

extension StorageQuery {
    /// For a custom store: the fetch to ask it, with the descriptor.
    var storeFetch: (any StoreFetch)? { (attachment as? StoreFetchAttachment)?.fetch }
}
