import Foundation
import Testing
import Strata

// Every value type API.md lists comes back exactly from a store on disk after the container
// is closed and the store reopened: same values, same bits for floating point, same Unicode
// scalars for strings, sub-second dates, empty and non-empty collections, nil and non-nil.

enum RoundTripShape: Codable, Hashable { case circle(radius: Double), rect(width: Int, height: Int), none }
enum RoundTripPriority: Int, Codable, Hashable { case low = 1, high = 9 }

struct RoundTripNested: Codable, Hashable {
    var name: String
    var values: [Int]
    var when: Date?
    var address: Address?
}

/// The optional and nested forms that `Everything` lacks.
final class RoundTripExtras: PersistentModel {
    @Attribute var label: String = ""
    @Attribute var optionalDate: Date? = nil
    @Attribute var optionalUUID: UUID? = nil
    @Attribute var optionalURL: URL? = nil
    @Attribute var optionalData: Data? = nil
    @Attribute var optionalDecimal: Decimal? = nil
    @Attribute var optionalDouble: Double? = nil
    @Attribute var optionalFloat: Float? = nil
    @Attribute var optionalBool: Bool? = nil
    @Attribute var optionalUInt8: UInt8? = nil
    @Attribute var optionalAddress: Address? = nil
    @Attribute var optionalStatus: Status? = nil
    @Attribute var shape: RoundTripShape = .none
    @Attribute var priority: RoundTripPriority = .low
    @Attribute var nested: RoundTripNested = RoundTripNested(name: "", values: [], when: nil, address: nil)
    @Attribute var dates: [Date] = []
    @Attribute var uuids: Set<UUID> = []
    @Attribute var stringSet: Set<String> = []
    @Attribute var nestedDictionary: [String: [Int]] = [:]
    @Attribute var intKeyed: [Int: String] = [:]
    @Attribute var optionalInts: [Int?] = []
    @Attribute var matrix: [[Double]] = []
    @Attribute var optionalStrings: [String]? = nil
    @Attribute(.externalStorage) var blob: Data = Data()
    @Attribute(.externalStorage) var optionalBlob: Data? = nil
    init() {}
}

@Suite struct ValueRoundTripTests {
    /// Saves `objects` in a new store, reopens it in a new container and returns the stored objects.
    func roundTrip<T: PersistentModel>(_ objects: [T], sortBy: [SortDescriptor<T>], _ dir: TemporaryDirectory) throws -> [T] {
        let config = ModelConfiguration(url: dir.store())
        do {
            let container = try ModelContainer(for: T.self, configurations: config)
            let context = ModelContext(container)
            for o in objects { context.insert(o) }
            try context.save()
        }
        let container = try ModelContainer(for: T.self, configurations: config)
        let loaded = try ModelContext(container).fetch(FetchDescriptor<T>(sortBy: sortBy))
        #expect(loaded.count == objects.count)
        for (a, b) in zip(objects, loaded) { #expect(a !== b, "loaded from the store, not the saved instance") }
        return loaded
    }

    @Test func everythingAtItsEdges() throws {
        let dir = TemporaryDirectory()
        let high = Everything()
        high.bool = true
        high.int = .max; high.int8 = .max; high.int16 = .max; high.int32 = .max; high.int64 = .max
        high.uint = .max; high.uint8 = .max; high.uint16 = .max; high.uint32 = .max; high.uint64 = .max
        high.float = .greatestFiniteMagnitude
        high.double = .greatestFiniteMagnitude
        high.decimal = Decimal(string: "9.99")!
        high.string = "Zoë 😀 e\u{301} \u{0} Москва Ελληνικά 東京"
        high.date = Date(timeIntervalSinceReferenceDate: 700_000_000.123456789)
        high.data = Data([0, 1, 0xFF, 0, 0x80])
        high.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        high.url = URL(string: "https://example.com/path/to%20x?q=1&r=%C3%A9#frag")!
        high.optionalString = ""
        high.optionalInt = Int.min
        high.strings = ["", "a", "é", "a,b", "\"quoted\""]
        high.intSet = [Int.min, -1, 0, Int.max]
        high.dictionary = ["pi": 3.14159, "": -0.0, "inf": .infinity]
        high.status = .done
        high.address = Address(street: "Rua Augusta, 1", city: "Lisboa")
        high.addresses = [Address(street: "a", city: "b"), Address(street: "", city: "Zürich")]

        let low = Everything()
        low.int = .min; low.int8 = .min; low.int16 = .min; low.int32 = .min; low.int64 = .min
        low.uint = 0; low.uint8 = 0; low.uint16 = 0; low.uint32 = 0; low.uint64 = 0
        low.float = -.leastNonzeroMagnitude
        low.double = -.leastNonzeroMagnitude
        low.decimal = Decimal(string: "-12345678901234567890.123456789")!
        low.string = ""
        low.date = Date(timeIntervalSinceReferenceDate: -1_000_000_000.000_001)   // before 1970, sub-second
        low.data = Data()
        low.url = URL(fileURLWithPath: "/tmp/a folder/é.txt")
        low.optionalString = nil
        low.optionalInt = nil

        let special = Everything()
        special.int = 3
        special.float = .infinity
        special.double = -0.0
        special.decimal = Decimal(string: "0.000000000000000000000000000000000001")!
        special.date = .distantFuture
        special.string = "\r\n\t"

        let nan = Everything()
        nan.int = 4
        nan.float = -.infinity
        nan.double = .nan
        nan.date = .distantPast

        let loaded = try roundTrip([high, low, special, nan], sortBy: [SortDescriptor(\.int)], dir)
        // Sorted by int: low (min), special (3), nan (4), high (max).
        let byInt = [low, special, nan, high]
        for (want, got) in zip(byInt, loaded) {
            #expect(got.bool == want.bool)
            #expect(got.int == want.int && got.int8 == want.int8 && got.int16 == want.int16 && got.int32 == want.int32 && got.int64 == want.int64)
            #expect(got.uint == want.uint && got.uint8 == want.uint8 && got.uint16 == want.uint16 && got.uint32 == want.uint32 && got.uint64 == want.uint64)
            #expect(got.float.bitPattern == want.float.bitPattern, "float \(want.float) came back as \(got.float)")
            #expect(got.double.bitPattern == want.double.bitPattern, "double \(want.double) came back as \(got.double)")
            #expect(got.decimal == want.decimal)
            #expect(Array(got.string.unicodeScalars) == Array(want.string.unicodeScalars), "the exact scalars, not just an equivalent string")
            #expect(got.date == want.date)
            #expect(got.date.timeIntervalSinceReferenceDate.bitPattern == want.date.timeIntervalSinceReferenceDate.bitPattern)
            #expect(got.data == want.data)
            #expect(got.uuid == want.uuid)
            #expect(got.url == want.url)
            #expect(got.optionalString == want.optionalString)
            #expect(got.optionalInt == want.optionalInt)
            #expect(got.strings == want.strings)
            #expect(got.intSet == want.intSet)
            #expect(got.dictionary.mapValues(\.bitPattern) == want.dictionary.mapValues(\.bitPattern))
            #expect(got.status == want.status)
            #expect(got.address == want.address)
            #expect(got.addresses == want.addresses)
        }
        #expect(loaded[0].data.isEmpty)
        #expect(loaded[0].optionalString == nil && loaded[3].optionalString == "")
        #expect(loaded[1].double.sign == .minus && loaded[1].double == 0)
        #expect(loaded[2].double.isNaN)
        #expect(loaded[3].decimal == Decimal(string: "9.99")!)
        #expect("\(loaded[3].decimal)" == "9.99")
        #expect(loaded[3].date.timeIntervalSinceReferenceDate == 700_000_000.123456789)
    }

    @Test func optionalsNestedCodablesAndCollections() throws {
        let dir = TemporaryDirectory()
        let full = RoundTripExtras()
        full.label = "full"
        full.optionalDate = Date(timeIntervalSinceReferenceDate: 12.5)
        full.optionalUUID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        full.optionalURL = URL(string: "ftp://user@host:21/x")!
        full.optionalData = Data()
        full.optionalDecimal = Decimal(string: "-0.5")!
        full.optionalDouble = 0.1
        full.optionalFloat = 1.5
        full.optionalBool = false
        full.optionalUInt8 = 255
        full.optionalAddress = Address(street: "Καλαμάτα", city: "Αθήνα")
        full.optionalStatus = .active
        full.shape = .rect(width: 3, height: -4)
        full.priority = .high
        full.nested = RoundTripNested(name: "n", values: [1, 2, 3], when: Date(timeIntervalSinceReferenceDate: 0.25),
                                      address: Address(street: "s", city: "c"))
        full.dates = [Date(timeIntervalSinceReferenceDate: 1.000001), .distantPast]
        full.uuids = [UUID(uuidString: "00000000-0000-0000-0000-000000000002")!, UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        full.stringSet = ["a", "б", "γ"]
        full.nestedDictionary = ["x": [], "y": [Int.max]]
        full.intKeyed = [-1: "minus one", 0: ""]
        full.optionalInts = [1, nil, 3]
        full.matrix = [[], [1.5, -2]]
        full.optionalStrings = []
        full.blob = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        full.optionalBlob = Data([1, 2, 3])

        let empty = RoundTripExtras()
        empty.label = "empty"
        empty.shape = .circle(radius: 0.5)

        let loaded = try roundTrip([full, empty], sortBy: [SortDescriptor(\.label, order: .reverse)], dir)
        let f = try #require(loaded.first { $0.label == "full" })
        #expect(f.optionalDate == full.optionalDate)
        #expect(f.optionalUUID == full.optionalUUID)
        #expect(f.optionalURL == full.optionalURL)
        #expect(f.optionalData == Data())
        #expect(f.optionalDecimal == full.optionalDecimal)
        #expect(f.optionalDouble == 0.1)
        #expect(f.optionalFloat == 1.5)
        #expect(f.optionalBool == false)
        #expect(f.optionalUInt8 == 255)
        #expect(f.optionalAddress == full.optionalAddress)
        #expect(f.optionalStatus == .active)
        #expect(f.shape == .rect(width: 3, height: -4))
        #expect(f.priority == .high)
        #expect(f.nested == full.nested)
        #expect(f.dates == full.dates)
        #expect(f.uuids == full.uuids)
        #expect(f.stringSet == full.stringSet)
        #expect(f.nestedDictionary == full.nestedDictionary)
        #expect(f.intKeyed == full.intKeyed)
        #expect(f.optionalInts == [1, nil, 3])
        #expect(f.matrix == full.matrix)
        #expect(f.optionalStrings == [])
        #expect(f.blob == full.blob)
        #expect(f.optionalBlob == Data([1, 2, 3]))

        let e = try #require(loaded.first { $0.label == "empty" })
        #expect(e.optionalDate == nil && e.optionalUUID == nil && e.optionalURL == nil && e.optionalData == nil)
        #expect(e.optionalDecimal == nil && e.optionalDouble == nil && e.optionalFloat == nil && e.optionalBool == nil)
        #expect(e.optionalUInt8 == nil && e.optionalAddress == nil && e.optionalStatus == nil && e.optionalStrings == nil)
        #expect(e.shape == .circle(radius: 0.5))
        #expect(e.priority == .low)
        #expect(e.nested == RoundTripNested(name: "", values: [], when: nil, address: nil))
        #expect(e.dates.isEmpty && e.uuids.isEmpty && e.stringSet.isEmpty && e.nestedDictionary.isEmpty)
        #expect(e.intKeyed.isEmpty && e.optionalInts.isEmpty && e.matrix.isEmpty)
        #expect(e.blob.isEmpty && e.optionalBlob == nil)
    }

    /// A changed value is what a reopened store gives, including changes to nil and to empty.
    @Test func changesToNilAndEmptyRoundTrip() throws {
        let dir = TemporaryDirectory()
        let config = ModelConfiguration(url: dir.store())
        do {
            let container = try ModelContainer(for: RoundTripExtras.self, configurations: config)
            let context = ModelContext(container)
            let o = RoundTripExtras()
            o.label = "x"
            o.optionalDouble = 2
            o.optionalAddress = Address(street: "a", city: "b")
            o.dates = [.distantFuture]
            o.optionalBlob = Data([9])
            context.insert(o)
            try context.save()
            o.optionalDouble = nil
            o.optionalAddress = nil
            o.dates = []
            o.optionalBlob = nil
            o.optionalStrings = ["now set"]
            try context.save()
        }
        let container = try ModelContainer(for: RoundTripExtras.self, configurations: config)
        let o = try #require(try ModelContext(container).fetch(FetchDescriptor<RoundTripExtras>()).first)
        #expect(o.optionalDouble == nil)
        #expect(o.optionalAddress == nil)
        #expect(o.dates.isEmpty)
        #expect(o.optionalBlob == nil)
        #expect(o.optionalStrings == ["now set"])
    }

    /// `Decimal.nan` is a `Decimal` like any other: it must come back.
    @Test func decimalNaNRoundTrips() throws {
        let dir = TemporaryDirectory()
        let o = Everything()
        o.decimal = .nan
        let loaded = try roundTrip([o], sortBy: [], dir)
        #expect(loaded.first?.decimal.isNaN == true)
    }
}
