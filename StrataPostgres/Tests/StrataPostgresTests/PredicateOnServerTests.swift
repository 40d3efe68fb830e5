// The predicate and sort shapes of PredicateSQLTests, run on the real server: each fetch's
// answer (and its fetchCount, a COUNT(*) on the server) against Foundation's own answer,
// `Predicate.evaluate` and `sorted(using:)` on the very objects that were saved. The data holds
// what makes SQL and Swift part ways: NaN and infinities, NULLs, Int.min and Int.max, strings
// that differ only in normalization, case or LIKE's metacharacters, empty strings and
// collections, a missing owner and a missing owner's owner. A predicate the store does not
// translate is filtered in memory and must answer the same; the ones this file marks as pushed
// down must also still translate, so that none falls back to memory unnoticed.
import Foundation
import Testing
import Strata
@testable import StrataPostgres

/// Not `CaseIterable`: in a macro-free model, predicates on it are evaluated on objects.
enum PDStatus: String, Codable { case planned, active, done }
/// `CaseIterable`: the key-path probe confirms it, and predicates on it go to the server.
enum PDKind: String, Codable, CaseIterable { case walk, ride, sail }

final class PDOwner: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var age: Int? = nil
    @Relationship var boss: PDOwner? = nil
    init() {}
    init(_ name: String, age: Int?) { self.name = name; self.age = age }
}

final class PDTrip: PersistentModel {
    @Attribute(.unique) var serial: Int = 0
    @Attribute var name: String = ""
    @Attribute var nick: String? = nil
    @Attribute var budget: Double? = nil
    @Attribute var price: Double = 0
    @Attribute var rating: Int = 0
    @Attribute var stars: Int? = nil
    @Attribute var isPublished: Bool = false
    @Attribute var flag: Bool? = nil
    @Attribute var tags: [String] = []
    @Attribute var codes: Set<Int> = []
    @Attribute var status: PDStatus = .planned
    @Attribute var maybeStatus: PDStatus? = nil
    @Attribute var kind: PDKind = .walk
    @Attribute var maybeKind: PDKind? = nil
    @Attribute var start: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var amount: Decimal = 0
    @Attribute var blob: Data = Data()
    @Relationship var owner: PDOwner? = nil
    init() {}
}

/// The pools the trips' values are drawn from; trip `i` takes the `i`-th value of each pool
/// (modulo its size), the pools' sizes being distinct so that values meet in many combinations.
private enum Pools {
    static let names = ["", "a", "A", "ab", "Lisbon", " lisbon ", "Belém", "Bele\u{301}m", "café", "CAFÉ", "100%", "100x",
                        "a_b", "axb", "a\\b", "🇵🇹", "e\u{301}", "straße", "ﬁsh", "İstanbul", "x", "Ab"]
    static let nicks: [String?] = [nil, "", "x", "Belém", "xx", nil, "X"]
    static let budgets: [Double?] = [nil, 0, -0.0, 1.5, .nan, .infinity, -.infinity, 1e308, 2, nil, -1.5]
    static let prices: [Double] = [0, 1.5, .nan, -2, .infinity, 3, 1.5000001, -.infinity, 100]
    static let ratings = [Int.min, -1, 0, 1, 2, 3, 5, 7, Int.max, 3, 4, 6, 1]
    static let stars: [Int?] = [nil, 0, 3, 5, nil]
    static let flags: [Bool?] = [nil, true, false]
    static let tags: [[String]] = [[], ["a"], ["a", "b"], ["Belém"], ["a", "a"], ["b"], ["A"], ["%"]]
    static let codes: [Set<Int>] = [[], [1], [1, 2, 3], [2], [-1, 0]]
    static let statuses: [PDStatus] = [.planned, .active, .done, .active]
    static let maybeStatuses: [PDStatus?] = [nil, .active, .done]
    static let starts: [Double] = [0, 500, -500, 499.999, 500.001, 1e9, -1e9, 500, 86_400.5]
    static let amounts = ["0", "12.50", "-3", "12.5", "0.0001", "99999999999999.99", "12.51"]
    static let blobs: [Data] = [Data(), Data([0]), Data([1, 2, 3]), Data([0xFF])]
    static let owners: [(name: String, age: Int?, boss: Int?)?] = [nil, ("Ann", 30, nil), ("Bob", nil, 1), ("ann", 3, 2), ("Ann", nil, nil), ("Álvaro", 40, 4)]
}

@Suite struct PredicateOnServerTests {
    /// The saved trips (the writer's own objects, with the values as Swift holds them) and a
    /// reader on a fresh context of another container, so that every answer is the server's.
    private struct Scene {
        let originals: [PDTrip]
        let reader: ModelContext
        let store: PostgresStore
        let someUUID: UUID
    }

    private func scene(_ name: String = #function) throws -> Scene {
        let fixture = try PGFixture([PDTrip.self, PDOwner.self], name: name)
        let writer = ModelContext(try fixture.container())
        var owners: [PDOwner?] = []
        for spec in Pools.owners {
            guard let spec else { owners.append(nil); continue }
            let owner = PDOwner(spec.name, age: spec.age)
            writer.insert(owner)
            owners.append(owner)
        }
        for (i, spec) in Pools.owners.enumerated() {
            if let boss = spec?.boss { owners[i]?.boss = owners[boss] }
        }
        var generator = SQLTestRandom(seed: 0x5EED)
        var trips: [PDTrip] = []
        for i in 0..<60 {
            let trip = PDTrip()
            trip.serial = i
            trip.name = Pools.names[i % Pools.names.count]
            trip.nick = Pools.nicks[i % Pools.nicks.count]
            trip.budget = Pools.budgets[i % Pools.budgets.count]
            trip.price = Pools.prices[i % Pools.prices.count]
            trip.rating = Pools.ratings[i % Pools.ratings.count]
            trip.stars = Pools.stars[i % Pools.stars.count]
            trip.isPublished = i % 3 == 0
            trip.flag = Pools.flags[i % Pools.flags.count]
            trip.tags = Pools.tags[i % Pools.tags.count]
            trip.codes = Pools.codes[i % Pools.codes.count]
            trip.status = Pools.statuses[i % Pools.statuses.count]
            trip.maybeStatus = Pools.maybeStatuses[i % Pools.maybeStatuses.count]
            trip.kind = PDKind.allCases[i % 3]
            trip.maybeKind = i % 4 == 0 ? nil : PDKind.allCases[i % 3]
            trip.start = Date(timeIntervalSinceReferenceDate: Pools.starts[i % Pools.starts.count])
            var bytes = [UInt8](repeating: 0, count: 16)
            for b in 0..<16 { bytes[b] = UInt8.random(in: 0...255, using: &generator) }
            // Some share their first bytes, so that ordering reads past them.
            if i % 4 == 0 { bytes[0] = 0x80; bytes[1] = 0x00 }
            trip.uuid = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
            trip.amount = Decimal(string: Pools.amounts[i % Pools.amounts.count])!
            trip.blob = Pools.blobs[i % Pools.blobs.count]
            trip.owner = owners[i % owners.count]
            writer.insert(trip)
            trips.append(trip)
        }
        try writer.save()
        return Scene(originals: trips, reader: ModelContext(try fixture.container()),
                     store: try PostgresStore(fixture.configuration, migrationPlan: nil), someUUID: trips[8].uuid)
    }

    /// One predicate: the server's answer, fetched and counted, against Foundation's.
    private func expectSame(_ predicate: Predicate<PDTrip>, _ label: String, pushed: Bool = true, in scene: Scene,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = Set(try scene.originals.filter { try predicate.evaluate($0) }.map(\.serial))
        let fetched = try scene.reader.fetch(FetchDescriptor(predicate: predicate)).map(\.serial)
        #expect(Set(fetched) == expected, "\(label): the server's \(fetched.sorted()) against Foundation's \(expected.sorted())",
                sourceLocation: sourceLocation)
        #expect(fetched.count == Set(fetched).count, "\(label): an object fetched twice", sourceLocation: sourceLocation)
        #expect(try scene.reader.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "\(label): fetchCount",
                sourceLocation: sourceLocation)
        if pushed {
            #expect(PredicateSQL.condition(predicate, resolver: scene.store) != nil, "\(label) is no longer translated", sourceLocation: sourceLocation)
        }
    }

    @Test func comparisonsNumbersAndOptionalsAnswerAsFoundation() throws {
        let scene = try scene()
        let three = 3, minusOne = -1, biggest = Int.max, smallest = Int.min
        let oneAndAHalf = 1.5, notANumber = Double.nan, infinite = Double.infinity, zero = 0.0
        let checks: [(Predicate<PDTrip>, String)] = [
            (#Predicate { $0.rating == three }, "rating == 3"),
            (#Predicate { $0.rating != three }, "rating != 3"),
            (#Predicate { $0.rating < three }, "rating < 3"),
            (#Predicate { $0.rating <= three }, "rating <= 3"),
            (#Predicate { $0.rating > minusOne }, "rating > -1"),
            (#Predicate { $0.rating >= biggest }, "rating >= Int.max"),
            (#Predicate { $0.rating <= smallest }, "rating <= Int.min"),
            (#Predicate { three < $0.rating }, "3 < rating"),
            (#Predicate { $0.rating < $0.serial }, "rating < serial"),
            (#Predicate { $0.price > oneAndAHalf }, "price > 1.5"),
            (#Predicate { $0.price < oneAndAHalf }, "price < 1.5"),
            (#Predicate { $0.price <= oneAndAHalf }, "price <= 1.5"),
            (#Predicate { $0.price == notANumber }, "price == NaN"),
            (#Predicate { $0.price != notANumber }, "price != NaN"),
            (#Predicate { $0.price >= zero }, "price >= 0"),
            (#Predicate { $0.price < infinite }, "price < infinity"),
            (#Predicate { $0.price == infinite }, "price == infinity"),
            (#Predicate { !($0.price > oneAndAHalf) }, "!(price > 1.5)"),
            (#Predicate { $0.budget == nil }, "budget == nil"),
            (#Predicate { $0.budget != nil }, "budget != nil"),
            (#Predicate { $0.budget == oneAndAHalf }, "budget == 1.5"),
            (#Predicate { $0.budget != oneAndAHalf }, "budget != 1.5"),
            (#Predicate { $0.budget == zero }, "budget == 0 (and -0.0)"),
            (#Predicate { ($0.budget ?? zero) > oneAndAHalf }, "(budget ?? 0) > 1.5"),
            (#Predicate { ($0.budget ?? zero) == zero }, "(budget ?? 0) == 0"),
            (#Predicate { $0.budget.flatMap { $0 > oneAndAHalf } == true }, "budget.flatMap { > 1.5 } == true"),
            (#Predicate { $0.budget.flatMap { $0 > oneAndAHalf } == false }, "budget.flatMap { > 1.5 } == false"),
            (#Predicate { $0.budget.flatMap { $0 > oneAndAHalf } ?? true }, "budget.flatMap { > 1.5 } ?? true"),
            (#Predicate { $0.stars == nil }, "stars == nil"),
            (#Predicate { $0.stars == three }, "stars == 3"),
            (#Predicate { $0.stars != three }, "stars != 3"),
            (#Predicate { ($0.stars ?? 0) >= three }, "(stars ?? 0) >= 3"),
            (#Predicate { $0.isPublished }, "isPublished"),
            (#Predicate { !$0.isPublished }, "!isPublished"),
            (#Predicate { $0.isPublished == false }, "isPublished == false"),
            (#Predicate { $0.flag == true }, "flag == true"),
            (#Predicate { $0.flag != true }, "flag != true"),
            (#Predicate { $0.flag == nil }, "flag == nil"),
            (#Predicate { $0.flag ?? true }, "flag ?? true"),
            (#Predicate { !($0.flag ?? false) }, "!(flag ?? false)"),
            (#Predicate { $0.isPublished && $0.rating > 0 }, "isPublished && rating > 0"),
            (#Predicate { $0.isPublished || $0.budget == nil }, "isPublished || budget == nil"),
            (#Predicate { !($0.isPublished || $0.rating < 0) }, "!(isPublished || rating < 0)"),
            (#Predicate { $0.isPublished ? $0.rating > 2 : $0.price > oneAndAHalf }, "isPublished ? rating > 2 : price > 1.5"),
            (#Predicate { ($0.rating > 1) == ($0.price > 1) }, "(rating > 1) == (price > 1)"),
            (#Predicate { _ in true }, "true"),
        ]
        for (predicate, label) in checks { try expectSame(predicate, label, in: scene) }
    }

    @Test func stringsCollectionsAndOtherTypesAnswerAsFoundation() throws {
        let scene = try scene()
        let composed = "Belém", decomposed = "Bele\u{301}m", percent = "100%", underscore = "a_b", empty = ""
        let names = ["a", "Belém", "x", "missing"], ratings = [1, 3, 5], none: [Int] = [], prices = [1.5, Double.nan]
        let tag = "a", code = 1, status = PDStatus.active, kind = PDKind.ride
        let closed = 1...5, open = 1..<5
        let date = Date(timeIntervalSinceReferenceDate: 500)
        let uuid = scene.someUUID
        let amount = Decimal(string: "12.50")!
        let bytes = Data([1, 2, 3])
        let checks: [(Predicate<PDTrip>, String, Bool)] = [
            (#Predicate { $0.name == composed }, "name == Belém (NFC)", true),
            (#Predicate { $0.name == decomposed }, "name == Belém (NFD)", true),
            (#Predicate { $0.name != composed }, "name != Belém", true),
            (#Predicate { $0.name == empty }, "name == \"\"", true),
            (#Predicate { $0.name.isEmpty }, "name.isEmpty", true),
            (#Predicate { $0.name.contains("a") }, "name.contains(a)", true),
            (#Predicate { $0.name.contains(percent) }, "name.contains(100%)", true),
            (#Predicate { $0.name.contains(underscore) }, "name.contains(a_b)", true),
            (#Predicate { $0.name.contains("\\") }, "name.contains(\\)", true),
            (#Predicate { $0.name.contains("") }, "name.contains(\"\")", true),
            (#Predicate { $0.name.contains("é") }, "name.contains(é)", false),
            (#Predicate { $0.name.starts(with: "B") }, "name.starts(with: B)", true),
            (#Predicate { $0.name.starts(with: "") }, "name.starts(with: \"\")", true),
            (#Predicate { $0.name.starts(with: "e") }, "name.starts(with: e), e + accent in the data", true),
            (#Predicate { $0.nick == nil }, "nick == nil", true),
            (#Predicate { $0.nick == "x" }, "nick == x", true),
            (#Predicate { $0.nick != "x" }, "nick != x", true),
            (#Predicate { $0.nick?.contains("x") == true }, "nick?.contains(x) == true", true),
            (#Predicate { names.contains($0.name) }, "names.contains(name)", true),
            (#Predicate { ratings.contains($0.rating) }, "[1, 3, 5].contains(rating)", true),
            (#Predicate { none.contains($0.rating) }, "[].contains(rating)", true),
            (#Predicate { prices.contains($0.price) }, "[1.5, NaN].contains(price)", true),
            (#Predicate { $0.tags.contains(tag) }, "tags.contains(a)", true),
            (#Predicate { $0.tags.isEmpty }, "tags.isEmpty", true),
            (#Predicate { $0.tags.count > 1 }, "tags.count > 1", true),
            (#Predicate { $0.codes.contains(code) }, "codes.contains(1)", true),
            (#Predicate { $0.codes.isEmpty }, "codes.isEmpty", true),
            (#Predicate { $0.status == status }, "status == active (not CaseIterable)", false),
            (#Predicate { $0.maybeStatus == status }, "maybeStatus == active", true),
            (#Predicate { $0.maybeStatus == nil }, "maybeStatus == nil", true),
            (#Predicate { $0.kind == kind }, "kind == ride", true),
            (#Predicate { $0.kind != kind }, "kind != ride", true),
            (#Predicate { $0.maybeKind == kind }, "maybeKind == ride", true),
            (#Predicate { $0.maybeKind == nil }, "maybeKind == nil", true),
            (#Predicate { (1...5).contains($0.rating) }, "(1...5).contains(rating)", true),
            (#Predicate { closed.contains($0.rating) }, "captured 1...5", true),
            (#Predicate { open.contains($0.rating) }, "captured 1..<5", true),
            (#Predicate { $0.start > date }, "start > 500", true),
            (#Predicate { $0.start <= date }, "start <= 500", true),
            (#Predicate { $0.start == date }, "start == 500", true),
            (#Predicate { $0.uuid == uuid }, "uuid == one", true),
            (#Predicate { $0.uuid != uuid }, "uuid != one", true),
            (#Predicate { $0.amount > amount }, "amount > 12.50", true),
            (#Predicate { $0.amount == amount }, "amount == 12.50 (and 12.5)", true),
            (#Predicate { $0.blob.isEmpty }, "blob.isEmpty", true),
            (#Predicate { $0.blob == bytes }, "blob == [1, 2, 3]", true),
            (#Predicate { $0.owner == nil }, "owner == nil", true),
            (#Predicate { $0.owner != nil }, "owner != nil", true),
            (#Predicate { $0.owner?.name == "Ann" }, "owner?.name == Ann", true),
            (#Predicate { $0.owner?.name != "Ann" }, "owner?.name != Ann", true),
            (#Predicate { $0.owner?.age == nil }, "owner?.age == nil", true),
            (#Predicate { $0.owner?.age == 30 }, "owner?.age == 30", true),
            (#Predicate { ($0.owner?.age ?? 0) > 3 }, "(owner?.age ?? 0) > 3", true),
            (#Predicate { $0.owner?.boss?.name == "Ann" }, "owner?.boss?.name == Ann", true),
            (#Predicate { $0.owner.flatMap { $0.name.starts(with: "A") } == true }, "owner.flatMap { name.starts(with: A) } == true", true),
            (#Predicate { names.contains($0.owner.flatMap { $0.name } ?? "") }, "names.contains(owner.flatMap { name } ?? \"\")", false),
        ]
        for (predicate, label, pushed) in checks { try expectSame(predicate, label, pushed: pushed, in: scene) }
    }

    /// `delete(model:where:)` takes the same translation to a `DELETE … WHERE`, where a wrong
    /// answer loses rows: one delete after another, each must remove exactly the rows (still
    /// there) that Foundation's `evaluate` matches on the saved objects.
    @Test func batchDeletesRemoveExactlyWhatFoundationMatches() throws {
        let scene = try scene()
        let notANumber = Double.nan, oneAndAHalf = 1.5, three = 3
        let percent = "100%", decomposed = "Bele\u{301}m", tag = "a", code = 1
        let kind = PDKind.ride, status = PDStatus.active
        let deletes: [(Predicate<PDTrip>, String)] = [
            (#Predicate { $0.price == notANumber }, "price == NaN (none)"),
            (#Predicate { !($0.price > oneAndAHalf) && $0.rating > three }, "!(price > 1.5) && rating > 3"),
            (#Predicate { $0.budget == nil && $0.isPublished }, "budget == nil && isPublished"),
            (#Predicate { $0.name.contains(percent) }, "name.contains(100%)"),
            (#Predicate { $0.name == decomposed }, "name == Belém (NFD, and so NFC)"),
            (#Predicate { $0.owner?.name == "Ann" }, "owner?.name == Ann"),
            (#Predicate { $0.tags.contains(tag) && $0.codes.contains(code) }, "tags.contains(a) && codes.contains(1)"),
            (#Predicate { ($0.stars ?? 0) >= three }, "(stars ?? 0) >= 3"),
            (#Predicate { $0.flag ?? false }, "flag ?? false"),
            (#Predicate { $0.kind == kind }, "kind == ride"),
            (#Predicate { $0.status == status }, "status == active (evaluated on objects)"),
            (#Predicate { _ in true }, "the rest"),
        ]
        var remaining = Set(scene.originals.map(\.serial))
        for (predicate, label) in deletes {
            let matched = Set(try scene.originals.filter { try predicate.evaluate($0) }.map(\.serial))
            let context = ModelContext(scene.reader.container)
            try context.delete(model: PDTrip.self, where: predicate)
            try context.save()
            remaining.subtract(matched)
            let left = Set(try ModelContext(scene.reader.container).fetch(FetchDescriptor<PDTrip>()).map(\.serial))
            #expect(left == remaining, "after deleting \(label): \(left.sorted()) left, not \(remaining.sorted())")
            remaining = left
        }
        #expect(remaining.isEmpty)
    }

    /// Sorts pushed down (numbers, optionals with their NULLs, dates, UUIDs, decimals, both
    /// orders), with limits and offsets, against `sorted(using:)` on the saved objects.
    @Test func sortsLimitsAndOffsetsAnswerAsFoundation() throws {
        let scene = try scene()
        let sorts: [([SortDescriptor<PDTrip>], String)] = [
            ([SortDescriptor(\.rating), SortDescriptor(\.serial)], "rating"),
            ([SortDescriptor(\.rating, order: .reverse), SortDescriptor(\.serial)], "rating, reverse"),
            ([SortDescriptor(\.stars), SortDescriptor(\.serial)], "stars (nil first)"),
            ([SortDescriptor(\.stars, order: .reverse), SortDescriptor(\.serial, order: .reverse)], "stars, reverse"),
            ([SortDescriptor(\.start), SortDescriptor(\.serial)], "start"),
            ([SortDescriptor(\.uuid)], "uuid"),
            ([SortDescriptor(\.amount), SortDescriptor(\.serial)], "amount"),
            ([SortDescriptor(\.name), SortDescriptor(\.serial)], "name (in memory)"),
        ]
        let published = #Predicate<PDTrip> { $0.isPublished || $0.rating > 2 }
        for (sortBy, label) in sorts {
            let all = scene.originals.sorted(using: sortBy).map(\.serial)
            #expect(try scene.reader.fetch(FetchDescriptor(sortBy: sortBy)).map(\.serial) == all, "\(label)")
            var page = FetchDescriptor(sortBy: sortBy)
            page.fetchOffset = 7
            page.fetchLimit = 11
            #expect(try scene.reader.fetch(page).map(\.serial) == Array(all.dropFirst(7).prefix(11)), "\(label), offset 7, limit 11")
            let some = try scene.originals.filter { try published.evaluate($0) }.sorted(using: sortBy).map(\.serial)
            var filtered = FetchDescriptor(predicate: published, sortBy: sortBy)
            filtered.fetchOffset = 3
            filtered.fetchLimit = 5
            #expect(try scene.reader.fetch(filtered).map(\.serial) == Array(some.dropFirst(3).prefix(5)), "\(label), filtered, offset 3, limit 5")
        }
    }
}
