import Foundation
import Synchronization

/// Every entity discovered in this process, by model class.
final class EntityRegistry: Sendable {
    static let shared = EntityRegistry()
    private struct State {
        var entities: [ObjectIdentifier: Entity] = [:]
        /// Classes being discovered now (their `init()` runs), and classes that are not models.
        var discovering: Set<ObjectIdentifier> = []
        var failed: Set<ObjectIdentifier> = []
    }
    private let state = Mutex(State())

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
        state.withLock { _ = $0.discovering.insert(id) }
        defer { state.withLock { _ = $0.discovering.remove(id) } }
        let entity: Entity
        do { entity = try Entity(type) } catch {
            state.withLock { _ = $0.failed.insert(id) }
            throw error
        }
        return state.withLock { state in
            if let raced = state.entities[id] { return raced }
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
    /// but not while the class is being discovered (its `init()` runs then) nor when it failed.
    func attachableEntity(for type: AnyClass) -> Entity? {
        let id = ObjectIdentifier(type)
        let (known, skip) = state.withLock { ($0.entities[id], $0.discovering.contains(id) || $0.failed.contains(id)) }
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
