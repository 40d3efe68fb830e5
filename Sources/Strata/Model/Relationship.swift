import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

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
@usableFromInline
enum RelatedReference {
    case row(RowID)
    case object(AnyObject)
}

/// Marks a property of a model that refers to other models: to-one (`Model?`), to-many
/// (`[Model]`) or optional to-many (`[Model]?`). Same as SwiftData's `@Relationship`.
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
/// exactly one relationship back), and notifies the observers of both sides. Related objects
/// load on first access. A to-many relationship keeps the order it was given, across saves and
/// reopens (SwiftData does not).
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    @usableFromInline var references: [RelatedReference]?
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0
    /// The backing, retained: set in an object's first persisted property only.
    @usableFromInline var keeper: ModelBacking? = nil
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

    public static subscript<Owner: AnyObject>(_enclosingInstance owner: Owner,
                                              wrapped wrapped: ReferenceWritableKeyPath<Owner, Value>,
                                              storage storage: ReferenceWritableKeyPath<Owner, Relationship<Value>>) -> Value {
        @inline(__always) get {
            var link = owner[keyPath: storage].link
            var slot = owner[keyPath: storage].slot
            if link == nil, ModelBacking.attachIfModel(owner) {
                link = owner[keyPath: storage].link
                slot = owner[keyPath: storage].slot
            }
            guard let link else {
                // Not a model Strata can discover (or while it is being discovered): what it was given.
                guard let references = owner[keyPath: storage].references else { ModelBacking.unset(Value.self, in: owner) }
                return Value.relationshipValue(references.compactMap { if case .object(let o) = $0 { o } else { nil } })
            }
            return link._withUnsafeGuaranteedRef { $0.relationshipValue(slot) }
        }
        @inline(__always) set {
            var link = owner[keyPath: storage].link
            var slot = owner[keyPath: storage].slot
            if link == nil, ModelBacking.attachIfModel(owner) {
                link = owner[keyPath: storage].link
                slot = owner[keyPath: storage].slot
            }
            guard let link else {
                owner[keyPath: storage].references = newValue.relatedObjects.map { .object($0) }
                return
            }
            link._withUnsafeGuaranteedRef { $0.assignRelationship(slot, newValue.relatedObjects) }
        }
    }
}

extension Relationship {
    static func makeRelationship(name: String, offset: Int, index: Int, declaration: RelationshipDeclaration) -> PersistedProperty {
        RelationshipProperty(name: name, offset: offset, index: index, relationship: declaration, valueType: Value.self,
                             referencesOffset: MemoryLayout<Relationship<Value>>.offset(of: \Relationship<Value>.references) ?? 0,
                             link: StorageLink(Relationship<Value>.self, link: \.link, slot: \.slot, keeper: \.keeper))
    }
}
