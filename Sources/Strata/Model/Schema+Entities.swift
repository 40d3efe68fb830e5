import Foundation
@_spi(StorageBackend) import StrataRecords

// The schema's models as SwiftData describes them: `Schema.entities`, `Schema.Entity`,
// `Schema.Attribute`, `Schema.Relationship`. A read-only description, made from what schema
// discovery found in the model classes.

extension Schema {
    /// The models of the schema, including the models their relationships reach (as a
    /// container adds them). Same as SwiftData's `Schema.entities`. A model that cannot be
    /// persisted as declared is left out here; making a container reports why.
    public var entities: [Entity] {
        guard let discovered = try? entities() else {
            return types.compactMap { try? EntityRegistry.shared.discover($0) }.map { Entity($0, in: self) }
        }
        return discovered.map { Entity($0, in: self) }
    }

    /// The entities by name. Same as SwiftData's `Schema.entitiesByName`.
    public var entitiesByName: [String: Entity] {
        Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entity of a model class, if the schema has it. Same as SwiftData's `entity(for:)`.
    public func entity<T: PersistentModel>(for type: T.Type) -> Entity? {
        entities.first { $0.modelType == type }
    }

    /// One model of a schema. Same as SwiftData's `Schema.Entity`.
    public final class Entity: Hashable, CustomStringConvertible, @unchecked Sendable {
        /// The model's name (its class name).
        public let name: String
        /// The persisted attributes, in declaration order.
        public let attributes: [Attribute]
        /// The relationships, in declaration order.
        public let relationships: [Relationship]
        /// Every persisted property, attributes and relationships, in declaration order.
        public let properties: [any SchemaProperty]
        /// The unique constraints (each single `.unique` attribute and each `#Unique` group),
        /// by property names. Same as SwiftData's `uniquenessConstraints`.
        public let uniquenessConstraints: [[String]]
        /// The secondary indexes (`#Index`), by property names.
        public let indices: [[String]]
        /// The name of the model this one inherits from, if it is a subclass of another model.
        public let superentityName: String?
        /// The model class.
        public let modelType: any PersistentModel.Type

        init(_ entity: Strata.Entity, in schema: Schema) {
            name = entity.name
            modelType = entity.type
            var attributes: [Attribute] = []
            var relationships: [Relationship] = []
            var properties: [any SchemaProperty] = []
            for property in entity.properties {
                if let relationship = property as? RelationshipProperty {
                    let made = Relationship(relationship, owner: entity)
                    relationships.append(made)
                    properties.append(made)
                } else {
                    let made = Attribute(property)
                    attributes.append(made)
                    properties.append(made)
                }
            }
            self.attributes = attributes
            self.relationships = relationships
            self.properties = properties
            uniquenessConstraints = entity.uniqueGroups.map { $0.map { entity.properties[$0].name } }
            indices = entity.indexGroups.map { $0.map { entity.properties[$0].name } }
            var superclass: AnyClass? = _getSuperclass(entity.type)
            var found: String? = nil
            while let c = superclass, found == nil {
                if let model = c as? any PersistentModel.Type, schema.types.contains(where: { $0 == model }) {
                    found = TypeNames.plain(model)
                }
                superclass = _getSuperclass(c)
            }
            superentityName = found
        }

        /// The attributes by name. Same as SwiftData's `attributesByName`.
        public var attributesByName: [String: Attribute] { Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) }) }
        /// The relationships by name. Same as SwiftData's `relationshipsByName`.
        public var relationshipsByName: [String: Relationship] { Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0) }) }

        /// Strata-only: the name of the persisted property a key path of the model reads (nil
        /// for another key path), for a store that translates predicates and sorts itself.
        public func propertyName(for keyPath: AnyKeyPath) -> String? {
            EntityRegistry.shared.entity(for: modelType)?.property(for: keyPath)?.name
        }

        /// Strata-only: the model of a relationship's destination.
        public func destinationType(of relationship: Relationship) -> (any PersistentModel.Type)? {
            (EntityRegistry.shared.entity(for: modelType)?.properties.first { $0.name == relationship.name } as? RelationshipProperty)?.targetType
        }

        /// Strata-only: the value each attribute has in a new object of the model (its
        /// `init()`), as a snapshot holds it; an attribute `init()` leaves unset is absent. For a
        /// store that adds a column to rows that exist (a lightweight migration), as the engine
        /// fills a property added to stored records.
        public func defaultValues() throws -> [String: SnapshotValue] {
            guard let entity = EntityRegistry.shared.entity(for: modelType) else { return [:] }
            let instance = entity.newInstance()
            var values: [String: SnapshotValue] = [:]
            for case let attribute as AttributeProperty in entity.properties where !attribute.isExternal && attribute.hasValue(instance) {
                var bytes: [UInt8] = []
                try attribute.encode(instance, into: &bytes, .plain)
                values[attribute.name] = try bytes.withUnsafeBytes { try attribute.access.snapshotOfField($0) }
            }
            return values
        }

        public static func == (a: Entity, b: Entity) -> Bool { a.name == b.name && a.modelType == b.modelType }
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
        public var description: String { "Entity \(name): \(properties.map(\.name).joined(separator: ", "))" }
    }

    /// A persisted attribute of a model. Same as SwiftData's `Schema.Attribute`.
    public final class Attribute: SchemaProperty, Hashable, @unchecked Sendable {
        public let name: String
        /// The name the property had before it was renamed (`originalName:`), or its name.
        public let originalName: String
        /// The declared options (`.unique`, `.externalStorage`, ...).
        public let options: [AttributeOption]
        /// The property's declared type.
        public let valueType: Any.Type
        /// True for an `Optional` type.
        public let isOptional: Bool
        public var isUnique: Bool { options.contains(.unique) }

        init(_ property: PersistedProperty) {
            name = property.name
            originalName = property.declaration.originalName ?? property.name
            // `.transformable(by:)` carries its transformer, so it is not among `all`.
            options = AttributeOption.all.filter { property.declaration.has($0) }
                + (property.declaration.transformer.map { [AttributeOption(transformer: $0)] } ?? [])
            valueType = property.valueType
            isOptional = property.valueType is any OptionalProtocol.Type
        }

        public static func == (a: Attribute, b: Attribute) -> Bool { a.name == b.name && a.valueType == b.valueType && a.options == b.options }
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    /// A relationship of a model. Same as SwiftData's `Schema.Relationship`.
    public final class Relationship: SchemaProperty, Hashable, @unchecked Sendable {
        /// Same as SwiftData's `Schema.Relationship.DeleteRule`.
        public typealias DeleteRule = Strata.DeleteRule
        public let name: String
        /// The name the relationship had before it was renamed (`originalName:`), or its name.
        public let originalName: String
        /// The related model's name.
        public let destination: String
        /// The relationship of the related model that points back, if there is one.
        public let inverseName: String?
        public let deleteRule: DeleteRule
        /// True for a to-one relationship (`Model?`), false for a to-many one.
        public let isToOneRelationship: Bool
        /// The declared bounds of a to-many relationship (0: none).
        public let minimumModelCount: Int?
        public let maximumModelCount: Int?

        init(_ relationship: RelationshipProperty, owner: Strata.Entity) {
            name = relationship.name
            originalName = relationship.relationship.originalName ?? relationship.name
            destination = TypeNames.plain(relationship.targetType)
            inverseName = relationship.inverse(in: owner)?.name
            deleteRule = relationship.relationship.deleteRule
            isToOneRelationship = !relationship.isToMany
            minimumModelCount = relationship.relationship.minimumModelCount
            maximumModelCount = relationship.relationship.maximumModelCount
        }

        public static func == (a: Relationship, b: Relationship) -> Bool { a.name == b.name && a.destination == b.destination }
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }
}

/// A persisted property of a model as a schema describes it. Same as SwiftData's `SchemaProperty`.
public protocol SchemaProperty: AnyObject, Sendable {
    var name: String { get }
    var originalName: String { get }
}

extension AttributeOption {
    /// Every option, in the order they are declared.
    static let all: [AttributeOption] = [.unique, .externalStorage, .ephemeral, .spotlight, .allowsCloudEncryption, .preserveValueOnDeletion]
}

/// Lets a generic check whether a type is an `Optional`.
protocol OptionalProtocol {}
extension Optional: OptionalProtocol {}
