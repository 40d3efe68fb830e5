@_spi(StorageBackend) import StrataRecords
/// What schema discovery finds in one stored field of a model class. Every storage type a
/// model's field may have (`Attribute`, `Relationship`, `Transient` and the `@Model` macro's
/// storages) says what it is through this one protocol.
///
/// One protocol, so that discovery asks the runtime one question per field. A cast to a
/// protocol (`type as? P.Type`) is answered, the first time in a process for each type, by a scan
/// of every protocol conformance record of every loaded library, whatever the answer; asking
/// four protocols in turn (transient? relationship? attribute?) cost four scans per field, most
/// of a fresh process's first `ModelContainer` (Docs/Benchmarks.md, W8).
protocol ModelFieldStorage {
    /// What the field of this type at `offset` in `sample` (a model's `init()` instance) is:
    /// `index` is the number the field gets if it is persisted.
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField
}

/// A model class's stored field, as schema discovery sees it.
enum DiscoveredField {
    /// A persisted attribute or relationship.
    case persisted(PersistedProperty)
    /// Observed, never persisted (`@Transient`, `.ephemeral`): where its link to the backing is.
    case observed(StorageLink)
    /// Neither persisted nor observed (the `@Model` macro's initialization flags).
    case ignored
}

extension ModelFieldStorage {
    /// The storage of this type at `offset` in `object`.
    static func read<R>(in object: AnyObject, at offset: Int, _ body: (Self) -> R) -> R {
        FieldReflection.read(Self.self, in: object, at: offset, body)
    }
}

extension Attribute: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        let declaration = read(in: sample, at: offset) { $0.declared.declaration }
        // `.ephemeral`: observed like a transient, never written; a fetched object keeps its default.
        if declaration.has(.ephemeral) { return .observed(storageLink) }
        return .persisted(try makeProperty(name: name, offset: offset, index: index, declaration: declaration))
    }
}

extension Relationship: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        .persisted(makeRelationship(name: name, offset: offset, index: index, declaration: read(in: sample, at: offset) { $0.declaration }))
    }
}

extension Transient: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        .observed(StorageLink(Transient<Value>.self, link: \.link, slot: \.slot, keeper: nil))
    }
}

extension _TransientValue: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        .observed(StorageLink(_TransientValue<Value>.self, link: \.link, slot: \.slot, keeper: nil))
    }
}

extension _ModelPropertyInitialized: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField { .ignored }
}

extension _ModelStorage: ModelFieldStorage {
    /// An attribute or a relationship, by its value type: a stored value type is an attribute
    /// without asking the runtime; another type is a relationship if it is a model (or an
    /// optional or array of one).
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        if !ModelValues.isKnown(Value.self), let relationship = Self.self as? any ModelRelationshipStorage.Type {
            return .persisted(relationship.makeRelationship(name: name, offset: offset, index: index, in: sample))
        }
        return try discoveredAttribute(name: name, offset: offset, index: index, in: sample)
    }
}

extension _ModelStorage: ModelAttributeStorage {
    static func discoveredAttribute(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        let declaration = read(in: sample, at: offset) { $0.attribute.declared.declaration }
        if declaration.has(.ephemeral) {
            return .observed(attributeLinks.moved(by: attributeOffset).withoutKeeper)
        }
        return .persisted(try Attribute<Value>.makeProperty(name: name, offset: offset + attributeOffset, index: index, declaration: declaration))
    }
}

extension _ModelRelationship: ModelFieldStorage {
    static func discovered(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField {
        guard let relationship = Self.self as? any ModelRelationshipStorage.Type else {
            throw SchemaProblem("\(name) is a @Relationship of \(Value.self), which is not a model, an optional model or an array of models")
        }
        return .persisted(relationship.makeRelationship(name: name, offset: offset, index: index, in: sample))
    }
}

/// The `@Model` macro's storage of a property that `schemaMetadata` says is not a relationship
/// (its value type is not a `RelationshipValue`, as the compiler chose the list's initializer):
/// an attribute, found without asking the runtime whether the storage holds a relationship.
protocol ModelAttributeStorage {
    static func discoveredAttribute(name: String, offset: Int, index: Int, in sample: AnyObject) throws -> DiscoveredField
}

/// The `@Model` macro's storages that hold a relationship when their value is a model (or an
/// optional or array of one): a conditional conformance, asked only of a value type that is not
/// a stored one.
protocol ModelRelationshipStorage {
    static func makeRelationship(name: String, offset: Int, index: Int, in sample: AnyObject) -> PersistedProperty
}
