// The models of the conformance scenarios, in the macro-free spelling (`import Strata` only),
// named `Conf…` so that they never collide with a test target's models. Each scenario puts the
// ones it uses in its own store (`ConformanceStore.fresh`).
//
// Their value types and transformers are in ModelValues.swift, which StrataData shares.
//
// A single-attribute unique constraint is always on a property named `code`, so that a store that
// resolves one unique property by name (the root tests' counting store) resolves all of them.
import Foundation
import Strata

/// The root tests' `Trip`: attributes of many kinds, a unique `code`, two indexes, no relationship.
public final class ConfTrip: PersistentModel {
    @Attribute(.unique) public var code: UUID
    @Attribute public var name: String
    @Attribute public var startDate: Date
    @Attribute public var budget: Double? = nil
    @Attribute public var tags: [String] = []
    @Attribute public var status: ConfStatus = .planned
    @Attribute public var address: ConfAddress? = nil
    @Attribute public var rating: Int = 0
    @Transient public var isExpanded = false

    public init() {}
    public init(name: String, startDate: Date, budget: Double? = nil, rating: Int = 0) {
        code = UUID()
        self.name = name
        self.startDate = startDate
        self.budget = budget
        self.rating = rating
    }

    public static var indexes: [[PartialKeyPath<ConfTrip>]] { [[\.startDate], [\.rating]] }
}

/// Every value type API.md lists, at its plainest.
public final class ConfEverything: PersistentModel {
    @Attribute public var label: String = ""
    @Attribute public var bool: Bool = false
    @Attribute public var int: Int = 0
    @Attribute public var int8: Int8 = 0
    @Attribute public var int16: Int16 = 0
    @Attribute public var int32: Int32 = 0
    @Attribute public var int64: Int64 = 0
    @Attribute public var uint: UInt = 0
    @Attribute public var uint8: UInt8 = 0
    @Attribute public var uint16: UInt16 = 0
    @Attribute public var uint32: UInt32 = 0
    @Attribute public var uint64: UInt64 = 0
    @Attribute public var float: Float = 0
    @Attribute public var double: Double = 0
    @Attribute public var decimal: Decimal = 0
    @Attribute public var string: String = ""
    @Attribute public var date: Date = Date(timeIntervalSince1970: 0)
    @Attribute public var data: Data = Data()
    @Attribute public var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute public var url: URL = URL(string: "https://example.com")!
    @Attribute public var optionalString: String? = nil
    @Attribute public var optionalInt: Int? = nil
    @Attribute public var strings: [String] = []
    @Attribute public var intSet: Set<Int> = []
    @Attribute public var dictionary: [String: Double] = [:]
    @Attribute public var status: ConfStatus = .planned
    @Attribute public var address: ConfAddress = ConfAddress(street: "", city: "")
    @Attribute public var addresses: [ConfAddress] = []
    public init() {}
    public init(_ label: String) { self.label = label }
}

/// The optional, nested and external forms `ConfEverything` lacks.
public final class ConfExtras: PersistentModel {
    @Attribute public var label: String = ""
    @Attribute public var optionalDate: Date? = nil
    @Attribute public var optionalUUID: UUID? = nil
    @Attribute public var optionalURL: URL? = nil
    @Attribute public var optionalData: Data? = nil
    @Attribute public var optionalDecimal: Decimal? = nil
    @Attribute public var optionalDouble: Double? = nil
    @Attribute public var optionalFloat: Float? = nil
    @Attribute public var optionalBool: Bool? = nil
    @Attribute public var optionalUInt8: UInt8? = nil
    @Attribute public var optionalInt64: Int64? = nil
    @Attribute public var optionalUInt32: UInt32? = nil
    @Attribute public var optionalAddress: ConfAddress? = nil
    @Attribute public var optionalStatus: ConfStatus? = nil
    @Attribute public var shape: ConfShape = .none
    @Attribute public var priority: ConfPriority = .low
    @Attribute public var nested: ConfNested = ConfNested(name: "", values: [], when: nil, address: nil)
    @Attribute public var dates: [Date] = []
    @Attribute public var uuids: Set<UUID> = []
    @Attribute public var stringSet: Set<String> = []
    @Attribute public var nestedDictionary: [String: [Int]] = [:]
    @Attribute public var intKeyed: [Int: String] = [:]
    @Attribute public var optionalInts: [Int?] = []
    @Attribute public var matrix: [[Double]] = []
    @Attribute public var optionalStrings: [String]? = nil
    @Attribute(.externalStorage) public var blob: Data = Data()
    @Attribute(.externalStorage) public var optionalBlob: Data? = nil
    public init() {}
    public init(_ label: String) { self.label = label }
}

/// A compound unique constraint (SwiftData's `#Unique<Person>([\.first, \.last])`).
public final class ConfPerson: PersistentModel {
    @Attribute public var first: String = ""
    @Attribute public var last: String = ""
    @Attribute public var email: String = ""
    public init() {}
    public init(_ first: String, _ last: String, _ email: String) { self.first = first; self.last = last; self.email = email }
    public static var uniqueConstraints: [[PartialKeyPath<ConfPerson>]] { [[\.first, \.last]] }
}

/// External storage with a title to find it by.
public final class ConfPhoto: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute(.externalStorage) public var image: Data? = nil
    public init() {}
    public init(_ title: String, _ image: Data?) { self.title = title; self.image = image }
}

// MARK: Relationships

/// One-to-many, the inverse found without `inverse:` (nullify on both sides).
public final class ConfAuthor: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var books: [ConfBook] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfBook: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute public var pages: Int = 0
    @Relationship public var author: ConfAuthor? = nil
    public init() {}
    public init(_ title: String, pages: Int = 100) { self.title = title; self.pages = pages }
}

/// Relationships without an inverse: a to-one to the same model (which no other relationship
/// claims) and a to-many to a model that has no relationship back. No delete rule reaches
/// them when their target is deleted.
public final class ConfFan: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var mentor: ConfFan? = nil
    @Relationship public var favorites: [ConfSong] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfSong: PersistentModel {
    @Attribute public var title: String = ""
    public init() {}
    public init(_ title: String) { self.title = title }
}

/// Many-to-many with an explicit inverse.
public final class ConfStudent: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var lessons: [ConfLesson] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfLesson: PersistentModel {
    @Attribute public var topic: String = ""
    @Relationship(inverse: \ConfStudent.lessons) public var students: [ConfStudent] = []
    public init() {}
    public init(_ topic: String) { self.topic = topic }
}

/// Self-referential, cascading.
public final class ConfFolder: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(deleteRule: .cascade) public var children: [ConfFolder] = []
    @Relationship public var parent: ConfFolder? = nil
    public init() {}
    public init(_ name: String) { self.name = name }
}

/// Cascade to ports; ports are found through their voyage and by `isBooked`.
public final class ConfVoyage: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfPort.voyage) public var ports: [ConfPort] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfPort: PersistentModel {
    @Attribute public var city: String = ""
    @Attribute public var isBooked: Bool = false
    @Relationship public var voyage: ConfVoyage? = nil
    public init() {}
    public init(_ city: String, isBooked: Bool = false) { self.city = city; self.isBooked = isBooked }
}

/// `.deny`: a vault with keys cannot be deleted.
public final class ConfVault: PersistentModel {
    @Attribute public var label: String = ""
    @Relationship(deleteRule: .deny, inverse: \ConfVaultKey.vault) public var keys: [ConfVaultKey] = []
    public init() {}
    public init(_ label: String) { self.label = label }
}

public final class ConfVaultKey: PersistentModel {
    @Attribute public var number: String = ""
    @Relationship public var vault: ConfVault? = nil
    public init() {}
    public init(_ number: String) { self.number = number }
}

/// A unique model with a cascading to-many: an upsert takes over the stored object's relationships.
public final class ConfAlbum: PersistentModel {
    @Attribute(.unique) public var code: String = ""
    @Attribute public var title: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfTrack.album) public var tracks: [ConfTrack] = []
    public init() {}
    public init(_ code: String, title: String = "") { self.code = code; self.title = title }
}

public final class ConfTrack: PersistentModel {
    @Attribute public var title: String = ""
    @Relationship public var album: ConfAlbum? = nil
    public init() {}
    public init(_ title: String) { self.title = title }
}

/// Ordered to-many (cascade), and a many-to-many of items and labels.
public final class ConfShelf: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfItem.shelf) public var items: [ConfItem] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfItem: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var shelf: ConfShelf? = nil
    @Relationship public var labels: [ConfLabel] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfLabel: PersistentModel {
    @Attribute public var text: String = ""
    @Relationship(inverse: \ConfItem.labels) public var items: [ConfItem] = []
    public init() {}
    public init(_ text: String) { self.text = text }
}

/// `.noAction`: deleting the parent leaves the children as they are.
public final class ConfParent: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(deleteRule: .noAction, inverse: \ConfChild.parent) public var children: [ConfChild] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfChild: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var parent: ConfParent? = nil
    public init() {}
    public init(_ name: String) { self.name = name }
}

/// Minimum and maximum counts.
public final class ConfCrew: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(minimumModelCount: 1, maximumModelCount: 3, inverse: \ConfMember.crew) public var members: [ConfMember] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfMember: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var crew: ConfCrew? = nil
    public init() {}
    public init(_ name: String) { self.name = name }
}

/// Apple's Backyard Birds shapes: two to-manys naming one to-one as their inverse, and a
/// cascading to-many an object is put in both through its to-one and by appending.
public final class ConfYard: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship(inverse: \ConfShrub.yard) public var leadingShrubs: [ConfShrub] = []
    @Relationship(inverse: \ConfShrub.yard) public var trailingShrubs: [ConfShrub] = []
    @Relationship(deleteRule: .cascade, inverse: \ConfVisit.yard) public var visits: [ConfVisit] = []
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfShrub: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var yard: ConfYard? = nil
    public init() {}
    public init(_ name: String) { self.name = name }
}

public final class ConfVisit: PersistentModel {
    @Attribute public var number: Int = 0
    @Relationship public var yard: ConfYard? = nil
    public init() {}
    public init(_ number: Int) { self.number = number }
}

// MARK: History and observers

/// The root tests' `HNote`: a unique `code`, a value kept in the tombstone of a deletion, a
/// cascading to-many.
public final class ConfNote: PersistentModel {
    @Attribute(.unique) public var code: Int = 0
    @Attribute(.preserveValueOnDeletion) public var title: String = ""
    @Attribute public var body: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ConfLine.note) public var lines: [ConfLine] = []
    public init() {}
    public init(_ code: Int, _ title: String) { self.code = code; self.title = title }
}

public final class ConfLine: PersistentModel {
    @Attribute(.preserveValueOnDeletion) public var text: String = ""
    @Relationship public var note: ConfNote? = nil
    public init() {}
    public init(_ text: String) { self.text = text }
}

/// The root tests' `HTag`: no relationship, a unique `code` (its name), nothing kept on deletion.
public final class ConfTag: PersistentModel {
    @Attribute(.unique) public var code: String = ""
    @Attribute public var uses: Int = 0
    @Attribute public var color: String = ""
    public init() {}
    public init(_ code: String, uses: Int, color: String) { self.code = code; self.uses = uses; self.color = color }
}

/// The root tests' `Shelved`: sections by `genre`, or by the optional `series`.
public final class ConfShelved: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute public var genre: String = ""
    @Attribute public var series: String? = nil
    public init() {}
    public init(_ title: String, _ genre: String, series: String? = nil) { self.title = title; self.genre = genre; self.series = series }
}

/// A unique attribute that may be nil: nil is a value like any other, on every kind of store.
public final class ConfBadge: PersistentModel {
    @Attribute(.unique) public var code: String? = nil
    @Attribute public var holder: String = ""
    public init() {}
    public init(_ code: String?, _ holder: String) { self.code = code; self.holder = holder }
}

/// The root tests' `SyncItem`, for a model actor's imports and upserts.
public final class ConfSyncItem: PersistentModel {
    @Attribute(.unique) public var code: Int = 0
    @Attribute public var value: String = ""
    public init() {}
    public init(_ code: Int, _ value: String) { self.code = code; self.value = value }
}

// MARK: Inheritance

/// A base class with two subclasses, each with a property of its own.
public class ConfVehicle: PersistentModel {
    @Attribute public var name: String = ""
    @Attribute public var wheels: Int = 0
    public required init() {}
    public init(name: String, wheels: Int) { self.name = name; self.wheels = wheels }
}

public final class ConfCar: ConfVehicle {
    @Attribute public var seats: Int = 0
    public required init() { super.init() }
    public init(name: String, seats: Int) {
        super.init(name: name, wheels: 4)
        self.seats = seats          // a subclass sets its own properties after super.init
    }
}

public final class ConfBike: ConfVehicle {
    @Attribute public var isElectric: Bool = false
    public required init() { super.init() }
    public init(name: String, isElectric: Bool) {
        super.init(name: name, wheels: 2)
        self.isElectric = isElectric
    }
}

// MARK: Ephemeral and transformable attributes

/// Ephemeral attributes: one with a declaration default, one set in `init()`.
public final class ConfDraft: PersistentModel {
    @Attribute public var title: String = ""
    @Attribute(.ephemeral) public var cursor: Int = 0
    @Attribute(.ephemeral) public var selection: String
    public init() { selection = "none" }
    public init(title: String) { self.title = title; selection = "new" }
}

public final class ConfSwatch: PersistentModel {
    @Attribute public var name: String = ""
    @Attribute(.transformable(by: ConfColorTransformer.self)) public var color: ConfColor = ConfColor([0, 0, 0])
    @Attribute(.transformable(by: ConfColorTransformer.self)) public var accent: ConfColor? = nil
    @Attribute(.transformable(by: "ConfUppercaseTransformer")) public var label: String = ""
    public init() {}
    public init(name: String, color: ConfColor, accent: ConfColor?, label: String) {
        self.name = name; self.color = color; self.accent = accent; self.label = label
    }
}

public final class ConfUnstorable: PersistentModel {
    @Attribute public var name: String = ""
    @Attribute public var thing: ConfNotCodable = ConfNotCodable()
    public init() {}
}

/// A transformer name nobody registered: not a valid schema.
public final class ConfLabelled: PersistentModel {
    @Attribute(.transformable(by: "ConfNoSuchTransformer")) public var label: String = ""
    public init() {}
}
