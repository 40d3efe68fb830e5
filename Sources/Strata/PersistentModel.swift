import Foundation
import Synchronization
import StrataEngine

/// A class whose instances Strata persists. Same role as SwiftData's `PersistentModel`, which
/// SwiftData's `@Model` macro adds; Strata has no macro, so a model declares it:
///
/// ```swift
/// final class Trip: PersistentModel {
///     @Attribute(.unique) var id: UUID
///     @Attribute var name: String
///     @Attribute var budget: Double? = nil
///     @Transient var isExpanded = false
///
///     init() {}   // Strata makes loaded objects with this: keep it cheap (no UUID(), no Date())
///     init(name: String) { id = UUID(); self.name = name }
///
///     static var uniqueConstraints: [[PartialKeyPath<Trip>]] { [[\.name, \.budget]] }   // #Unique
///     static var indexes: [[PartialKeyPath<Trip>]] { [[\.name]] }                        // #Index
/// }
/// ```
/// Every persisted stored property carries `@Attribute` (or `@Relationship`); `@Transient`
/// marks one that is never persisted. Any other stored property is a schema error.
public protocol PersistentModel: AnyObject, Identifiable, Hashable, OptionalRelationshipWrapped {
    /// The class whose key paths `uniqueConstraints` and `indexes` use: the model itself
    /// (inferred). An associated type rather than `Self`, so that a non-final model class can
    /// be subclassed by other models.
    associatedtype ConstraintRoot = Self
    /// Makes an empty instance; Strata calls it once per object it loads.
    init()
    /// Compound unique constraints (SwiftData's `#Unique`), as `[[PartialKeyPath<Model>]]`. Default: none.
    static var uniqueConstraints: [[PartialKeyPath<ConstraintRoot>]] { get }
    /// Secondary indexes (SwiftData's `#Index`), as `[[PartialKeyPath<Model>]]`. Default: none.
    static var indexes: [[PartialKeyPath<ConstraintRoot>]] { get }
}

extension PersistentModel {
    public static var uniqueConstraints: [[PartialKeyPath<ConstraintRoot>]] { [] }
    public static var indexes: [[PartialKeyPath<ConstraintRoot>]] { [] }

    /// Identity: two references are equal when they are the same object. Same as SwiftData.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// The model's identifier; for models that declare no `id` of their own. Same as SwiftData.
    public var id: PersistentIdentifier { persistentModelID }

    var backing: ModelBacking? {
        guard let entity = EntityRegistry.shared.entity(for: Self.self) else { return nil }
        for property in entity.properties {
            if let b = property.backing(of: self) { return b }
        }
        return nil
    }

    /// The object's identifier in its store. Before the object is inserted into a context, a
    /// temporary identifier. Same as SwiftData's `persistentModelID`.
    public var persistentModelID: PersistentIdentifier {
        if let backing, let entity = backing.entity {
            return PersistentIdentifier(entityName: entity.name, storeIdentifier: backing.storeIdentifier, rowID: Int64(bitPattern: backing.rowID))
        }
        return PersistentIdentifier(entityName: String(describing: Self.self), storeIdentifier: nil,
                                    rowID: -Int64(UInt(bitPattern: ObjectIdentifier(self).hashValue) & 0x7FFF_FFFF_FFFF))
    }

    /// The context the object is registered in, if any. Same as SwiftData's `modelContext`.
    public var modelContext: ModelContext? { backing?.context }

    /// True from `ModelContext.delete(_:)` until the deletion is saved (or rolled back).
    /// Same as SwiftData's `isDeleted`.
    public var isDeleted: Bool { backing?.status == .deleted }

    /// True when the object is inserted, changed or deleted and not yet saved. Same as SwiftData.
    public var hasChanges: Bool {
        guard let backing else { return false }
        return backing.status == .inserted || backing.status == .deleted || backing.isChanged
    }
}

/// Identifies one stored object: its model (entity), its store and its row.
/// Same as SwiftData's `PersistentIdentifier` (Hashable, Comparable, Codable, Sendable).
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The model's name (its class name).
    public let entityName: String
    /// The store (configuration) the object lives in; nil for a temporary identifier.
    public let storeIdentifier: String?
    /// The row id in the store; negative for a temporary identifier.
    public let rowID: Int64

    init(entityName: String, storeIdentifier: String?, rowID: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.rowID = rowID
    }

    /// True for an object that was never inserted into a context.
    public var isTemporary: Bool { rowID < 0 }

    public static func < (a: Self, b: Self) -> Bool {
        (a.entityName, a.storeIdentifier ?? "", a.rowID) < (b.entityName, b.storeIdentifier ?? "", b.rowID)
    }

    public var description: String { "\(entityName)/\(rowID)\(storeIdentifier.map { "@\($0)" } ?? "")" }
}

/// Every entity discovered in this process, by model class.
final class EntityRegistry: Sendable {
    static let shared = EntityRegistry()
    private let entities = Mutex<[ObjectIdentifier: Entity]>([:])

    func entity(for type: any PersistentModel.Type) -> Entity? {
        entities.withLock { $0[ObjectIdentifier(type)] }
    }

    func entity(forClassOf object: AnyObject) -> Entity? {
        let id = ObjectIdentifier(type(of: object))
        return entities.withLock { $0[id] }
    }

    /// The entity of a model class, discovered the first time.
    func discoverModel<T: PersistentModel>(_ type: T.Type) throws -> Entity {
        if let known = entity(for: type) { return known }
        let entity = try Entity(type)
        return entities.withLock { map in
            if let raced = map[ObjectIdentifier(type)] { return raced }
            map[ObjectIdentifier(type)] = entity
            return entity
        }
    }

    /// The entity of a related model (discovered with the container, so found here); a model
    /// that cannot be discovered at all stands for an empty placeholder.
    func discoverOrPlaceholder(_ type: any PersistentModel.Type) -> Entity {
        if let entity = try? discover(type) { return entity }
        if let placeholder = try? discoverModel(UndiscoverableModel.self) { return placeholder }
        preconditionFailure("\(type) cannot be discovered as a model.")
    }

    func discover(_ type: any PersistentModel.Type) throws -> Entity {
        func open<T: PersistentModel>(_ t: T.Type) throws -> Entity { try discoverModel(t) }
        return try open(type)
    }
}

/// Stands for a related model that failed discovery (its container already reported why), and
/// for an identifier `ModelContext.model(for:)` cannot map to a model of the schema.
final class UndiscoverableModel: PersistentModel {
    @Attribute var unused: Int = 0
    init() {}
}
