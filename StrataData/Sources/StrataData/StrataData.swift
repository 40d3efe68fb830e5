// `import StrataData` is `import SwiftData` where SwiftData exists (Apple platforms) and
// Strata with SwiftData's macros everywhere else, so one source builds on both.
#if canImport(SwiftData)
@_exported import SwiftData
#else
@_exported import Strata
// As SwiftData's does: a model file with only `import SwiftData` uses UUID and Date.
@_exported import Foundation

/// Makes a class a persisted model: every stored `var` is persisted — an attribute, or a
/// relationship when its type is a model, an optional model or an array of models — unless it
/// is `@Transient`. Adds the `PersistentModel` conformance and an `init()` with no property
/// set, which Strata uses to make the objects it loads (unless the class has one).
///
/// ```swift
/// @Model final class Trip {
///     @Attribute(.unique) var id: UUID
///     var name: String
///     var budget: Double?                        // nil unless set
///     @Relationship(deleteRule: .cascade, inverse: \Stop.trip) var stops: [Stop] = []
///     @Transient var isExpanded = false
///
///     init(name: String) { id = UUID(); self.name = name }
/// }
/// ```
/// Same as SwiftData's `@Model`. Differs from SwiftData: the added `init()` is public API of the
/// class (SwiftData adds `init(backingData:)`).
@attached(member, conformances: PersistentModel, names: named(init), named(schemaMetadata))
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel)
public macro Model() = #externalMacro(module: "StrataDataMacros", type: "ModelMacro")

/// Options of a persisted property of a `@Model` class, and its former name (`originalName:`,
/// for a lightweight migration). Same as SwiftData's `@Attribute`.
@attached(peer)
public macro Attribute(_ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil)
    = #externalMacro(module: "StrataDataMacros", type: "MarkerMacro")

/// Options of a relationship of a `@Model` class: its delete rule, inverse and former name.
/// Same as SwiftData's `@Relationship` (without its `.unique` option).
@attached(peer)
public macro Relationship(deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                          originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil)
    = #externalMacro(module: "StrataDataMacros", type: "MarkerMacro")

/// A stored property of a `@Model` class that is never persisted; it needs a default value
/// unless it is optional. Same as SwiftData's `@Transient`.
@attached(peer)
public macro Transient() = #externalMacro(module: "StrataDataMacros", type: "MarkerMacro")

/// Compound unique constraints of a `@Model` class, in its body: `#Unique<Trip>([\.name, \.start])`.
/// Same as SwiftData's `#Unique`.
@freestanding(declaration, names: named(uniqueConstraints), named(_uniqueConstraintNames))
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "StrataDataMacros", type: "UniqueMacro")

/// Secondary indexes of a `@Model` class, in its body: `#Index<Trip>([\.start], [\.name, \.budget])`.
/// Same as SwiftData's `#Index` (the key-path form).
@freestanding(declaration, names: named(indexes), named(_indexNames))
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "StrataDataMacros", type: "IndexMacro")

/// Makes an actor a `ModelActor` with its own context: adds `modelContainer`, `modelExecutor`
/// and `init(modelContainer:)`. Same as SwiftData's `@ModelActor`.
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "StrataDataMacros", type: "ModelActorMacro")

/// Put on each stored property by `@Model`: its storage and accessors. Not for use by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_), prefixed(`_$`))
public macro _PersistedProperty() = #externalMacro(module: "StrataDataMacros", type: "PersistedPropertyMacro")
#endif
