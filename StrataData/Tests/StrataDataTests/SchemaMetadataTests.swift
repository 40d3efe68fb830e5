// `@Model` writes `schemaMetadata`, SwiftData's list of a model's stored properties, and
// discovery takes each field's storage type from it instead of asking the runtime. In debug
// builds discovery holds the list to what reflection finds (`Entity.checkSchemaMetadata`), so
// every model these suites open is checked; these tests check the list itself, and that a list
// that disagrees is caught.
import Foundation
import Testing
import StrataData
@testable import Strata

@Suite struct SchemaMetadataTests {
    /// Every model of these suites that has no superclass (a subclass inherits its superclass's list).
    static var models: [any PersistentModel.Type] { [
        Trip.self, Person.self, Author.self, Book.self, Student.self, Lesson.self, Folder.self, Voyage.self, Port.self,
        Vault.self, VaultKey.self, Album.self, Track.self, Crew.self, Member.self, Pet.self, Odd.self, Vehicle.self,
    ] }

    @Test func theListHasEveryStoredPropertyWithItsKeyPathAndType() throws {
        for model in Self.models {
            let entity = try #require(Schema([model]).entities.first { $0.modelType == model })
            let listed = model.schemaMetadata
            let persisted = entity.properties.map(\.name)
            // Field order, persisted ones among the transient ones.
            #expect(listed.map(\.name).filter(persisted.contains) == persisted, "\(model)")
            for property in listed {
                #expect(property.storage != nil, "\(model).\(property.name): the macro names its storage")
                guard persisted.contains(property.name) else { continue }
                #expect(entity.propertyName(for: property.keypath) == property.name, "\(model).\(property.name)")
                if let attribute = entity.attributesByName[property.name] {
                    #expect(type(of: property.keypath).valueType == attribute.valueType, "\(model).\(property.name)")
                }
            }
        }
        let trip = Dictionary(uniqueKeysWithValues: Trip.schemaMetadata.map { ($0.name, $0) })
        #expect(trip["rating"]?.defaultValue as? Int == 0)
        #expect(trip["tags"]?.defaultValue as? [String] == [])
        #expect(trip["status"]?.defaultValue as? Status == .planned)
        #expect(trip["isExpanded"]?.defaultValue as? Bool == false, "a @Transient property is listed too")
        #expect(trip["name"].map { $0.defaultValue == nil } == true)
    }

    /// Discovery through the list finds the same entity as discovery by reflection alone.
    @Test func discoveryWithTheListFindsWhatReflectionFinds() throws {
        func describe(_ entity: Strata.Entity) -> [String] {
            entity.properties.map { "\($0.name) \($0.index) \($0.typeName) \($0.declaration.options) \($0 is RelationshipProperty)" }
                + ["unique \(entity.uniqueGroups)", "indexes \(entity.indexGroups)", "transients \(entity.observedSlotCount)"]
        }
        for model in Self.models + [Car.self] {
            func both<T: PersistentModel>(_ type: T.Type) throws -> ([String], [String]) {
                (describe(try Strata.Entity(T.self)), describe(try Strata.Entity(T.self, usingSchemaMetadata: false)))
            }
            let (withList, withoutList) = try both(model)
            #expect(withList == withoutList, "\(model)")
        }
    }

    /// Discovery takes `@Model` fields' names and offsets from the field descriptors, without
    /// their types (`FieldReflection.untypedFields`): they are the runtime's, and the list
    /// accounts for every one (a listed property's storage or its flag), so none of these
    /// models takes the typed path. (A subclass, which inherits its superclass's list, does.)
    @Test func theFieldDescriptorsGiveEveryListedFieldWithTheRuntimesOffset() throws {
        for model in Self.models + [Car.self, Bike.self] {
            let untyped = try #require(FieldReflection.untypedFields(of: model), "\(model)")
            #expect(untyped.map { "\($0.name)@\($0.offset)" } == FieldReflection.fields(of: model).map { "\($0.name)@\($0.offset)" }, "\(model)")
            guard _getSuperclass(model) == nil else { continue }
            let listed = Set(model.schemaMetadata.map(\.name))
            for field in untyped {
                let property = field.name.hasPrefix("_$") ? field.name.dropFirst(2) : field.name.dropFirst()
                #expect(field.name.hasPrefix("_") && listed.contains(String(property)), "\(model).\(field.name)")
            }
        }
    }

    #if DEBUG
    /// A list that disagrees with the class is a schema error, in debug builds.
    @Test func aListThatDisagreesIsCaught() {
        #expect(throws: StrataError.self) { try Strata.Entity(Mislisted.self) }
        #expect(throws: StrataError.self) { try Strata.Entity(Unlisted.self) }
    }
    #endif
}

/// A list whose key path reads another property than the one it names.
final class Mislisted: Strata.PersistentModel {
    @Strata.Attribute var title: String = ""
    @Strata.Attribute var count: Int = 0
    init() {}
    static var schemaMetadata: [Strata.Schema.PropertyMetadata] { [
        Strata.Schema.PropertyMetadata(name: "title", keypath: \Mislisted.count, _storage: { (m: Mislisted) in m._title }),
        Strata.Schema.PropertyMetadata(name: "count", keypath: \Mislisted.count, _storage: { (m: Mislisted) in m._count }),
    ] }
}

/// A list that leaves out a stored property.
final class Unlisted: Strata.PersistentModel {
    @Strata.Attribute var title: String = ""
    @Strata.Attribute var count: Int = 0
    init() {}
    static var schemaMetadata: [Strata.Schema.PropertyMetadata] { [
        Strata.Schema.PropertyMetadata(name: "title", keypath: \Unlisted.title, _storage: { (m: Unlisted) in m._title }),
    ] }
}
