import Foundation
@_spi(StorageBackend) import StrataRecords

// The storage's initial value when the declaration names no type (`var count = 3`): the
// storage's type is then inferred from the call, so each of these has one overload, with no
// constraint on the value's type (it never depends on whether a type is `Codable` or a model,
// see ModelPropertyStorage.swift). `inferredFrom:` is an autoclosure, never called. When the
// declaration names the type, the macro writes the storage's type and `.init(...)`:
//
//     var count = 3                                  // _ModelStorage<Int>: Strata._modelProperty(inferredFrom: 3)
//     var title: String                              // _ModelStorage<String> = .init()
//     @Attribute(originalName: "name") var title: String   // _ModelStorage<String> = .init(originalName: "name")
//     @Attribute(.unique) var id: UUID               // Attribute<UUID> = .init(.unique)
//     @Relationship(deleteRule: .cascade) var stops: [Stop] = []   // _ModelRelationship<[Stop]> = .init(deleteRule: .cascade)
//     @Transient var isExpanded = false              // _TransientValue<Bool>: Strata._modelTransient(inferredFrom: false)

/// The storage of a property without `@Relationship` or attribute options, of the type of its
/// initial value.
@inlinable
public func _modelProperty<V>(inferredFrom _: @autoclosure () -> V, originalName: String? = nil,
                              hashModifier: String? = nil) -> _ModelStorage<V> {
    originalName == nil ? _ModelStorage() : _ModelStorage(originalName: originalName)
}

/// `@Attribute(options..., originalName:)`, of the type of the initial value.
@inlinable
public func _modelAttribute<V>(inferredFrom _: @autoclosure () -> V, _ options: AttributeOption..., originalName: String? = nil,
                               hashModifier: String? = nil) -> Attribute<V> {
    Attribute(_declared: DeclaredAttribute(options, originalName: originalName))
}

/// `@Relationship(deleteRule:..., inverse:)`, of the type of the initial value.
public func _modelRelationship<V>(
    inferredFrom _: @autoclosure () -> V, deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) -> _ModelRelationship<V> {
    _ModelRelationship(deleteRule: deleteRule, minimumModelCount: minimumModelCount, maximumModelCount: maximumModelCount,
                       originalName: originalName, inverse: inverse, hashModifier: hashModifier)
}

/// The storage of a `@Transient` property, of the type of its initial value.
@inlinable
public func _modelTransient<V>(inferredFrom _: @autoclosure () -> V) -> _TransientValue<V> { _TransientValue() }

extension Attribute {
    /// An attribute's storage with a declaration and no value (a `@Model` property's).
    @inlinable
    init(_declared declared: DeclaredAttribute) {
        self.declared = declared
    }
}
