import Foundation
@_spi(StorageBackend) import StrataRecords

// What StrataData's `@Model` macro writes into a model class. Public because a macro's
// expansion is compiled in the module of the model; underscored because nobody writes these by
// hand (a model without the macro uses the `@Attribute`, `@Relationship` and `@Transient`
// property wrappers). StrataData/README.md shows an expansion.
//
// For `var title: String` in a `@Model` class the macro writes:
//
//     var title: String {
//         @storageRestrictions(initializes: _$title, accesses: _title)
//         init(initialValue) {
//             _title._initialize(initialValue)
//             _$title = Strata._ModelPropertyInitialized()
//         }
//         get { Strata._modelGet(self, \.title, \._title) }
//         set { Strata._modelSet(self, \.title, \._title, newValue) }
//     }
//     private var _title: Strata._ModelStorage<String> = .init()
//     private var _$title: Strata._ModelPropertyInitialized
//
// The macro sees only syntax: it cannot tell whether `Folder` in `var folder: Folder?` is a
// model. So the storage's type never depends on that: `_ModelStorage<Value>` is one generic
// type, with no constraint on `Value`, that holds an attribute's value or a relationship's
// references. The storage's type is written out, or (`var count = 3`) inferred from a call
// that has one overload. Whether the property is an attribute or a relationship is decided
// where nothing depends on when the compiler sees the other files: in the accessors' bodies,
// by overload resolution (`_modelGet` for a `Codable` value, for a model, and an unavailable
// one that refuses any other type), and at run time by schema discovery (a `_ModelStorage` is
// a relationship exactly when its `Value` is a `RelationshipValue`).
//
// (Overload resolution in the storage's initial value, as before, gave the storage's type: a
// compiler that had not yet seen the `PersistentModel` conformance another file's `@Model` adds
// picked the unavailable overload, and a valid `var species: BirdSpecies?` was refused,
// depending on the order in which it compiled the files.)
//
// `@Attribute(options...)` gets an `Attribute<Value>` storage (a property with attribute
// options is an attribute, also of a type that is not `Codable`: `.transformable(by:)`),
// `@Relationship(...)` a `_ModelRelationship<Value>` (which keeps the declaration), and
// `@Transient` a `_TransientValue<Value>`. None of the four constrains `Value`. The init
// accessor lets an initializer set the property before `super.init` (a subclass does), as
// SwiftData's expansion does; `_$title` has no value until then, so Swift still checks that
// every initializer sets every property that has no default. Every get and set goes through
// `_modelGet` / `_modelSet` with the object and both key paths: the object layer can add to
// them (the change tracking, observation) without changing what the macro writes.

/// A storage `@Model` gives a property and that is the same for every value type: `Attribute`
/// (for `@Attribute(options...)`) and `_TransientValue`.
public protocol _ModelPropertyStorage {
    associatedtype Value
    /// The property's value in `owner`.
    static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                             _ storage: ReferenceWritableKeyPath<Owner, Self>) -> Value
    /// Sets the property of `owner` (registered or not) as its setter does.
    static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                             _ storage: ReferenceWritableKeyPath<Owner, Self>, _ newValue: Value)
    /// The value an initializer gives the property before the object exists as a whole (it is
    /// in no context then).
    mutating func _initialize(_ value: Value)
}

/// The getter of a `@Model` property with an `Attribute` or `_TransientValue` storage.
@inlinable @inline(__always)
public func _modelGet<Owner: PersistentModel, Storage: _ModelPropertyStorage>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Storage.Value>,
    _ storage: ReferenceWritableKeyPath<Owner, Storage>
) -> Storage.Value {
    Storage._get(owner, property, storage)
}

/// The setter of a `@Model` property with an `Attribute` or `_TransientValue` storage.
@inlinable @inline(__always)
public func _modelSet<Owner: PersistentModel, Storage: _ModelPropertyStorage>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Storage.Value>,
    _ storage: ReferenceWritableKeyPath<Owner, Storage>, _ newValue: Storage.Value
) {
    Storage._set(owner, property, storage, newValue)
}

/// Set by a `@Model` property's init accessor: the property has been given a value (Swift's
/// definite initialization tracks this empty field). Schema discovery skips it.
public struct _ModelPropertyInitialized: Sendable {
    @inlinable public init() {}
}

extension Attribute: _ModelPropertyStorage {
    @inlinable @inline(__always)
    public static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Attribute<Value>>) -> Value {
        Attribute[_enclosingInstance: owner, wrapped: property, storage: storage]
    }

    @inlinable @inline(__always)
    public static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Attribute<Value>>, _ newValue: Value) {
        Attribute[_enclosingInstance: owner, wrapped: property, storage: storage] = newValue
    }

    @inlinable
    public mutating func _initialize(_ value: Value) { self.value = value }
}

// MARK: A property without @Relationship or attribute options

/// The storage of a `@Model` property without `@Relationship(...)` or attribute options: an
/// attribute when its type is `Codable`, a relationship when its type is a model, an optional
/// model or an array of models (also when it is `Codable` too). Its type does not depend on
/// which: the accessors' overloads and schema discovery tell.
///
/// An attribute's storage is its `attribute` (first, so that the storage starts with it: schema
/// discovery hands Strata's attribute code the storage as an `Attribute<Value>`). A
/// relationship's references are in `references`, its link to the backing in `attribute`'s
/// (and its former name, `@Attribute(originalName:)`, in `attribute`'s declaration).
public struct _ModelStorage<Value> {
    @usableFromInline var attribute: Attribute<Value>
    @usableFromInline var references: [RelatedReference]?

    /// The storage of a property declared without options.
    @inlinable public init() {
        attribute = Attribute(_declared: DeclaredAttribute())
    }

    /// `@Attribute(originalName:)`: the property's former name (an attribute's or a
    /// relationship's).
    @inlinable public init(originalName: String? = nil, hashModifier: String? = nil) {
        attribute = Attribute(_declared: DeclaredAttribute(AttributeDeclaration(originalName: originalName)))
    }

    /// An attribute: the value, given by an initializer.
    @inlinable @_disfavoredOverload
    public mutating func _initialize(_ value: Value) { attribute.value = value }
}

extension _ModelStorage where Value: RelationshipValue {
    /// A relationship: the objects, given by an initializer (they are linked up, inverse side
    /// and insertion, when the object is inserted).
    @inlinable
    public mutating func _initialize(_ value: Value) { references = RelatedReference.objects(value) }
}

/// The getter of an attribute (a `Codable` value). The same as `Attribute`'s, on the storage's
/// `attribute`.
@inlinable @inline(__always) @_disfavoredOverload
public func _modelGet<Owner: PersistentModel, Value: Codable>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelStorage<Value>>
) -> Value {
    var link = owner[keyPath: storage].attribute.link
    var slot = owner[keyPath: storage].attribute.slot
    let value = owner[keyPath: storage].attribute.value
    if link == nil, ModelBacking.attachIfModel(owner) {
        link = owner[keyPath: storage].attribute.link
        slot = owner[keyPath: storage].attribute.slot
    }
    guard let link else {
        if let value { return value }
        ModelBacking.unset(Value.self, in: owner)
    }
    link._withUnsafeGuaranteedRef { $0.observe(slot) }
    if let value { return value }
    return link._withUnsafeGuaranteedRef { $0.missingValue(slot) }
}

/// The getter of a relationship (a model, an optional model or an array of models). The same
/// as `Relationship`'s, on the storage's `references` and `attribute`'s link.
@inlinable @inline(__always)
public func _modelGet<Owner: PersistentModel, Value: RelationshipValue>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelStorage<Value>>
) -> Value {
    var link = owner[keyPath: storage].attribute.link
    var slot = owner[keyPath: storage].attribute.slot
    if link == nil, ModelBacking.attachIfModel(owner) {
        link = owner[keyPath: storage].attribute.link
        slot = owner[keyPath: storage].attribute.slot
    }
    guard let link else {
        // Not a model Strata can discover (or while it is being discovered): what it was given.
        guard let references = owner[keyPath: storage].references else { ModelBacking.unset(Value.self, in: owner) }
        return Value.relationshipValue(references.objects)
    }
    return link._withUnsafeGuaranteedRef { $0.relationshipValue(slot) }
}

/// Any other type: refused where the property is declared.
@available(*, unavailable, message: "a @Model property's type must be Codable (an attribute) or a model, an optional model or an array of models (a relationship); mark the property @Transient to keep it out of the store")
public func _modelGet<Owner: PersistentModel, Value>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelStorage<Value>>
) -> Value {
    preconditionFailure("unavailable")
}

/// The setter of an attribute. (Any type: the getter refuses the types that are neither
/// `Codable` nor models, once.)
@inlinable @inline(__always) @_disfavoredOverload
public func _modelSet<Owner: PersistentModel, Value>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelStorage<Value>>, _ newValue: Value
) {
    let link = owner[keyPath: storage].attribute.link
    let slot = owner[keyPath: storage].attribute.slot
    owner[keyPath: storage].attribute.value = newValue
    if let link { link._withUnsafeGuaranteedRef { $0.didSet(slot) } }
}

/// The setter of a relationship.
@inlinable @inline(__always)
public func _modelSet<Owner: PersistentModel, Value: RelationshipValue>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelStorage<Value>>, _ newValue: Value
) {
    var link = owner[keyPath: storage].attribute.link
    var slot = owner[keyPath: storage].attribute.slot
    if link == nil, ModelBacking.attachIfModel(owner) {
        link = owner[keyPath: storage].attribute.link
        slot = owner[keyPath: storage].attribute.slot
    }
    guard let link else {
        owner[keyPath: storage].references = RelatedReference.objects(newValue)
        return
    }
    link._withUnsafeGuaranteedRef { $0.assignRelationship(slot, newValue.relatedObjects) }
}

// MARK: @Relationship(...)

/// The storage of a `@Model` property declared `@Relationship(...)`: the related objects, and
/// the declaration (delete rule, inverse, counts, former name). Laid out as `Relationship`, with
/// no constraint on `Value`; a type that is not a model, an optional model or an array of
/// models is refused by the accessors' overloads.
public struct _ModelRelationship<Value> {
    @usableFromInline var references: [RelatedReference]?
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0
    /// The backing, retained: set in an object's first persisted property only.
    @usableFromInline var keeper: ModelBacking? = nil
    let declaration: RelationshipDeclaration

    /// `@Relationship(deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:)`,
    /// with the defaults of `Relationship`'s.
    public init(deleteRule: DeleteRule = .nullify, minimumModelCount: Int? = 0, maximumModelCount: Int? = 0,
                originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil) {
        var declaration = RelationshipDeclaration()
        declaration.deleteRule = deleteRule
        declaration.minimumModelCount = minimumModelCount
        declaration.maximumModelCount = maximumModelCount
        declaration.originalName = originalName
        declaration.inverse = inverse
        self.declaration = declaration
    }
}

extension _ModelRelationship where Value: RelationshipValue {
    /// The objects, given by an initializer.
    @inlinable
    public mutating func _initialize(_ value: Value) { references = RelatedReference.objects(value) }
}

extension _ModelRelationship {
    @available(*, unavailable, message: "@Relationship applies to a property whose type is a model, an optional model or an array of models")
    public mutating func _initialize(_ value: Value) {}
}

/// The getter of a `@Relationship(...)` property: `Relationship`'s.
@inlinable @inline(__always)
public func _modelGet<Owner: PersistentModel, Value: RelationshipValue>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelRelationship<Value>>
) -> Value {
    var link = owner[keyPath: storage].link
    var slot = owner[keyPath: storage].slot
    if link == nil, ModelBacking.attachIfModel(owner) {
        link = owner[keyPath: storage].link
        slot = owner[keyPath: storage].slot
    }
    guard let link else {
        guard let references = owner[keyPath: storage].references else { ModelBacking.unset(Value.self, in: owner) }
        return Value.relationshipValue(references.objects)
    }
    return link._withUnsafeGuaranteedRef { $0.relationshipValue(slot) }
}

@available(*, unavailable, message: "@Relationship applies to a property whose type is a model, an optional model or an array of models")
public func _modelGet<Owner: PersistentModel, Value>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelRelationship<Value>>
) -> Value {
    preconditionFailure("unavailable")
}

/// The setter of a `@Relationship(...)` property: `Relationship`'s.
@inlinable @inline(__always)
public func _modelSet<Owner: PersistentModel, Value: RelationshipValue>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelRelationship<Value>>, _ newValue: Value
) {
    var link = owner[keyPath: storage].link
    var slot = owner[keyPath: storage].slot
    if link == nil, ModelBacking.attachIfModel(owner) {
        link = owner[keyPath: storage].link
        slot = owner[keyPath: storage].slot
    }
    guard let link else {
        owner[keyPath: storage].references = RelatedReference.objects(newValue)
        return
    }
    link._withUnsafeGuaranteedRef { $0.assignRelationship(slot, newValue.relatedObjects) }
}

@available(*, unavailable, message: "@Relationship applies to a property whose type is a model, an optional model or an array of models")
public func _modelSet<Owner: PersistentModel, Value>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
    _ storage: ReferenceWritableKeyPath<Owner, _ModelRelationship<Value>>, _ newValue: Value
) {}

extension RelatedReference {
    /// The references of a relationship's value, objects not in a context yet.
    @inlinable
    static func objects<Value: RelationshipValue>(_ value: Value) -> [RelatedReference] {
        value.relatedObjects.map { .object($0) }
    }
}

extension Array where Element == RelatedReference {
    /// The objects among the references (a storage's before its object is discovered).
    @inlinable
    var objects: [AnyObject] { compactMap { if case .object(let o) = $0 { o } else { nil } } }
}

// MARK: Schema discovery

extension _ModelStorage {
    /// Where `attribute` is in the storage: at its start, declared first, for every value type.
    static var attributeOffset: Int { modelStorageAttributeOffset }
}

/// `_ModelStorage.attributeOffset`, found once (see `attributeLinks`).
let modelStorageAttributeOffset = MemoryLayout<_ModelStorage<UInt8>>.offset(of: \_ModelStorage<UInt8>.attribute) ?? 0

extension _ModelStorage: ModelRelationshipStorage where Value: RelationshipValue {
    /// A relationship declared without `@Relationship(...)`: the defaults, and the former name
    /// of `@Attribute(originalName:)` (with `Relationship(originalName:)`'s counts).
    static func makeRelationship(name: String, offset: Int, index: Int, in sample: AnyObject) -> PersistedProperty {
        var declaration = RelationshipDeclaration()
        if let originalName = read(in: sample, at: offset, { $0.attribute.declared.declaration.originalName }) {
            declaration.originalName = originalName
            declaration.minimumModelCount = 0
            declaration.maximumModelCount = 0
        }
        return RelationshipProperty(name: name, offset: offset, index: index, relationship: declaration, valueType: Value.self,
                                    referencesOffset: MemoryLayout<_ModelStorage<Value>>.offset(of: \_ModelStorage<Value>.references) ?? 0,
                                    link: attributeLinks.moved(by: attributeOffset))
    }
}

extension _ModelRelationship: ModelRelationshipStorage where Value: RelationshipValue {
    static func makeRelationship(name: String, offset: Int, index: Int, in sample: AnyObject) -> PersistedProperty {
        RelationshipProperty(name: name, offset: offset, index: index, relationship: read(in: sample, at: offset) { $0.declaration },
                             valueType: Value.self,
                             referencesOffset: MemoryLayout<_ModelRelationship<Value>>.offset(of: \_ModelRelationship<Value>.references) ?? 0,
                             link: StorageLink(_ModelRelationship<Value>.self, link: \.link, slot: \.slot, keeper: \.keeper))
    }
}

// MARK: @Transient

/// The storage of a `@Transient` property of a `@Model` class: kept in memory, never
/// persisted, observed as `Transient` is. Schema discovery gives it a slot for observation and
/// persists nothing of it.
public struct _TransientValue<Value>: _ModelPropertyStorage {
    @usableFromInline var value: Value?
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0

    @inlinable public init() {}

    @inlinable
    public static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, _TransientValue<Value>>) -> Value {
        var link = owner[keyPath: storage].link
        var slot = owner[keyPath: storage].slot
        let value = owner[keyPath: storage].value
        if link == nil, ModelBacking.attachIfModel(owner) {
            link = owner[keyPath: storage].link
            slot = owner[keyPath: storage].slot
        }
        if let link { link._withUnsafeGuaranteedRef { $0.observe(slot) } }
        if let value { return value }
        preconditionFailure("\(Owner.self): a @Transient property of type \(Value.self) was read before it was set. Give it a default value.")
    }

    @inlinable
    public static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, _TransientValue<Value>>, _ newValue: Value) {
        let link = owner[keyPath: storage].link
        let slot = owner[keyPath: storage].slot
        owner[keyPath: storage].value = newValue
        if let link { link._withUnsafeGuaranteedRef { $0.didSet(slot) } }
    }

    @inlinable
    public mutating func _initialize(_ value: Value) { self.value = value }
}

