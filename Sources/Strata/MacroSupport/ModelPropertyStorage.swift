import Foundation

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
//     private var _title = Strata._modelProperty(String.self)
//     private var _$title: Strata._ModelPropertyInitialized
//
// The storage `_title` is the property wrapper a hand-written model would use (`Attribute`,
// `Relationship`), chosen by the property's type through the overloads of `_modelProperty`,
// so schema discovery finds it as it finds a wrapper. The init accessor lets an initializer
// set the property before `super.init` (a subclass does), as SwiftData's expansion does;
// `_$title` has no value until then, so Swift still checks that every initializer sets
// every property that has no default. Every get and set goes through `_modelGet` /
// `_modelSet` with the object and both key paths: the object layer can add to them (the
// change tracking, observation) without changing what the macro writes.

/// The storage `@Model` gives a property: `Attribute`, `Relationship` or `_TransientValue`.
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

/// The getter of a `@Model` property.
@inlinable @inline(__always)
public func _modelGet<Owner: PersistentModel, Storage: _ModelPropertyStorage>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Storage.Value>,
    _ storage: ReferenceWritableKeyPath<Owner, Storage>
) -> Storage.Value {
    Storage._get(owner, property, storage)
}

/// The setter of a `@Model` property.
@inlinable @inline(__always)
public func _modelSet<Owner: PersistentModel, Storage: _ModelPropertyStorage>(
    _ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Storage.Value>,
    _ storage: ReferenceWritableKeyPath<Owner, Storage>, _ newValue: Storage.Value
) {
    Storage._set(owner, property, storage, newValue)
}

/// Set by a `@Model` property's init accessor: the property has been given a value (Swift's
/// definite initialization tracks this empty field). Schema discovery skips it.
public struct _ModelPropertyInitialized: TransientStorage, Sendable {
    @inlinable public init() {}
}

extension Attribute: _ModelPropertyStorage {
    @inlinable @inline(__always)
    public static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Attribute<Value>>) -> Value {
        owner[keyPath: storage].wrappedValue
    }

    @inlinable @inline(__always)
    public static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Attribute<Value>>, _ newValue: Value) {
        owner[keyPath: storage].wrappedValue = newValue
    }

    @inlinable
    public mutating func _initialize(_ value: Value) { self.value = value }
}

extension Relationship: _ModelPropertyStorage {
    public static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Relationship<Value>>) -> Value {
        Relationship[_enclosingInstance: owner, wrapped: property, storage: storage]
    }

    public static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, Relationship<Value>>, _ newValue: Value) {
        Relationship[_enclosingInstance: owner, wrapped: property, storage: storage] = newValue
    }

    /// The objects are linked up (inverse side, insertion) when the object is inserted, as
    /// for an object no container has seen yet.
    public mutating func _initialize(_ value: Value) {
        references = value.relatedObjects.map { .object($0) }
    }
}

/// The storage of a `@Transient` property of a `@Model` class: kept in memory, never
/// persisted. Schema discovery skips it.
public struct _TransientValue<Value>: _ModelPropertyStorage, TransientStorage {
    @usableFromInline var value: Value?

    @inlinable public init() {}

    @inlinable
    public static func _get<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, _TransientValue<Value>>) -> Value {
        if let value = owner[keyPath: storage].value { return value }
        preconditionFailure("\(Owner.self): a @Transient property of type \(Value.self) was read before it was set. Give it a default value.")
    }

    @inlinable
    public static func _set<Owner: PersistentModel>(_ owner: Owner, _ property: ReferenceWritableKeyPath<Owner, Value>,
                                                    _ storage: ReferenceWritableKeyPath<Owner, _TransientValue<Value>>, _ newValue: Value) {
        owner[keyPath: storage].value = newValue
    }

    @inlinable
    public mutating func _initialize(_ value: Value) { self.value = value }
}
