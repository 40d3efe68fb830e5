// Custom stores for the tests, written the way WWDC24's "Create a custom data store with
// SwiftData" and Apple's pages write them (shipped names): a JSON-file store, and a store that
// counts the calls it gets and resolves unique values itself.
import Foundation
import Synchronization
import Strata

// MARK: The JSON-file store (WWDC24's, with the shipped spelling)

final class JSONStoreConfiguration: DataStoreConfiguration {
    typealias Store = JSONStore
    var name: String
    var schema: Schema?
    var fileURL: URL

    init(name: String = "JSONStore", schema: Schema? = nil, fileURL: URL) {
        self.name = name
        self.schema = schema
        self.fileURL = fileURL
    }

    static func == (lhs: JSONStoreConfiguration, rhs: JSONStoreConfiguration) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

final class JSONStore: DataStore {
    typealias Configuration = JSONStoreConfiguration
    typealias Snapshot = DefaultSnapshot

    var configuration: JSONStoreConfiguration
    var name: String
    var schema: Schema
    var identifier: String

    init(_ configuration: JSONStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.name = configuration.name
        guard let schema = configuration.schema else { throw DataStoreError.unsupportedFeature }
        self.schema = schema
        self.identifier = configuration.fileURL.lastPathComponent
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        if request.descriptor.predicate != nil {
            throw DataStoreError.preferInMemoryFilter
        } else if request.descriptor.sortBy.count > 0 {
            throw DataStoreError.preferInMemorySort
        }
        let objects = try read()
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: Array(objects.values), relatedSnapshots: objects)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var remappedIdentifiers = [PersistentIdentifier: PersistentIdentifier]()
        var serializedObjects = try read()
        // Every new object's identifier first, so that new objects that refer to each other
        // are stored with the permanent identifiers (Docs/CustomStores.md).
        for snapshot in request.inserted {
            let permanentIdentifier = try PersistentIdentifier.identifier(for: identifier, entityName: snapshot.persistentIdentifier.entityName,
                                                                          primaryKey: UUID())
            remappedIdentifiers[snapshot.persistentIdentifier] = permanentIdentifier
        }
        for snapshot in request.inserted {
            guard let permanentIdentifier = remappedIdentifiers[snapshot.persistentIdentifier] else { continue }
            serializedObjects[permanentIdentifier] = snapshot.copy(persistentIdentifier: permanentIdentifier, remappedIdentifiers: remappedIdentifiers)
        }
        for snapshot in request.updated {
            serializedObjects[snapshot.persistentIdentifier] = snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier,
                                                                             remappedIdentifiers: remappedIdentifiers)
        }
        for snapshot in request.deleted {
            serializedObjects[snapshot.persistentIdentifier] = nil
        }
        try write(serializedObjects)
        return DataStoreSaveChangesResult<DefaultSnapshot>(for: identifier, remappedIdentifiers: remappedIdentifiers)
    }

    func read() throws -> [PersistentIdentifier: DefaultSnapshot] {
        guard FileManager.default.fileExists(atPath: configuration.fileURL.path) else { return [:] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let trips = try decoder.decode([DefaultSnapshot].self, from: try Data(contentsOf: configuration.fileURL))
        var result = [PersistentIdentifier: DefaultSnapshot]()
        for trip in trips { result[trip.persistentIdentifier] = trip }
        return result
    }

    func write(_ trips: [PersistentIdentifier: DefaultSnapshot]) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let jsonData = try encoder.encode(trips.values.map { $0 })
        try jsonData.write(to: configuration.fileURL)
    }
}

// MARK: A store that counts its calls, keeps its objects in memory, evaluates what it can and
// resolves unique values itself (an insert whose `code` it holds updates that object).

final class CountingStoreConfiguration: DataStoreConfiguration {
    typealias Store = CountingStore
    var name: String
    var schema: Schema?
    /// The property whose value is unique among objects of a model (the store upserts on it).
    let uniqueProperty: String?
    /// Whether the store evaluates predicates and sorts (otherwise it asks for them in memory).
    let evaluates: Bool
    /// The error `delete(_:)` (a batch deletion) throws: the store refuses them all.
    let batchDeleteError = Mutex<DataStoreError>(.unsupportedFeature)
    /// Makes the next save throw this error.
    let failNextSave = Mutex<(any Error)?>(nil)
    /// Thrown by the next `fetch` (a server's dropped connection, say), then forgotten.
    let failNextFetch = Mutex<(any Error)?>(nil)
    /// Thrown by every `fetch` while set (a server that stays away).
    let failFetches = Mutex<(any Error)?>(nil)
    let calls = Mutex<[String: Int]>([:])
    /// The offset and limit of each `fetch(_:)` request, in order.
    let askedPaging = Mutex<[(offset: Int?, limit: Int?)]>([])
    let objects = Mutex<[PersistentIdentifier: DefaultSnapshot]>([:])
    /// The deleted snapshots of the last save request, as the store received them.
    let lastDeleted = Mutex<[DefaultSnapshot]>([])
    /// The order objects were inserted in: the store answers in it, as a table answers in the
    /// order of an increasing key (StrataPostgres's `_id`).
    let insertionOrder = Mutex<[PersistentIdentifier: Int]>([:])
    /// Whether fetches answer with snapshots of a layout (`DefaultSnapshot.Layout`, one per
    /// model, its names in reverse order), as a store reading rows would.
    let answersInLayouts: Bool
    let layouts = Mutex<[String: DefaultSnapshot.Layout]>([:])
    /// Whether a fetch of objects by identifier (`persistentModelID == id`, or
    /// `ids.contains(persistentModelID)`) is answered with those objects alone, as a server
    /// would (counted as "fetchByIdentifiers"; the identifiers asked for in `askedIdentifiers`).
    let answersIdentifierFetches: Bool
    let askedIdentifiers = Mutex<[[PersistentIdentifier]]>([])
    /// Whether the store keeps a version per object (`DefaultSnapshot.version`), as
    /// StrataPostgres's `_version` column: given with every snapshot it answers, raised by every
    /// save of the object, and checked against the one an update or deletion is sent with (a
    /// mismatch refuses the whole save with `saveConflict`).
    let keepsVersions: Bool
    /// The snapshots of updates and deletions of the last save request, as the store received them.
    let lastChanged = Mutex<[DefaultSnapshot]>([])
    /// Whether new objects' primary keys are integers from a sequence (1, 2, 3, ...), as
    /// StrataPostgres's `bigint` ids are (the bridge then names each object's row by its key,
    /// `BridgeRows`), rather than UUIDs.
    let integerKeys: Bool
    private let lastKey = Mutex<Int64>(0)

    /// The store's identifier in every container, with `integerKeys` (as a server's is, which
    /// each process reaches): otherwise each container's store names itself anew.
    let sharedIdentifier = "counting-\(UUID().uuidString)"

    /// The next key of the sequence (`integerKeys`).
    func nextKey() -> Int64 { lastKey.withLock { $0 += 1; return $0 } }

    /// Makes the sequence give `key + 1` next: a store that gives a deleted object's key to a
    /// new one (as a `max(id) + 1` allocator does).
    func rewindKeys(to key: Int64) { lastKey.withLock { $0 = key } }

    init(name: String = "Counting", schema: Schema? = nil, uniqueProperty: String? = nil, evaluates: Bool = false, answersInLayouts: Bool = false,
         answersIdentifierFetches: Bool = false, keepsVersions: Bool = false, integerKeys: Bool = false) {
        self.name = name
        self.schema = schema
        self.uniqueProperty = uniqueProperty
        self.evaluates = evaluates
        self.answersInLayouts = answersInLayouts
        self.answersIdentifierFetches = answersIdentifierFetches
        self.keepsVersions = keepsVersions
        self.integerKeys = integerKeys
    }

    /// Another writer's change of a stored object (another process's save): `change` edits its
    /// values, and its version is raised. The object's new version.
    @discardableResult
    func changeElsewhere(_ id: PersistentIdentifier, _ change: (inout [String: SnapshotValue]) -> Void) -> Int64? {
        objects.withLock { objects in
            guard let old = objects[id] else { return nil }
            var values = old.values
            change(&values)
            let version = (old.version ?? 0) + 1
            objects[id] = DefaultSnapshot(persistentIdentifier: id, values: values, version: keepsVersions ? version : nil)
            return keepsVersions ? version : nil
        }
    }

    /// A snapshot as a fetch answers with it: itself, or the same values in its model's layout.
    func answer(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        guard answersInLayouts else { return snapshot }
        let values = snapshot.values
        let layout = layouts.withLock { layouts in
            let model = snapshot.persistentIdentifier.entityName
            if let known = layouts[model], Set(known.names) == Set(values.keys) { return known }
            let made = DefaultSnapshot.Layout(values.keys.sorted(by: >))
            layouts[model] = made
            return made
        }
        return DefaultSnapshot(persistentIdentifier: snapshot.persistentIdentifier, layout: layout, values: layout.names.map { values[$0] ?? .null },
                               version: snapshot.version)
    }

    func count(_ call: String) -> Int { calls.withLock { $0[call] ?? 0 } }

    static func == (lhs: CountingStoreConfiguration, rhs: CountingStoreConfiguration) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

final class CountingStore: DataStore, DataStoreBatching, DataStoreBatchedFetching {
    typealias Configuration = CountingStoreConfiguration
    typealias Snapshot = DefaultSnapshot
    let configuration: CountingStoreConfiguration
    let schema: Schema
    let identifier: String

    init(_ configuration: CountingStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        identifier = configuration.integerKeys ? configuration.sharedIdentifier : "counting-\(UUID().uuidString)"
        schema = configuration.schema ?? Schema([])
        note("init")
    }

    private func note(_ call: String) { configuration.calls.withLock { $0[call, default: 0] += 1 } }

    private func matching<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [DefaultSnapshot] {
        let order = configuration.insertionOrder.withLock { $0 }
        let entity = String(describing: T.self)
        // In insertion order (each object's place looked up once, not in every comparison).
        let all = configuration.objects.withLock { Array($0.values) }.filter { $0.persistentIdentifier.entityName == entity }
            .map { (place: order[$0.persistentIdentifier] ?? .max, snapshot: $0) }
            .sorted { ($0.place, $0.snapshot.persistentIdentifier) < ($1.place, $1.snapshot.persistentIdentifier) }
            .map { configuration.answer($0.snapshot) }
        guard configuration.evaluates else {
            if descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
            if !descriptor.sortBy.isEmpty { throw DataStoreError.preferInMemorySort }
            return all
        }
        // This store evaluates only a descriptor without a predicate, sorted by nothing: it
        // shows that the context asks again without what a store refuses, part by part.
        if descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
        if !descriptor.sortBy.isEmpty { throw DataStoreError.preferInMemorySort }
        return all
    }

    /// The page of `all` a descriptor's offset and limit select (as Core Data reads them: a
    /// limit of 0 or below is none, an offset below 0 is 0).
    private func page<T: PersistentModel>(_ all: [DefaultSnapshot], _ descriptor: FetchDescriptor<T>) -> [DefaultSnapshot] {
        let offset = max(0, descriptor.fetchOffset ?? 0)
        let limit = descriptor.fetchLimit.flatMap { $0 > 0 ? $0 : nil } ?? .max
        return Array(all.dropFirst(offset).prefix(limit))
    }

    /// A `DataStoreBatchedFetching` store applies the offset and limit here too.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        note("fetch")
        if let failure = configuration.failNextFetch.withLock({ f -> (any Error)? in defer { f = nil }; return f }) { throw failure }
        if let failure = configuration.failFetches.withLock({ $0 }) { throw failure }
        configuration.askedPaging.withLock { $0.append((request.descriptor.fetchOffset, request.descriptor.fetchLimit)) }
        if configuration.answersIdentifierFetches, let ids = Self.identifiers(asked: request.descriptor.predicate) {
            note("fetchByIdentifiers")
            configuration.askedIdentifiers.withLock { $0.append(ids) }
            let objects = configuration.objects.withLock { $0 }
            return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: ids.compactMap { objects[$0] }.map(configuration.answer),
                                        relatedSnapshots: [:])
        }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: page(try matching(request.descriptor), request.descriptor),
                                    relatedSnapshots: configuration.objects.withLock { $0 }.mapValues(configuration.answer))
    }

    /// The identifiers a predicate `persistentModelID == id` or `ids.contains(persistentModelID)` asks for.
    private static func identifiers<T: PersistentModel>(asked predicate: Predicate<T>?) -> [PersistentIdentifier]? {
        typealias Identifier = PredicateExpressions.KeyPath<PredicateExpressions.Variable<T>, PersistentIdentifier>
        guard let expression = predicate?.expression else { return nil }
        if let equal = expression as? PredicateExpressions.Equal<Identifier, PredicateExpressions.Value<PersistentIdentifier>> {
            return [equal.rhs.value]
        }
        if let contains = expression as? PredicateExpressions.SequenceContains<PredicateExpressions.Value<[PersistentIdentifier]>, Identifier> {
            return contains.sequence.value
        }
        return nil
    }

    /// Batches of at most `batchSize`, counted; the largest one asked is kept.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>, batchSize: Int, _ body: ([DefaultSnapshot]) throws -> Bool) throws {
        note("batchedFetch")
        let all = page(try matching(request.descriptor), request.descriptor)
        var start = 0
        while start < all.count {
            let batch = Array(all[start..<min(all.count, start + batchSize)])
            note("batch")
            guard try body(batch) else { return }
            start += batchSize
        }
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        note("fetchCount")
        return try matching(request.descriptor).count
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        note("save")
        if let failure = configuration.failNextSave.withLock({ f -> (any Error)? in defer { f = nil }; return f }) { throw failure }
        configuration.lastDeleted.withLock { $0 = request.deleted }
        configuration.lastChanged.withLock { $0 = request.updated + request.deleted }
        let versioned = configuration.keepsVersions
        return try configuration.objects.withLock { objects in
            if versioned {
                // Optimistic locking: an update or deletion sent at a version other than the
                // stored one (another writer changed or deleted the object since) refuses the save.
                let stale = (request.updated + request.deleted).filter { snapshot in
                    guard let sent = snapshot.version else { return false }
                    return objects[snapshot.persistentIdentifier]?.version != sent
                }
                if !stale.isEmpty {
                    throw StrataError(.saveConflict, "Changed or deleted by another writer: \(stale.map(\.persistentIdentifier))",
                                      objects: stale.map(\.persistentIdentifier))
                }
            }
            var saved: [PersistentIdentifier: Int64] = [:], replaced: [PersistentIdentifier: Int64] = [:]
            /// The version an object saved over `old` takes.
            func raised(_ old: DefaultSnapshot?) -> Int64? { versioned ? (old?.version ?? 0) + 1 : nil }
            var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
            // The stored objects by model and unique value, as they were before the request (made
            // once a save: a search of every object for each insert made large imports quadratic).
            // Of objects that share a value (an update may make two), the first found holds it, as
            // the search did.
            var holders: [String: [SnapshotValue: PersistentIdentifier]] = [:]
            if let unique = configuration.uniqueProperty, !request.inserted.isEmpty {
                for object in objects.values {
                    guard let value = object.values[unique] else { continue }
                    let entity = object.persistentIdentifier.entityName
                    if holders[entity]?[value] == nil { holders[entity, default: [:]][value] = object.persistentIdentifier }
                }
            }
            for snapshot in request.inserted {
                let entity = snapshot.persistentIdentifier.entityName
                // An upsert: an object of the model with the same unique value is updated.
                if let unique = configuration.uniqueProperty, let value = snapshot.values[unique], let holder = holders[entity]?[value] {
                    remapped[snapshot.persistentIdentifier] = holder
                    continue
                }
                let permanent = configuration.integerKeys
                    ? try PersistentIdentifier.identifier(for: identifier, entityName: entity, primaryKey: configuration.nextKey())
                    : try PersistentIdentifier.identifier(for: identifier, entityName: entity, primaryKey: UUID())
                remapped[snapshot.persistentIdentifier] = permanent
                configuration.insertionOrder.withLock { $0[permanent] = $0.count }
            }
            for snapshot in request.inserted {
                guard let permanent = remapped[snapshot.persistentIdentifier] else { continue }
                let new = snapshot.copy(persistentIdentifier: permanent, remappedIdentifiers: remapped)
                // An insert resolved onto a stored object replaces its relationships on both
                // sides (Docs/CustomStores.md): what its to-manys held and no longer hold is
                // unlinked from it.
                if let old = objects[permanent] {
                    unlinkDropped(old, new, &objects)
                    if let version = old.version { replaced[snapshot.persistentIdentifier] = version }
                }
                let version = raised(objects[permanent])
                objects[permanent] = new.withVersion(version)
                if let version { saved[snapshot.persistentIdentifier] = version }
            }
            for snapshot in request.updated {
                guard let old = objects[snapshot.persistentIdentifier] else { throw DataStoreError.unsupportedFeature }
                let version = raised(old)
                objects[snapshot.persistentIdentifier] = snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped)
                    .withVersion(version)
                if let version { saved[snapshot.persistentIdentifier] = version }
            }
            for snapshot in request.deleted { objects[snapshot.persistentIdentifier] = nil }
            return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped, savedVersions: saved, replacedVersions: replaced)
        }
    }

    /// The objects `old`'s to-manys held that `new`'s do not: their to-one to it becomes nil.
    private func unlinkDropped(_ old: DefaultSnapshot, _ new: DefaultSnapshot, _ objects: inout [PersistentIdentifier: DefaultSnapshot]) {
        guard let entity = schema.entities.first(where: { $0.name == old.persistentIdentifier.entityName }) else { return }
        for relationship in entity.relationships where !relationship.isToOneRelationship {
            guard let inverse = relationship.inverseName else { continue }
            let kept = Set(new.relatedIdentifiers(relationship.name))
            for dropped in old.relatedIdentifiers(relationship.name) where !kept.contains(dropped) {
                guard let related = objects[dropped], related.relatedIdentifiers(inverse) == [old.persistentIdentifier] else { continue }
                var values = related.values
                values[inverse] = .identifiers([])
                objects[dropped] = DefaultSnapshot(persistentIdentifier: dropped, values: values,
                                                   version: configuration.keepsVersions ? (related.version ?? 0) + 1 : nil)
            }
        }
    }

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        note("batchDelete")
        throw configuration.batchDeleteError.withLock { $0 }
    }
}
