@_spi(StorageBackend) import StrataRecords
extension Schema {
    /// One stored property of a model class as StrataData's `@Model` lists it in the model's
    /// `schemaMetadata`: its name, its key path and its default value. Same as SwiftData's
    /// `Schema.PropertyMetadata` (which lists persisted properties; Strata's also lists
    /// `@Transient` ones, with no `metadata`).
    ///
    /// Schema discovery reads from it which storage each field has, as the compiler knows it,
    /// where it would otherwise ask the runtime (a scan of every conformance record of the
    /// process for each field: Docs/Benchmarks.md, "Costs that shaped the code").
    public struct PropertyMetadata: @unchecked Sendable {
        /// The property's name.
        public let name: String
        /// The property's key path (`\Trip.name`), made when read: the list is made at each
        /// open, and a model's key paths (the runtime's metadata for each value type's key path
        /// class) were a tenth of a fresh process's first open and fetch (W8, `@Model`).
        public var keypath: AnyKeyPath { makeKeyPath() }
        private let makeKeyPath: () -> AnyKeyPath
        /// The property's initial value as declared (evaluated each time the list is made), if any.
        public let defaultValue: Any?
        /// SwiftData's place for the property's `Schema.Attribute` or `Schema.Relationship`. `@Model`
        /// leaves it nil: Strata reads a property's options from its storage.
        public let metadata: (any SchemaProperty)?
        /// The property's storage type, as the macro's expansion knows it (nil: listed by hand).
        let storage: (any ModelFieldStorage.Type)?
        /// How discovery reads the storage, as the compiler's choice of initializer says: whether
        /// a `@Model` property's value is a relationship is known here without asking the
        /// runtime (a scan of every conformance loaded, three for an optional model).
        let route: ListedStorageRoute

        /// A property listed by hand. Same as SwiftData's `init(name:keypath:defaultValue:metadata:)`.
        public init(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil) {
            self.init(name, keypath, defaultValue, metadata, storage: nil, route: .ask)
        }

        private init(_ name: String, _ keypath: @escaping () -> AnyKeyPath, _ defaultValue: Any?, _ metadata: (any SchemaProperty)?, storage: (any ModelFieldStorage.Type)?,
                     route: ListedStorageRoute) {
            self.name = name
            self.makeKeyPath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
            self.storage = storage
            self.route = route
        }

        /// `@Model`'s: the storage's type comes from `_storage`, a function the expansion
        /// writes (`{ (model: Trip) in model._name }`) and nobody calls.
        public init<Root, Value>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil,
                                 _storage: (Root) -> Strata.Attribute<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: Strata.Attribute<Value>.self, route: .ask)
        }

        /// `@Model`'s, for a property without attribute options or `@Relationship`, whose value
        /// is not a model, an optional model or an array of models: an attribute.
        public init<Root, Value>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil,
                                 _storage: (Root) -> _ModelStorage<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: _ModelStorage<Value>.self, route: .attribute(_ModelStorage<Value>.self))
        }

        /// `@Model`'s, for a relationship declared without `@Relationship(...)` (the compiler
        /// picks this one for a model, an optional model or an array of models).
        public init<Root, Value: RelationshipValue>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil,
                                                    metadata: (any SchemaProperty)? = nil, _storage: (Root) -> _ModelStorage<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: _ModelStorage<Value>.self, route: .relationship(_ModelStorage<Value>.self))
        }

        /// `@Model`'s, for a `@Relationship(...)` property whose value is not a relationship's
        /// (discovery says so, by name).
        public init<Root, Value>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil,
                                 _storage: (Root) -> _ModelRelationship<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: _ModelRelationship<Value>.self, route: .ask)
        }

        /// `@Model`'s, for a `@Relationship(...)` property.
        public init<Root, Value: RelationshipValue>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil,
                                                    metadata: (any SchemaProperty)? = nil, _storage: (Root) -> _ModelRelationship<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: _ModelRelationship<Value>.self,
                      route: .relationship(_ModelRelationship<Value>.self))
        }

        /// `@Model`'s, for a `@Transient` property.
        public init<Root, Value>(name: String, keypath: @autoclosure @escaping () -> AnyKeyPath, defaultValue: Any? = nil, metadata: (any SchemaProperty)? = nil,
                                 _storage: (Root) -> _TransientValue<Value>) {
            self.init(name, keypath, defaultValue, metadata, storage: _TransientValue<Value>.self, route: .ask)
        }
    }
}

/// How schema discovery reads a storage `schemaMetadata` lists.
enum ListedStorageRoute {
    /// The storage says what it is (`ModelFieldStorage.discovered`).
    case ask
    /// A `@Model` storage of a value that is not a relationship's.
    case attribute(any ModelAttributeStorage.Type)
    /// A `@Model` storage of a relationship.
    case relationship(any ModelRelationshipStorage.Type)
}
