import Foundation
import Strata

/// Saves `objects` in a fresh store, opens another container on it and returns the stored
/// objects, sorted; checks that they are as many, and loaded (not the saved instances).
func roundTrip<T: PersistentModel>(_ env: ScenarioEnvironment, _ objects: [T], sortBy: [SortDescriptor<T>],
                                   also types: [any PersistentModel.Type] = [],
                                   file: StaticString = #filePath, line: UInt = #line) throws -> [T] {
    let s = try env.store.fresh(Schema([T.self] + types), env.scenario)
    let context = ModelContext(s.container)
    for object in objects { context.insert(object) }
    try context.save()
    let loaded = try ModelContext(try s.reopen()).fetch(FetchDescriptor<T>(sortBy: sortBy))
    try checkEqual(loaded.count, objects.count, "stored objects", file: file, line: line)
    try check(zip(objects, loaded).allSatisfy { $0 !== $1 }, "loaded from the store, not the saved instances", file: file, line: line)
    return loaded
}

/// The bits of a `Double`, to compare -0.0 and NaN exactly.
func bits(_ values: [Double]) -> [UInt64] { values.map(\.bitPattern) }
func bits(_ values: [Float]) -> [UInt32] { values.map(\.bitPattern) }

extension Conformance {
    static let valueScenarios: [ConformanceScenario] = [
        ConformanceScenario("integersAndBoolsAtTheirEdges", from: "ValueRoundTripTests.everythingAtItsEdges") { env in
            let high = ConfEverything("high")
            high.bool = true
            high.int = .max; high.int8 = .max; high.int16 = .max; high.int32 = .max; high.int64 = .max
            high.uint = .max; high.uint8 = .max; high.uint16 = .max; high.uint32 = .max; high.uint64 = .max
            let low = ConfEverything("low")
            low.int = .min; low.int8 = .min; low.int16 = .min; low.int32 = .min; low.int64 = .min
            let middle = ConfEverything("middle")
            middle.int = -1; middle.int8 = -1; middle.int16 = 12_345; middle.int32 = -7; middle.int64 = 1 << 53 + 1
            middle.uint = 1 << 63; middle.uint8 = 128; middle.uint16 = 1 << 15; middle.uint32 = 1 << 31; middle.uint64 = 1 << 63 + 1
            let loaded = try roundTrip(env, [high, low, middle], sortBy: [SortDescriptor(\.int)])
            for (want, got) in zip([low, middle, high], loaded) {
                try checkEqual(got.label, want.label, "sorted by int")
                try checkEqual(got.bool, want.bool)
                try checkEqual([got.int, Int(got.int8), Int(got.int16), Int(got.int32), Int(got.int64)],
                               [want.int, Int(want.int8), Int(want.int16), Int(want.int32), Int(want.int64)], want.label)
                try checkEqual([UInt64(got.uint), UInt64(got.uint8), UInt64(got.uint16), UInt64(got.uint32), got.uint64],
                               [UInt64(want.uint), UInt64(want.uint8), UInt64(want.uint16), UInt64(want.uint32), want.uint64], want.label)
            }
            // The stored values compare as the Swift values do (unsigned above Int64.max included).
            let reader = ModelContext(try savedContainer(env, [1, UInt64.max, 1 << 63].enumerated().map { i, value in
                let o = ConfEverything(["a", "b", "c"][i])
                o.uint64 = value
                return o
            }))
            let big = UInt64(1) << 62
            try checkEqual(try reader.fetch(FetchDescriptor<ConfEverything>(predicate: #Predicate { $0.uint64 > big },
                                                                            sortBy: [SortDescriptor(\.uint64)])).map(\.label), ["c", "b"])
        },

        ConformanceScenario("finiteFloatingPointKeepsItsBits", from: "ValueRoundTripTests.everythingAtItsEdges") { env in
            let doubles: [Double] = [.greatestFiniteMagnitude, -.leastNonzeroMagnitude, -0.0, 0.1, 1.0 / 3.0, -123_456.789e-200]
            let floats: [Float] = [.greatestFiniteMagnitude, -.leastNonzeroMagnitude, -0.0, 0.1, 1.0 / 3.0, 1.5]
            let objects = zip(doubles, floats).enumerated().map { i, pair in
                let o = ConfEverything("v\(i)")
                o.double = pair.0
                o.float = pair.1
                return o
            }
            let loaded = try roundTrip(env, objects, sortBy: [SortDescriptor(\.label)])
            try checkEqual(bits(loaded.map(\.double)), bits(doubles), "\(loaded.map(\.double))")
            try checkEqual(bits(loaded.map(\.float)), bits(floats), "\(loaded.map(\.float))")
            try check(loaded[2].double.sign == .minus && loaded[2].double == 0, "-0.0 keeps its sign")
        },

        ConformanceScenario("nonFiniteNumbers", from: "ValueRoundTripTests.everythingAtItsEdges, ValueRoundTripTests.decimalNaNRoundTrips",
                            requires: [.nonFiniteNumbers]) { env in
            let values: [(Double, Float)] = [(.nan, .infinity), (.infinity, -.infinity), (-.infinity, .nan)]
            let objects = values.enumerated().map { i, pair in
                let o = ConfEverything("v\(i)")
                o.double = pair.0
                o.float = pair.1
                o.decimal = i == 0 ? .nan : Decimal(i)
                return o
            }
            let loaded = try roundTrip(env, objects, sortBy: [SortDescriptor(\.label)])
            try check(loaded[0].double.isNaN && loaded[2].float.isNaN, "NaN comes back")
            try checkEqual(loaded[1].double, .infinity)
            try checkEqual(loaded[2].double, -.infinity)
            try checkEqual(loaded[0].float, .infinity)
            try checkEqual(loaded[1].float, -.infinity)
            try check(loaded[0].decimal.isNaN, "Decimal.nan comes back, got \(loaded[0].decimal)")
            try checkEqual(loaded[1].decimal, 1)
        },

        ConformanceScenario("decimalsKeepTheirDigits", from: "ValueRoundTripTests.everythingAtItsEdges") { env in
            let decimals = ["9.99", "-12345678901234567890.123456789", "0.000000000000000000000000000000000001", "0", "1e20", "-0.5"]
                .map { Decimal(string: $0)! }
            let objects = decimals.enumerated().map { i, d in
                let o = ConfEverything("v\(i)")
                o.decimal = d
                return o
            }
            let loaded = try roundTrip(env, objects, sortBy: [SortDescriptor(\.label)])
            try checkEqual(loaded.map(\.decimal), decimals)
            try checkEqual("\(loaded[0].decimal)", "9.99")
            // Compared as numbers, not as text.
            let nine = Decimal(9)
            let reader = ModelContext(try savedContainer(env, decimals.enumerated().map { i, d in
                let o = ConfEverything("v\(i)")
                o.decimal = d
                return o
            }))
            try checkEqual(try reader.fetch(FetchDescriptor<ConfEverything>(predicate: #Predicate { $0.decimal > nine },
                                                                            sortBy: [SortDescriptor(\.decimal)])).map(\.label), ["v0", "v4"])
        },

        ConformanceScenario("stringsKeepTheirScalars", from: "ValueRoundTripTests.everythingAtItsEdges") { env in
            let strings = ["Zoë 😀 e\u{301} Москва Ελληνικά 東京", "", "\r\n\t", " leading and trailing ", "'quoted' \"double\" \\ back",
                           "é", "e\u{301}", "a,b;c", String(repeating: "long ", count: 2_000)]
            let objects = strings.enumerated().map { i, text in
                let o = ConfEverything(String(format: "v%02d", i))
                o.string = text
                return o
            }
            let loaded = try roundTrip(env, objects, sortBy: [SortDescriptor(\.label)])
            try checkEqual(loaded.map { Array($0.string.unicodeScalars) }, strings.map { Array($0.unicodeScalars) },
                           "the exact scalars, not just an equivalent string")
            // "é" and "e\u{301}" are equal Swift strings: a predicate finds both.
            let reader = ModelContext(try savedContainer(env, strings.enumerated().map { i, text in
                let o = ConfEverything("v\(i)")
                o.string = text
                return o
            }))
            let found = try reader.fetch(FetchDescriptor<ConfEverything>(predicate: #Predicate { $0.string == "é" }, sortBy: [SortDescriptor(\.label)]))
            try checkEqual(found.map(\.label), ["v5", "v6"], "Swift's String equality (canonical equivalence)")
        },

        ConformanceScenario("stringsWithNUL", from: "ValueRoundTripTests.everythingAtItsEdges", requires: [.nulInStrings]) { env in
            let o = ConfEverything("nul")
            o.string = "before\u{0}after"
            o.strings = ["\u{0}", "a\u{0}b"]
            let loaded = try roundTrip(env, [o], sortBy: [])
            try checkEqual(Array(loaded[0].string.unicodeScalars), Array("before\u{0}after".unicodeScalars))
            try checkEqual(loaded[0].strings, ["\u{0}", "a\u{0}b"])
        },

        ConformanceScenario("datesRoundTripExactly", from: "ValueRoundTripTests.everythingAtItsEdges, ValueRoundTripTests.optionalsNestedCodablesAndCollections",
                            requires: [.exactDates]) { env in
            let dates = [Date(timeIntervalSinceReferenceDate: 700_000_000.123456789), Date(timeIntervalSinceReferenceDate: -1_000_000_000.000_001),
                         .distantFuture, .distantPast, Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.5),
                         Date(timeIntervalSinceReferenceDate: 0.1)]
            let objects = dates.enumerated().map { i, date in
                let o = ConfExtras("v\(i)")
                o.optionalDate = date
                o.dates = [date, date.addingTimeInterval(0.25)]
                o.nested = ConfNested(name: "n", values: [], when: date, address: nil)
                return o
            }
            let everything = ConfEverything("d")
            everything.date = dates[0]
            let loaded = try roundTrip(env, objects, sortBy: [SortDescriptor(\.label)])
            for (want, got) in zip(dates, loaded) {
                try checkEqual(got.optionalDate?.timeIntervalSinceReferenceDate.bitPattern, want.timeIntervalSinceReferenceDate.bitPattern,
                               "\(want.timeIntervalSinceReferenceDate) came back as \(got.optionalDate?.timeIntervalSinceReferenceDate ?? .nan)")
                try checkEqual(got.dates, [want, want.addingTimeInterval(0.25)])
                try checkEqual(got.nested.when, want)
            }
            let plain = try roundTrip(env, [everything], sortBy: [])
            try checkEqual(plain[0].date, dates[0])
            // Sub-second dates compare and sort exactly.
            let context = ModelContext(try env.store.fresh(Schema([ConfExtras.self]), env.scenario).container)
            for i in 0..<4 {
                let o = ConfExtras("s\(i)")
                o.optionalDate = Date(timeIntervalSinceReferenceDate: 1_000 + Double(i) * 0.001)
                context.insert(o)
            }
            try context.save()
            let cut = Date(timeIntervalSinceReferenceDate: 1_000.0015)
            let reader = ModelContext(context.container)
            try checkEqual(try reader.fetch(FetchDescriptor<ConfExtras>(predicate: #Predicate { $0.optionalDate! > cut },
                                                                        sortBy: [SortDescriptor(\.optionalDate, order: .reverse)])).map(\.label),
                           ["s3", "s2"])
        },

        ConformanceScenario("dataUUIDsAndURLs", from: "ValueRoundTripTests.everythingAtItsEdges") { env in
            let a = ConfEverything("a")
            a.data = Data([0, 1, 0xFF, 0, 0x80])
            a.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
            a.url = URL(string: "https://example.com/path/to%20x?q=1&r=%C3%A9#frag")!
            let b = ConfEverything("b")
            b.data = Data()
            b.url = URL(fileURLWithPath: "/tmp/a folder/é.txt")
            let c = ConfEverything("c")
            c.data = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            c.uuid = UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!
            c.url = URL(string: "mailto:someone@example.com")!
            let loaded = try roundTrip(env, [a, b, c], sortBy: [SortDescriptor(\.label)])
            try checkEqual(loaded.map(\.data), [a.data, b.data, c.data])
            try checkEqual(loaded.map(\.uuid), [a.uuid, b.uuid, c.uuid])
            try checkEqual(loaded.map(\.url), [a.url, b.url, c.url])
            try check(loaded[1].data.isEmpty)
            // Found by value.
            let uuid = c.uuid, url = a.url
            let reader = ModelContext(try savedContainer(env, [a, b, c].map { o in
                let copy = ConfEverything(o.label)
                copy.uuid = o.uuid
                copy.url = o.url
                return copy
            }))
            try checkEqual(try reader.fetch(FetchDescriptor<ConfEverything>(predicate: #Predicate { $0.uuid == uuid })).map(\.label), ["c"])
            try checkEqual(try reader.fetch(FetchDescriptor<ConfEverything>(predicate: #Predicate { $0.url == url })).map(\.label), ["a"])
        },

        ConformanceScenario("optionalsNilAndSet", from: "ValueRoundTripTests.optionalsNestedCodablesAndCollections") { env in
            let full = ConfExtras("full")
            full.optionalDate = confDay(1)
            full.optionalUUID = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
            full.optionalURL = URL(string: "ftp://user@host:21/x")!
            full.optionalData = Data()
            full.optionalDecimal = Decimal(string: "-0.5")!
            full.optionalDouble = 0.1
            full.optionalFloat = 1.5
            full.optionalBool = false
            full.optionalUInt8 = 255
            full.optionalInt64 = .min
            full.optionalUInt32 = .max
            full.optionalAddress = ConfAddress(street: "Καλαμάτα", city: "Αθήνα")
            full.optionalStatus = .active
            full.optionalStrings = []
            let empty = ConfExtras("empty")
            let loaded = try roundTrip(env, [full, empty], sortBy: [SortDescriptor(\.label, order: .reverse)])
            let f = loaded[0], e = loaded[1]
            try checkEqual(f.label, "full")
            try checkEqual(f.optionalDate, full.optionalDate)
            try checkEqual(f.optionalUUID, full.optionalUUID)
            try checkEqual(f.optionalURL, full.optionalURL)
            try checkEqual(f.optionalData, Data(), "empty, not nil")
            try checkEqual(f.optionalDecimal, full.optionalDecimal)
            try checkEqual(f.optionalDouble, 0.1)
            try checkEqual(f.optionalFloat, 1.5)
            try checkEqual(f.optionalBool, false, "false, not nil")
            try checkEqual(f.optionalUInt8, 255)
            try checkEqual(f.optionalInt64, .min)
            try checkEqual(f.optionalUInt32, .max)
            try checkEqual(f.optionalAddress, full.optionalAddress)
            try checkEqual(f.optionalStatus, .active)
            try checkEqual(f.optionalStrings, [], "empty, not nil")
            try check(e.optionalDate == nil && e.optionalUUID == nil && e.optionalURL == nil && e.optionalData == nil, "nil stays nil")
            try check(e.optionalDecimal == nil && e.optionalDouble == nil && e.optionalFloat == nil && e.optionalBool == nil, "nil stays nil")
            try check(e.optionalUInt8 == nil && e.optionalInt64 == nil && e.optionalUInt32 == nil && e.optionalAddress == nil && e.optionalStatus == nil && e.optionalStrings == nil,
                      "nil stays nil")
        },

        ConformanceScenario("collectionsRoundTrip", from: "ValueRoundTripTests.everythingAtItsEdges, ValueRoundTripTests.optionalsNestedCodablesAndCollections") { env in
            let e = ConfEverything("e")
            e.strings = ["", "a", "é", "a,b", "\"quoted\"", "[1]"]
            e.intSet = [Int.min, -1, 0, Int.max]
            e.dictionary = ["pi": 3.14159, "": -0.0, "e": 2.718]
            e.optionalString = ""
            e.optionalInt = Int.min
            let loadedE = try roundTrip(env, [e], sortBy: [])[0]
            try checkEqual(loadedE.strings, e.strings, "order kept")
            try checkEqual(loadedE.intSet, e.intSet)
            try checkEqual(loadedE.dictionary.mapValues(\.bitPattern), e.dictionary.mapValues(\.bitPattern))
            try checkEqual(loadedE.optionalString, "")
            try checkEqual(loadedE.optionalInt, Int.min)

            let x = ConfExtras("x")
            x.dates = [confDay(1), confDay(-20_000)]
            x.uuids = [UUID(uuidString: "00000000-0000-0000-0000-000000000002")!, UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
            x.stringSet = ["a", "б", "γ"]
            x.nestedDictionary = ["x": [], "y": [Int.max]]
            x.intKeyed = [-1: "minus one", 0: ""]
            x.optionalInts = [1, nil, 3]
            x.matrix = [[], [1.5, -2]]
            let empty = ConfExtras("y")
            let loaded = try roundTrip(env, [x, empty], sortBy: [SortDescriptor(\.label)])
            let f = loaded[0]
            try checkEqual(f.dates, x.dates)
            try checkEqual(f.uuids, x.uuids)
            try checkEqual(f.stringSet, x.stringSet)
            try checkEqual(f.nestedDictionary, x.nestedDictionary)
            try checkEqual(f.intKeyed, x.intKeyed)
            try checkEqual(f.optionalInts, [1, nil, 3])
            try checkEqual(f.matrix, x.matrix)
            let g = loaded[1]
            try check(g.dates.isEmpty && g.uuids.isEmpty && g.stringSet.isEmpty && g.nestedDictionary.isEmpty, "empty stays empty")
            try check(g.intKeyed.isEmpty && g.optionalInts.isEmpty && g.matrix.isEmpty, "empty stays empty")
        },

        ConformanceScenario("codableEnumsAndStructs", from: "ValueRoundTripTests.optionalsNestedCodablesAndCollections, ValueRoundTripTests.everythingAtItsEdges") { env in
            let a = ConfExtras("a")
            a.shape = .rect(width: 3, height: -4)
            a.priority = .high
            a.nested = ConfNested(name: "n", values: [1, 2, 3], when: confDay(2), address: ConfAddress(street: "s", city: "c"))
            let b = ConfExtras("b")
            b.shape = .circle(radius: 0.5)
            let loaded = try roundTrip(env, [a, b], sortBy: [SortDescriptor(\.label)])
            try checkEqual(loaded[0].shape, .rect(width: 3, height: -4))
            try checkEqual(loaded[0].priority, .high)
            try checkEqual(loaded[0].nested, a.nested)
            try checkEqual(loaded[1].shape, .circle(radius: 0.5))
            try checkEqual(loaded[1].priority, .low)
            try checkEqual(loaded[1].nested, ConfNested(name: "", values: [], when: nil, address: nil))

            let e = ConfEverything("e")
            e.status = .done
            e.address = ConfAddress(street: "Rua Augusta, 1", city: "Lisboa")
            e.addresses = [ConfAddress(street: "a", city: "b"), ConfAddress(street: "", city: "Zürich")]
            let f = ConfEverything("f")
            let everything = try roundTrip(env, [e, f], sortBy: [SortDescriptor(\.label)])
            try checkEqual(everything[0].status, .done)
            try checkEqual(everything[0].address, e.address)
            try checkEqual(everything[0].addresses, e.addresses, "an array of structs, in order")
            try checkEqual(everything[1].status, .planned)
            try checkEqual(everything[1].addresses, [])
        },

        ConformanceScenario("changesToNilAndEmptyRoundTrip", from: "ValueRoundTripTests.changesToNilAndEmptyRoundTrip") { env in
            let s = try env.open(ConfExtras.self)
            let context = ModelContext(s.container)
            let o = ConfExtras("x")
            o.optionalDouble = 2
            o.optionalAddress = ConfAddress(street: "a", city: "b")
            o.dates = [confDay(5)]
            o.optionalBlob = Data([9])
            context.insert(o)
            try context.save()
            o.optionalDouble = nil
            o.optionalAddress = nil
            o.dates = []
            o.optionalBlob = nil
            o.optionalStrings = ["now set"]
            try context.save()
            let again = try require(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfExtras>()).first)
            try checkEqual(again.optionalDouble, nil)
            try checkEqual(again.optionalAddress, nil)
            try checkEqual(again.dates, [])
            try checkEqual(again.optionalBlob, nil)
            try checkEqual(again.optionalStrings, ["now set"])
        },

        ConformanceScenario("externalStorageValuesReadBackEqual", from: "ExternalStorageTests.largeValuesGoToBlobFilesAndRoundTripAfterAReopen, ExternalStorageTests.replacingOrDeletingRemovesTheOldBlob, ExternalStorageTests.predicatesOnAModelWithExternalStorageStillWork") { env in
            let s = try env.open(ConfPhoto.self, ConfExtras.self)
            let big = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let context = ModelContext(s.container)
            let photo = ConfPhoto("big", big)
            context.insert(photo)
            context.insert(ConfPhoto("none", nil))
            context.insert(ConfPhoto("small", Data([1, 2, 3])))
            let extras = ConfExtras("x")
            extras.blob = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
            extras.optionalBlob = Data()
            context.insert(extras)
            try context.save()
            do {
                let reader = ModelContext(try s.reopen())
                let photos = try reader.fetch(FetchDescriptor<ConfPhoto>(sortBy: [SortDescriptor(\.title)]))
                try checkEqual(photos.map(\.title), ["big", "none", "small"])
                try check(photos[0].image == big, "the large value reads back equal")
                try checkEqual(photos[1].image, nil)
                try checkEqual(photos[2].image, Data([1, 2, 3]))
                let x = try require(try reader.fetch(FetchDescriptor<ConfExtras>()).first)
                try check(x.blob == extras.blob)
                try checkEqual(x.optionalBlob, Data(), "empty, not nil")
                let withImage = try reader.fetch(FetchDescriptor<ConfPhoto>(predicate: #Predicate { $0.image != nil }, sortBy: [SortDescriptor(\.title)]))
                try checkEqual(withImage.map(\.title), ["big", "small"], "a predicate on an external value")
            }
            // Replaced, then deleted.
            let replacement = Data(repeating: 2, count: 200_000)
            photo.image = replacement
            try context.save()
            try check(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfPhoto>(predicate: #Predicate { $0.title == "big" })).first?.image == replacement)
            context.delete(photo)
            try context.save()
            try checkEqual(try ModelContext(try s.reopen()).fetch(FetchDescriptor<ConfPhoto>(sortBy: [SortDescriptor(\.title)])).map(\.title), ["none", "small"])
        },
    ]

    /// A container on a fresh store holding `objects`, saved.
    private static func savedContainer(_ env: ScenarioEnvironment, _ objects: [ConfEverything]) throws -> ModelContainer {
        let session = try env.store.fresh(Schema([ConfEverything.self]), env.scenario)
        let context = ModelContext(session.container)
        for object in objects { context.insert(object) }
        try context.save()
        return session.container
    }
}
