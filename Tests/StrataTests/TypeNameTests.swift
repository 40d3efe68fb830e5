// Stored schemas hold each property's value type by name, and every identifier its model's
// name. Strata reads those names from the type metadata (`_typeName`), where they used to come
// from `String(reflecting:)` and `String(describing:)`, which look up conformances first (the
// largest cost of a fresh process's first open). The two must agree, or a store written before
// would no longer open: this holds them equal for every model of this suite and each of its
// properties' value types, and for the value types Strata stores itself.
import Foundation
import Testing
@testable import Strata
import StrataConformance

@Suite struct TypeNameTests {
    static var models: [any PersistentModel.Type] { [
        Album.self, Animal.self, Author.self, Badge.self, Book.self, Crew.self, DiffItem.self, EChild.self, ECrew.self,
        EItem.self, ELabel.self, EMember.self, EParent.self, EShelf.self, Everything.self, Folder.self, GOwner.self,
        GPet.self, GTag.self, HLine.self, HNote.self, HTag.self, HalfMarked.self, Journey.self, Labelled.self, Leg.self,
        Lesson.self, Letter.self, LongBlobKey.self, LongNote.self, LongPage.self, LongRoute.self, LongSite.self,
        LongVisit.self, Mailbox.self, Member.self, NamedPhoto.self, Person.self, Photo.self, Port.self, PrivatePhoto.self,
        RoundTripExtras.self, Sample.self, Shelved.self, Shrub.self, Student.self, Swatch.self, SyncItem.self, Track.self,
        Trip.self, Unmarked.self, Vault.self, VaultKey.self, Vehicle.self, Voyage.self, Yard.self, YardVisit.self, Zoo.self,
    ] }

    @Test func metadataNamesAreTheNamesStoredSchemasHold() throws {
        var types: [Any.Type] = Array(StoredValues.named.values)
        types += [String?.self, [String].self, [Int]?.self, Set<UUID>.self, [String: Double].self, Date??.self, [[Int]].self,
                  TypeNameTests.self, Outer.Inner.self, Box<Int>.self, Box<Outer.Inner>?.self, Int??.self, [Int?]?.self,
                  [[String]]?.self, [UInt8].self, Float?.self, [Date]?.self, Set<Int>?.self, [Int: String]?.self]
        var checked = 0
        for model in Self.models {
            #expect(TypeNames.plain(model) == String(describing: model))
            #expect(TypeNames.qualified(model) == String(reflecting: model))
            for entity in Schema([model]).entities {
                for attribute in entity.attributes { types.append(attribute.valueType) }
                for relationship in entity.relationships { if let target = entity.destinationType(of: relationship) { types.append(target) } }
            }
        }
        for type in types {
            #expect(TypeNames.qualified(type) == String(reflecting: type), "\(type)")
            #expect(TypeNames.plain(type) == String(describing: type), "\(type)")
            checked += 1
        }
        #expect(checked > 150, "every property of \(Self.models.count) models")
    }

    /// Discovery finds a stored value type's access (and its optional's and array's) by the
    /// type's identity, where it used to cast (`as? StoredValue.Type`, a scan of the process's
    /// conformance records each): the two must give the same access, and other types none.
    @Test func knownValueTypesGetTheAccessACastFinds() throws {
        func check<T: ModelValue>(_: T.Type) throws {
            let forms: [(Any.Type, AttributeAccess)] = [
                (T.self, try ModelValues.access(for: T.self)),
                (T?.self, try ModelValues.access(for: T?.self)),
                ([T].self, try ModelValues.access(for: [T].self)),
            ]
            for (type, viaCast) in forms {
                let known = try #require(ModelValues.knownAccess(type), "\(type)")
                #expect(ObjectIdentifier(known.valueType) == ObjectIdentifier(viaCast.valueType), "\(type)")
                #expect(known.keyOrderIsValueOrder == viaCast.keyOrderIsValueOrder, "\(type)")
                #expect(ModelValues.isKnown(type))
            }
        }
        for type in ModelValues.all { try check(type) }
        #expect(StoredValues.all.count == StoredValues.named.count)
        // The object layer's list of value types is the records layer's.
        #expect(ModelValues.all.map { ObjectIdentifier($0) } == StoredValues.all.map { ObjectIdentifier($0) })
        // `plain`'s switch knows the same types, each as itself, and no other.
        for type in ModelValues.all { #expect(ModelValues.plain(type).map { ObjectIdentifier($0) } == ObjectIdentifier(type), "\(type)") }
        for other: Any.Type in [Int?.self, [String].self, Character.self, Substring.self, TypeNameTests.self, Set<Int>.self] {
            #expect(ModelValues.plain(other) == nil, "\(other)")
        }
        for other: Any.Type in [Box<Int>.self, Outer.Inner.self, [String: Double].self, Set<UUID>.self, [[Int]].self, Date??.self, Trip.self] {
            #expect(ModelValues.knownAccess(other) == nil, "\(other)")
            #expect(!ModelValues.isKnown(other), "\(other)")
        }
    }

    enum Outer { struct Inner: Codable {} }
    struct Box<T>: Codable {}
}
