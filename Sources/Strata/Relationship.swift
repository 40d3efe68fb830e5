import Foundation
import StrataEngine

/// What happens to related objects when an object is deleted. Same as SwiftData's
/// `Schema.Relationship.DeleteRule`.
public enum DeleteRule: String, Codable, Sendable, Hashable {
    /// Remove the deleted object from the related objects' inverse relationship (the default).
    case nullify
    /// Delete the related objects too.
    case cascade
    /// Refuse the save while related objects exist (`StrataError` `.deleteDenied`).
    case deny
    /// Leave the related objects as they are.
    case noAction
}

/// What a relationship's declaration says.
struct RelationshipDeclaration {
    var deleteRule: DeleteRule = .nullify
    var minimumModelCount: Int? = nil
    var maximumModelCount: Int? = nil
    var originalName: String? = nil
    var inverse: AnyKeyPath? = nil

    init() {}
}

/// One related object as a relationship holds it: a row of the context, or an object not yet
/// inserted into any context (it is inserted along with its owner).
enum RelatedReference {
    case row(RowID)
    case object(AnyObject)
}

/// The value types a relationship may have: an optional model (to-one), an array of models
/// (to-many), or an optional array of models (to-many, as CloudKit-ready SwiftData models
/// declare them: `var animals: [Animal]? = []`).
public protocol RelationshipValue {
    /// The related model class.
    static var relatedType: any PersistentModel.Type { get }
    /// True for a to-many relationship.
    static var isToMany: Bool { get }
    /// The related objects.
    var relatedObjects: [AnyObject] { get }
    /// A value holding `objects` (for a to-one: the first, or nil).
    static func relationshipValue(_ objects: [AnyObject]) -> Self
}

/// What an optional relationship may wrap: a model (a to-one relationship) or an array of
/// models (an optional to-many one). `PersistentModel` refines it; nobody else conforms.
public protocol OptionalRelationshipWrapped {
    static var _relatedType: any PersistentModel.Type { get }
    static var _isToMany: Bool { get }
    var _relatedObjects: [AnyObject] { get }
    /// The value a relationship holding `objects` has (for a to-one: the first, or nil).
    static func _relationshipValue(_ objects: [AnyObject]) -> Self?
}

extension PersistentModel {
    public static var _relatedType: any PersistentModel.Type { Self.self }
    public static var _isToMany: Bool { false }
    public var _relatedObjects: [AnyObject] { [self] }
    public static func _relationshipValue(_ objects: [AnyObject]) -> Self? { objects.first as? Self }
}

extension Array: OptionalRelationshipWrapped where Element: PersistentModel {
    public static var _relatedType: any PersistentModel.Type { Element.self }
    public static var _isToMany: Bool { true }
    public var _relatedObjects: [AnyObject] { map { $0 as AnyObject } }
    /// An optional to-many reads as an array, empty when it holds nothing (the store keeps
    /// no difference between nil and empty).
    public static func _relationshipValue(_ objects: [AnyObject]) -> Self? { objects.compactMap { $0 as? Element } }
}

extension Optional: RelationshipValue where Wrapped: OptionalRelationshipWrapped {
    public static var relatedType: any PersistentModel.Type { Wrapped._relatedType }
    public static var isToMany: Bool { Wrapped._isToMany }
    public var relatedObjects: [AnyObject] { self?._relatedObjects ?? [] }
    public static func relationshipValue(_ objects: [AnyObject]) -> Self { Wrapped._relationshipValue(objects) }
}

extension Array: RelationshipValue where Element: PersistentModel {
    public static var relatedType: any PersistentModel.Type { Element.self }
    public static var isToMany: Bool { true }
    public var relatedObjects: [AnyObject] { map { $0 as AnyObject } }
    public static func relationshipValue(_ objects: [AnyObject]) -> Self { objects.compactMap { $0 as? Element } }
}

/// Marks a property of a model that refers to other models: to-one (`Model?`) or to-many
/// (`[Model]`). Same as SwiftData's `@Relationship`.
///
/// ```swift
/// final class Trip: PersistentModel {
///     @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
///     @Relationship var owner: Person? = nil
///     init() {}
/// }
/// ```
/// Setting either side of a relationship whose objects are in a context updates the other side
/// at once, with or without `inverse:` (Strata finds the inverse when the related model has
/// exactly one relationship back). Related objects load on first access. A to-many
/// relationship keeps the order it was given, across saves and reopens (SwiftData does not).
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    var references: [RelatedReference]?
    var backing: ModelBacking?
    var property: RelationshipProperty?
    let declaration: RelationshipDeclaration

    /// A relationship without options; give it a value in an initializer or a default.
    public init() {
        declaration = RelationshipDeclaration()
    }

    public init(wrappedValue: Value) {
        references = wrappedValue.relatedObjects.map { .object($0) }
        declaration = RelationshipDeclaration()
    }

    public init(deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) {
        var d = RelationshipDeclaration()
        d.deleteRule = deleteRule
        d.minimumModelCount = minimumModelCount
        d.maximumModelCount = maximumModelCount
        d.originalName = originalName
        d.inverse = inverse
        declaration = d
    }

    public init(wrappedValue: Value, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) {
        self.init(deleteRule: deleteRule, minimumModelCount: minimumModelCount, maximumModelCount: maximumModelCount,
                  originalName: originalName, inverse: inverse, hashModifier: hashModifier)
        references = wrappedValue.relatedObjects.map { .object($0) }
    }

    @available(*, unavailable, message: "@Relationship is only available on properties of model classes")
    public var wrappedValue: Value {
        get { preconditionFailure("unavailable") }
        set { preconditionFailure("unavailable") }
    }

    public static subscript<EnclosingSelf: AnyObject>(
        _enclosingInstance owner: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Relationship<Value>>
    ) -> Value {
        get {
            let storage = owner[keyPath: storageKeyPath]
            guard let references = storage.references else { return storage.unsetValue() }
            return Value.relationshipValue(storage.resolve(references))
        }
        set {
            let storage = owner[keyPath: storageKeyPath]
            if let backing = storage.backing, backing.probeIndex >= 0 { return }
            if let entity = EntityRegistry.shared.entity(forClassOf: owner),
               let property = storage.property ?? entity.property(for: wrappedKeyPath) as? RelationshipProperty {
                property.assign(newValue.relatedObjects, to: owner, ownerEntity: entity)
            } else {
                // A model no container has seen yet: keep the objects; insert links them up.
                owner[keyPath: storageKeyPath].references = newValue.relatedObjects.map { .object($0) }
            }
        }
    }

    private func resolve(_ references: [RelatedReference]) -> [AnyObject] {
        references.compactMap { reference in
            switch reference {
            case .object(let o): return o
            case .row(let row): return property.flatMap { p in backing?.readingContext?.relatedObject(p.targetEntity, row) }
            }
        }
    }

    @inline(never)
    func unsetValue() -> Value {
        if let backing, backing.probeIndex >= 0 {
            backing.recordProbe()
            return Value.relationshipValue([])
        }
        preconditionFailure("A relationship of type \(Value.self) was read before it was set. Give it a default value (= nil or = []) or set it in the initializer.")
    }
}

extension Relationship: RelationshipStorage {
    static func makeRelationship(name: String, offset: Int, index: Int, declaration: RelationshipDeclaration) -> AnyProperty {
        RelationshipProperty(name: name, offset: offset, index: index, relationship: declaration,
                             storage: RelationshipStorageAccess<Value>.self)
    }
    var relationshipDeclaration: RelationshipDeclaration { declaration }
    var hasReferences: Bool { references != nil }
}

/// What schema discovery needs from a `Relationship<Value>` field.
protocol RelationshipStorage {
    static func makeRelationship(name: String, offset: Int, index: Int, declaration: RelationshipDeclaration) -> AnyProperty
    var relationshipDeclaration: RelationshipDeclaration { get }
}
