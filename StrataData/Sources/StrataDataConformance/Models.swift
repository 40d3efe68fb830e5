// The models of the conformance scenarios as SwiftData writes them (`@Model`, `#Index`,
// `#Unique`), the same classes with the same properties as the root's macro-free
// Sources/StrataConformance/Models.swift: this module compiles the root's scenario files
// (symbolic links beside this file, ModelValues.swift among them) against them, so that every scenario runs on models the
// macros wrote. Keep the two files in step.
//
// A single-attribute unique constraint is always on a property named `code`, so that a store that
// resolves one unique property by name (the root tests' counting store) resolves all of them.
import Foundation
import StrataData
import Strata

/// The root tests' `Trip`: attributes of many kinds, a unique `code`, two indexes, no relationship.
@Model public final class ConfTrip {
    @Attribute(.unique) public var code: UUID
    public var name: String
    public var startDate: Date
    public var budget: Double? = nil
    public var tags: [String] = []
    public var status: ConfStatus = .planned
    public var address: ConfAddress? = nil
    public var rating: Int = 0
    @Transient public var isExpanded = false

    public init(name: String, startDate: Date, budget: Double? = nil, rating: Int = 0) {
        code = UUID()
        self.name = name
        self.startDate = startDate
        self.budget = budget
        self.rating = rating
    }

    #Index<ConfTrip>([\.startDate], [\.rating])
}

/// Every value type API.md lists, at its plainest.
@Model public final class ConfEverything {
    public var label: String = ""
    public var bool: Bool = false
    public var int: Int = 0
    public var int8: Int8 = 0
    public var int16: Int16 = 0
    public var int32: Int32 = 0
    public var int64: Int64 = 0
    public var uint: UInt = 0
    public var uint8: UInt8 = 0
    public var uint16: UInt16 = 0
    public var uint32: UInt32 = 0
    public var uint64: UInt64 = 0
    public var float: Float = 0
    public var double: Double = 0
    public var decimal: Decimal = 0
    public var string: String = ""
    public var date: Date = Date(timeIntervalSince1970: 0)
    public var data: Data = Data()
    public var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    public var url: URL = URL(string: "https://example.com")!
    public var optionalString: String? = nil
    public var optionalInt: Int? = nil
    public var strings: [String] = []
    public var intSet: Set<Int> = []
    public var dictionary: [String: Double] = [:]
    public var status: ConfStatus = .planned
    public var address: ConfAddress = ConfAddress(street: "", city: "")
    public var addresses: [ConfAddress] = []
    public init(_ label: String) { self.label = label }
}

/// The optional, nested and external forms `ConfEverything` lacks.
@Model public final class ConfExtras {
    public var label: String = ""
    public var optionalDate: Date? = nil
    public var optionalUUID: UUID? = nil
    public var optionalURL: URL? = nil
    public var optionalData: Data? = nil
    public var optionalDecimal: Decimal? = nil
    public var optionalDouble: Double? = nil
    public var optionalFloat: Float? = nil
    public var optionalBool: Bool? = nil
    public var optionalUInt8: UInt8? = nil
    public var optionalInt64: Int64? = nil
    public var optionalUInt32: UInt32? = nil
    public var optionalAddress: ConfAddress? = nil
    public var optionalStatus: ConfStatus? = nil
    public var shape: ConfShape = .none
    public var priority: ConfPriority = .low
    public var nested: ConfNested = ConfNested(name: "", values: [], when: nil, address: nil)
    public var dates: [Date] = []
    public var uuids: Set<UUID> = []
    public var stringSet: Set<String> = []
    public var nestedDictionary: [String: [Int]] = [:]
    public var intKeyed: [Int: String] = [:]
    public var optionalInts: [Int?] = []
    public var matrix: [[Double]] = []
    public var optionalStrings: [String]? = nil
    @Attribute(.externalStorage) public var blob: Data = Data()
    @Attribute(.externalStorage) public var optionalBlob: Data? = nil
    public init(_ label: String) { self.label = label }
}

/// A compound unique constraint (SwiftData's `#Unique<Person>([\.first, \.last])`).
@Model public final class ConfPerson {
    public var first: String = ""
    public var last: String = ""
    public var email: String = ""
    public init(_ first: String, _ last: String, _ email: String) { self.first = first; self.last = last; self.email = email }
    #Unique<ConfPerson>([\.first, \.last])
}

/// External storage with a title to find it by.
@Model public final class ConfPhoto {
    public var title: String = ""
    @Attribute(.externalStorage) public var image: Data? = nil
    public init(_ title: String, _ image: Data?) { self.title = title; self.image = image }
}

// MARK: Relationships

/// One-to-many, the inverse found without `inverse:` (nullify on both sides).
@Model public final class ConfAuthor {
    public var name: String = ""
    @Relationship public var books: [ConfBook] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfBook {
    public var title: String = ""
    public var pages: Int = 0
    @Relationship public var author: ConfAuthor? = nil
    public init(_ title: String, pages: Int = 100) { self.title = title; self.pages = pages }
}

/// Relationships without an inverse: a to-one to the same model (which no other relationship
/// claims) and a to-many to a model that has no relationship back.
@Model public final class ConfFan {
    public var name: String = ""
    @Relationship public var mentor: ConfFan? = nil
    @Relationship public var favorites: [ConfSong] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfSong {
    public var title: String = ""
    public init(_ title: String) { self.title = title }
}

/// Many-to-many with an explicit inverse.
@Model public final class ConfStudent {
    public var name: String = ""
    @Relationship public var lessons: [ConfLesson] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfLesson {
    public var topic: String = ""
    @Relationship(inverse: \ConfStudent.lessons) public var students: [ConfStudent] = []
    public init(_ topic: String) { self.topic = topic }
}

/// Self-referential, cascading.
@Model public final class ConfFolder {
    public var name: String = ""
    @Relationship(deleteRule: .cascade) public var children: [ConfFolder] = []
    @Relationship public var parent: ConfFolder? = nil
    public init(_ name: String) { self.name = name }
}

/// Cascade to ports; ports are found through their voyage and by `isBooked`.
@Model public final class ConfVoyage {
    public var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfPort.voyage) public var ports: [ConfPort] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfPort {
    public var city: String = ""
    public var isBooked: Bool = false
    @Relationship public var voyage: ConfVoyage? = nil
    public init(_ city: String, isBooked: Bool = false) { self.city = city; self.isBooked = isBooked }
}

/// `.deny`: a vault with keys cannot be deleted.
@Model public final class ConfVault {
    public var label: String = ""
    @Relationship(deleteRule: .deny, inverse: \ConfVaultKey.vault) public var keys: [ConfVaultKey] = []
    public init(_ label: String) { self.label = label }
}

@Model public final class ConfVaultKey {
    public var number: String = ""
    @Relationship public var vault: ConfVault? = nil
    public init(_ number: String) { self.number = number }
}

/// A unique model with a cascading to-many: an upsert takes over the stored object's relationships.
@Model public final class ConfAlbum {
    @Attribute(.unique) public var code: String = ""
    public var title: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfTrack.album) public var tracks: [ConfTrack] = []
    public init(_ code: String, title: String = "") { self.code = code; self.title = title }
}

@Model public final class ConfTrack {
    public var title: String = ""
    @Relationship public var album: ConfAlbum? = nil
    public init(_ title: String) { self.title = title }
}

/// Ordered to-many (cascade), and a many-to-many of items and labels.
@Model public final class ConfShelf {
    public var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfItem.shelf) public var items: [ConfItem] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfItem {
    public var name: String = ""
    @Relationship public var shelf: ConfShelf? = nil
    @Relationship public var labels: [ConfLabel] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfLabel {
    public var text: String = ""
    @Relationship(inverse: \ConfItem.labels) public var items: [ConfItem] = []
    public init(_ text: String) { self.text = text }
}

/// `.noAction`: deleting the parent leaves the children as they are.
@Model public final class ConfParent {
    public var name: String = ""
    @Relationship(deleteRule: .noAction, inverse: \ConfChild.parent) public var children: [ConfChild] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfChild {
    public var name: String = ""
    @Relationship public var parent: ConfParent? = nil
    public init(_ name: String) { self.name = name }
}

/// Minimum and maximum counts.
@Model public final class ConfCrew {
    public var name: String = ""
    @Relationship(minimumModelCount: 1, maximumModelCount: 3, inverse: \ConfMember.crew) public var members: [ConfMember] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfMember {
    public var name: String = ""
    @Relationship public var crew: ConfCrew? = nil
    public init(_ name: String) { self.name = name }
}

/// Apple's Backyard Birds shapes: two to-manys naming one to-one as their inverse, and a
/// cascading to-many an object is put in both through its to-one and by appending.
@Model public final class ConfYard {
    public var name: String = ""
    @Relationship(inverse: \ConfShrub.yard) public var leadingShrubs: [ConfShrub] = []
    @Relationship(inverse: \ConfShrub.yard) public var trailingShrubs: [ConfShrub] = []
    @Relationship(deleteRule: .cascade, inverse: \ConfVisit.yard) public var visits: [ConfVisit] = []
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfShrub {
    public var name: String = ""
    @Relationship public var yard: ConfYard? = nil
    public init(_ name: String) { self.name = name }
}

@Model public final class ConfVisit {
    public var number: Int = 0
    @Relationship public var yard: ConfYard? = nil
    public init(_ number: Int) { self.number = number }
}

// MARK: History and observers

/// The root tests' `HNote`: a unique `code`, a value kept in the tombstone of a deletion, a
/// cascading to-many.
@Model public final class ConfNote {
    @Attribute(.unique) public var code: Int = 0
    @Attribute(.preserveValueOnDeletion) public var title: String = ""
    public var body: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfLine.note) public var lines: [ConfLine] = []
    public init(_ code: Int, _ title: String) { self.code = code; self.title = title }
}

@Model public final class ConfLine {
    @Attribute(.preserveValueOnDeletion) public var text: String = ""
    @Relationship public var note: ConfNote? = nil
    public init(_ text: String) { self.text = text }
}

/// The root tests' `HTag`: no relationship, a unique `code` (its name), nothing kept on deletion.
@Model public final class ConfTag {
    @Attribute(.unique) public var code: String = ""
    public var uses: Int = 0
    public var color: String = ""
    public init(_ code: String, uses: Int, color: String) { self.code = code; self.uses = uses; self.color = color }
}

/// The root tests' `Shelved`: sections by `genre`, or by the optional `series`.
@Model public final class ConfShelved {
    public var title: String = ""
    public var genre: String = ""
    public var series: String? = nil
    public init(_ title: String, _ genre: String, series: String? = nil) { self.title = title; self.genre = genre; self.series = series }
}

/// A unique attribute that may be nil: nil is a value like any other, on every kind of store.
@Model public final class ConfBadge {
    @Attribute(.unique) public var code: String? = nil
    public var holder: String = ""
    public init(_ code: String?, _ holder: String) { self.code = code; self.holder = holder }
}

/// The root tests' `SyncItem`, for a model actor's imports and upserts.
@Model public final class ConfSyncItem {
    @Attribute(.unique) public var code: Int = 0
    public var value: String = ""
    public init(_ code: Int, _ value: String) { self.code = code; self.value = value }
}

// MARK: Inheritance

/// A base class with two subclasses, each with a property of its own.
@Model public class ConfVehicle {
    public var name: String = ""
    public var wheels: Int = 0
    public init(name: String, wheels: Int) { self.name = name; self.wheels = wheels }
}

@Model public final class ConfCar: ConfVehicle {
    public var seats: Int = 0
    public init(name: String, seats: Int) {
        super.init(name: name, wheels: 4)
        self.seats = seats          // a subclass sets its own properties after super.init
    }
}

@Model public final class ConfBike: ConfVehicle {
    public var isElectric: Bool = false
    public init(name: String, isElectric: Bool) {
        super.init(name: name, wheels: 2)
        self.isElectric = isElectric
    }
}

// MARK: Ephemeral and transformable attributes

/// Ephemeral attributes: one with a declaration default, one set in `init()`.
@Model public final class ConfDraft {
    public var title: String = ""
    @Attribute(.ephemeral) public var cursor: Int = 0
    @Attribute(.ephemeral) public var selection: String
    public init() { selection = "none" }
    public init(title: String) { self.title = title; selection = "new" }
}

@Model public final class ConfSwatch {
    public var name: String = ""
    @Attribute(.transformable(by: ConfColorTransformer.self)) public var color: ConfColor = ConfColor([0, 0, 0])
    @Attribute(.transformable(by: ConfColorTransformer.self)) public var accent: ConfColor? = nil
    @Attribute(.transformable(by: "ConfUppercaseTransformer")) public var label: String = ""
    public init(name: String, color: ConfColor, accent: ConfColor?, label: String) {
        self.name = name; self.color = color; self.accent = accent; self.label = label
    }
}

/// `@Model` refuses this at compile time (`_modelGet` is unavailable for a type that is not
/// Codable), so it keeps the macro-free spelling, for the scenario that opens a container with it.
public final class ConfUnstorable: PersistentModel {
    @Strata.Attribute public var name: String = ""
    @Strata.Attribute public var thing: ConfNotCodable = ConfNotCodable()
    public init() {}
}

/// A transformer name nobody registered: not a valid schema.
@Model public final class ConfLabelled {
    @Attribute(.transformable(by: "ConfNoSuchTransformer")) public var label: String = ""
}
