import Foundation

// The storage `@Model` gives each stored property, chosen by the property's type: the macro
// sees only syntax, so it writes one call and overload resolution picks an `Attribute` for a
// `Codable` type and a `Relationship` for a model, an optional model or an array of models.
// `T.self` when the declaration names the type; `inferredFrom:` (an autoclosure, never
// called) when only the initial value does (`var count = 3`).

private let notPersistable = "a @Model property's type must be Codable (an attribute) or a model, an optional model or an array of models (a relationship); mark the property @Transient to keep it out of the store"

// MARK: A property without @Attribute or @Relationship

/// The storage of an attribute. (Disfavored: a type that is both Codable and a model is a relationship.)
@inlinable @_disfavoredOverload
public func _modelProperty<V: Codable>(_: V.Type) -> Attribute<V> { Attribute() }

/// The storage of a relationship.
@inlinable
public func _modelProperty<V: RelationshipValue>(_: V.Type) -> Relationship<V> { Relationship() }

@available(*, unavailable, message: "a @Model property's type must be Codable (an attribute) or a model, an optional model or an array of models (a relationship); mark the property @Transient to keep it out of the store")
public func _modelProperty<V>(_: V.Type) -> _TransientValue<V> { preconditionFailure(notPersistable) }

@inlinable @_disfavoredOverload
public func _modelProperty<V: Codable>(inferredFrom _: @autoclosure () -> V) -> Attribute<V> { Attribute() }

@inlinable
public func _modelProperty<V: RelationshipValue>(inferredFrom _: @autoclosure () -> V) -> Relationship<V> { Relationship() }

@available(*, unavailable, message: "a @Model property's type must be Codable (an attribute) or a model, an optional model or an array of models (a relationship); mark the property @Transient to keep it out of the store")
public func _modelProperty<V>(inferredFrom _: @autoclosure () -> V) -> _TransientValue<V> { preconditionFailure(notPersistable) }

// MARK: @Attribute(...)

/// `@Attribute(options, originalName:)` on an attribute.
@inlinable @_disfavoredOverload
public func _modelAttribute<V: Codable>(_: V.Type, _ options: AttributeOption..., originalName: String? = nil,
                                        hashModifier: String? = nil) -> Attribute<V> {
    Attribute(_declaration: AttributeDeclaration(options, originalName: originalName))
}

/// `@Attribute(.transformable(by:), ...)` on a type that is not `Codable` (a type that is
/// neither Codable nor given a transformer is refused when the container opens).
@inlinable @_disfavoredOverload
public func _modelAttribute<V>(_: V.Type, _ transformable: AttributeOption, _ options: AttributeOption..., originalName: String? = nil,
                               hashModifier: String? = nil) -> Attribute<V> {
    Attribute(_declaration: AttributeDeclaration([transformable] + options, originalName: originalName))
}

/// `@Attribute(originalName:)` on a relationship: the former name is the relationship's.
@inlinable
public func _modelAttribute<V: RelationshipValue>(_: V.Type, originalName: String? = nil, hashModifier: String? = nil) -> Relationship<V> {
    Relationship(originalName: originalName)
}

@available(*, unavailable, message: "attribute options do not apply to a relationship; use @Relationship(...)")
public func _modelAttribute<V: RelationshipValue>(_: V.Type, _ options: AttributeOption..., originalName: String? = nil,
                                                  hashModifier: String? = nil) -> Relationship<V> { preconditionFailure() }

@inlinable @_disfavoredOverload
public func _modelAttribute<V: Codable>(inferredFrom _: @autoclosure () -> V, _ options: AttributeOption..., originalName: String? = nil,
                                        hashModifier: String? = nil) -> Attribute<V> {
    Attribute(_declaration: AttributeDeclaration(options, originalName: originalName))
}

@inlinable
public func _modelAttribute<V: RelationshipValue>(inferredFrom _: @autoclosure () -> V, originalName: String? = nil,
                                                  hashModifier: String? = nil) -> Relationship<V> {
    Relationship(originalName: originalName)
}

@available(*, unavailable, message: "attribute options do not apply to a relationship; use @Relationship(...)")
public func _modelAttribute<V: RelationshipValue>(inferredFrom _: @autoclosure () -> V, _ options: AttributeOption...,
                                                  originalName: String? = nil, hashModifier: String? = nil) -> Relationship<V> { preconditionFailure() }

// MARK: @Relationship(...)

/// `@Relationship(deleteRule:..., inverse:)` on a relationship.
public func _modelRelationship<V: RelationshipValue>(
    _: V.Type, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
    originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) -> Relationship<V> {
    Relationship(deleteRule: deleteRule, minimumModelCount: minimumModelCount, maximumModelCount: maximumModelCount,
                 originalName: originalName, inverse: inverse, hashModifier: hashModifier)
}

public func _modelRelationship<V: RelationshipValue>(
    inferredFrom _: @autoclosure () -> V, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) -> Relationship<V> {
    Relationship(deleteRule: deleteRule, minimumModelCount: minimumModelCount, maximumModelCount: maximumModelCount,
                 originalName: originalName, inverse: inverse, hashModifier: hashModifier)
}

@available(*, unavailable, message: "@Relationship applies to a property whose type is a model, an optional model or an array of models")
public func _modelRelationship<V>(
    _: V.Type, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
    originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) -> _TransientValue<V> { preconditionFailure() }

@available(*, unavailable, message: "@Relationship applies to a property whose type is a model, an optional model or an array of models")
public func _modelRelationship<V>(
    inferredFrom _: @autoclosure () -> V, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) -> _TransientValue<V> { preconditionFailure() }

// MARK: @Transient

/// The storage of a `@Transient` property.
@inlinable
public func _modelTransient<V>(_: V.Type) -> _TransientValue<V> { _TransientValue() }

@inlinable
public func _modelTransient<V>(inferredFrom _: @autoclosure () -> V) -> _TransientValue<V> { _TransientValue() }

extension Attribute {
    /// An attribute's storage with a declaration and no value (a `@Model` property's).
    @inlinable
    init(_declaration: AttributeDeclaration) {
        self.declared = DeclaredAttribute(_declaration)
    }
}
