import Foundation
import Synchronization
@_spi(StorageBackend) import StrataRecords

/// Every entity discovered in this process, by model class.
final class EntityRegistry: Sendable {
    static let shared = EntityRegistry()
    private struct State {
        // A `TypeMap`, and a list rather than a set of `Discovery`: the first hashed collection
        // of each key type a process makes costs a scan of every protocol conformance it has
        // loaded (about 0.1 ms here; W8, Docs/Benchmarks.md).
        var entities = TypeMap<Entity>()
        /// Classes being discovered now (their `init()` runs), by the thread discovering each,
        /// and classes that are not models.
        var discovering: [Discovery] = []
        var failed = Set<ObjectIdentifier>()
        /// Entities a thread made while another registered its own for the same class: kept,
        /// since objects made during their discovery may still refer to them. Every entity
        /// lives as long as the process, so objects refer to theirs unretained (`ModelBacking`).
        var raced: [Entity] = []
    }
    private let state = Mutex(State())

    /// A class under discovery on one thread. Only that thread must not start discovering it
    /// again (the probe objects its `init()` makes read their properties); an object made on
    /// another thread at the same moment discovers the class too and takes whichever entity
    /// was registered first. (A process-wide mark left such an object without a backing, so
    /// it was never observed: ObservationTests failed about once in forty runs.)
    private struct Discovery: Equatable {
        let model: ObjectIdentifier
        let thread = pthread_self()
    }

    func entity(for type: any PersistentModel.Type) -> Entity? {
        state.withLock { $0.entities[ObjectIdentifier(type)] }
    }

    func entity(forClassOf object: AnyObject) -> Entity? {
        let id = ObjectIdentifier(type(of: object))
        return state.withLock { $0.entities[id] }
    }

    /// The entity of a model class, discovered the first time.
    func discoverModel<T: PersistentModel>(_ type: T.Type) throws -> Entity {
        let id = ObjectIdentifier(type)
        if let known = state.withLock({ $0.entities[id] }) { return known }
        let discovery = Discovery(model: id)
        state.withLock { $0.discovering.append(discovery) }
        defer { state.withLock { $0.discovering.removeAll { $0 == discovery } } }
        let entity: Entity
        do { entity = try Entity(type) } catch {
            state.withLock { _ = $0.failed.insert(id) }
            throw error
        }
        return state.withLock { state in
            if let raced = state.entities[id] {
                state.raced.append(entity)
                return raced
            }
            state.entities[id] = entity
            state.failed.remove(id)
            return entity
        }
    }

    func discover(_ type: any PersistentModel.Type) throws -> Entity {
        func open<T: PersistentModel>(_ t: T.Type) throws -> Entity { try discoverModel(t) }
        return try open(type)
    }

    /// The entity of a related model (discovered with the container, so found here); a model
    /// that cannot be discovered at all stands for an empty placeholder.
    func discoverOrPlaceholder(_ type: any PersistentModel.Type) -> Entity {
        if let entity = try? discover(type) { return entity }
        if let placeholder = try? discoverModel(UndiscoverableModel.self) { return placeholder }
        preconditionFailure("\(type) cannot be discovered as a model.")
    }

    /// The entity to give a new object of `type` a backing with: discovered now if need be,
    /// but not while this thread is discovering the class (its `init()` runs then) nor when it
    /// failed.
    func attachableEntity(for type: AnyClass) -> Entity? {
        let id = ObjectIdentifier(type)
        let discovery = Discovery(model: id)
        let (known, skip) = state.withLock { ($0.entities[id], $0.discovering.contains(discovery) || $0.failed.contains(id)) }
        if let known { return known }
        guard !skip, let model = type as? any PersistentModel.Type else { return nil }
        return try? discover(model)
    }
}

/// Stands for a related model that failed discovery (its container already reported why), and
/// for an identifier `ModelContext.model(for:)` cannot map to a model of the schema.
final class UndiscoverableModel: PersistentModel {
    @Attribute var unused: Int = 0
    init() {}
}
