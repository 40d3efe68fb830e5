import Foundation
@_spi(StorageBackend) import StrataRecords

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
///
/// Not API (the underscore says so), and all static: a model object's code completion offers
/// none of it.
public protocol OptionalRelationshipWrapped {
    static var _relatedType: any PersistentModel.Type { get }
    static var _isToMany: Bool { get }
    /// The objects `value` relates to.
    static func _relatedObjects(of value: Self) -> [AnyObject]
    /// The value a relationship holding `objects` has (for a to-one: the first, or nil).
    static func _relationshipValue(_ objects: [AnyObject]) -> Self?
}

extension PersistentModel {
    public static var _relatedType: any PersistentModel.Type { Self.self }
    public static var _isToMany: Bool { false }
    public static func _relatedObjects(of value: Self) -> [AnyObject] { [value] }
    public static func _relationshipValue(_ objects: [AnyObject]) -> Self? { objects.first as? Self }
}

extension Array: OptionalRelationshipWrapped where Element: PersistentModel {
    public static var _relatedType: any PersistentModel.Type { Element.self }
    public static var _isToMany: Bool { true }
    public static func _relatedObjects(of value: Self) -> [AnyObject] { value.map { $0 as AnyObject } }
    /// An optional to-many reads as an array, empty when it holds nothing (the store keeps
    /// no difference between nil and empty).
    public static func _relationshipValue(_ objects: [AnyObject]) -> Self? { objects.compactMap { $0 as? Element } }
}

extension Optional: RelationshipValue where Wrapped: OptionalRelationshipWrapped {
    public static var relatedType: any PersistentModel.Type { Wrapped._relatedType }
    public static var isToMany: Bool { Wrapped._isToMany }
    public var relatedObjects: [AnyObject] { self.map(Wrapped._relatedObjects(of:)) ?? [] }
    public static func relationshipValue(_ objects: [AnyObject]) -> Self { Wrapped._relationshipValue(objects) }
}

extension Array: RelationshipValue where Element: PersistentModel {
    public static var relatedType: any PersistentModel.Type { Element.self }
    public static var isToMany: Bool { true }
    public var relatedObjects: [AnyObject] { map { $0 as AnyObject } }
    public static func relationshipValue(_ objects: [AnyObject]) -> Self { objects.compactMap { $0 as? Element } }
}
