// Tests of the Predicate/SortDescriptor → SQL translator (Sources/StrataPostgres/SQL), without
// a server: the SQL text and binds of each predicate shape, nil for what must stay in memory,
// and the Swift facts the translation relies on (checked against Foundation on this platform).
// The text conditions are also evaluated here (LIKE, the ASCII test, the bound regular
// expression run by NSRegularExpression, NFC) on a corpus of tricky strings and compared with
// `Predicate.evaluate`.
//
// Predicate shapes covered, for server-side differential tests (each was also run on
// PostgreSQL 15, C.UTF-8 and ICU en-US databases, against Foundation's answer and the answer's
// complement under NOT). "c" is a captured constant, `opt` an optional attribute, `owner` a
// to-one relationship, `tags` a [String] attribute, `codes` a Set<Int>:
//
//   Comparisons      $0.int == c, != c, < c, <= c, > c, >= c; c < $0.int (either side);
//                    $0.double op c with NaN rows (guard), $0.double == .nan (FALSE), != .nan (TRUE);
//                    $0.date op c with NaN dates (Date's <= and >= are true for NaN);
//                    $0.date op $0.date; $0.decimal op c with NaN rows (Decimal: NaN first);
//                    $0.uuid < c; $0.url == c; $0.data == c; $0.data.isEmpty, .count;
//                    $0.a == $0.b, $0.a < $0.b (two columns; not strings); $0.opt == $0.owner?.age.
//   Optionals        $0.opt == nil, != nil, == c, != c; ($0.opt ?? d) > c; ($0.opt ?? d) == c;
//                    ($0.opt ?? $0.other) > c; $0.opt.flatMap { $0 > c } == true / == false /
//                    == nil / != true / ?? false / ?? true; $0.flag == true, ?? true, !(?? false).
//   Bool and logic   $0.bool, !$0.bool, $0.bool == false, $0.b1 == $0.b2, &&, ||, !, nested;
//                    (a > 1) == (b > 1); a ? b : c; #Predicate { _ in true }; folded constants.
//   Strings          $0.name == "ascii", != ; == "with K ; `" (translate); == "Belém" (normalize);
//                    $0.opt == "x", != "x"; $0.name.contains("x"), .starts(with: "x"),
//                    .contains(""); $0.opt?.contains("x") == true; $0.name.isEmpty;
//                    nil for: non-ASCII contains and prefixes, localizedStandardContains, <, count,
//                    constants with characters newer than Unicode 12.1.
//   Collections      [1, 2].contains($0.int); ["a", "b"].contains($0.name); ["a", "é"].contains;
//                    [1.5, .nan].contains($0.double); [UUID].contains; [Int?].contains($0.opt);
//                    [].contains (FALSE); [enum].contains($0.enum); $0.tags.contains("x"),
//                    $0.codes.contains(3), $0.scores.contains(0.5), .isEmpty, .count > 2,
//                    $0.tags == [..], $0.codes == [..]; enum == c, optional enum == c / == nil;
//                    (1...5).contains($0.int), (1..<5), captured ranges, 3..., ...3.
//   Identifiers      $0.persistentModelID == id / != id (of this store, of another store, of
//                    another model: nil); ids.contains($0.persistentModelID).
//   Relationships    $0.owner == nil, != nil; $0.owner?.name == "x", != "x", == nil;
//                    $0.owner?.age == nil, == 30; ($0.owner?.name ?? "") == "x";
//                    ($0.owner?.age ?? 0) > 3, < 3; $0.owner?.persistentModelID == id;
//                    $0.owner?.boss?.name == "x"; $0.owner.flatMap { $0.name.starts(with: "A") }
//                    == true; flatMap { == } == false, ?? true; names.contains($0.owner?.name).
//   Prefilter        the translatable top-level && terms of a predicate (a superset).
//   Not translated   to-many (.count, .isEmpty, contains(where:)), arithmetic on columns,
//                    forced unwraps of attributes, string ordering and string sorts.
//   Sorts            ints, doubles, floats, dates, UUID, Decimal (NaN first), optionals
//                    (NULLS FIRST / LAST), reverse, several keys; nil for strings, comparators,
//                    unknown key paths, UInt64 in a bigint column.

import Foundation
import Strata
import Testing
@testable import StrataPostgres

// MARK: - Models and resolver

enum SQLTestStatus: String, Codable { case planned, active, done }

final class SQLTestOwner: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var age: Int? = nil
    @Relationship var boss: SQLTestOwner? = nil
    init() {}
}

final class SQLTestTrip: PersistentModel {
    @Attribute var name: String = ""
    @Attribute var nick: String? = nil
    @Attribute var budget: Double? = nil
    @Attribute var price: Double = 0
    @Attribute var cost: Double = 0
    @Attribute var weight: Float = 0
    @Attribute var rating: Int = 0
    @Attribute var level: Int = 0
    @Attribute var stars: Int? = nil
    @Attribute var small: Int8 = 0
    @Attribute var big: UInt64 = 0
    @Attribute var huge: UInt64 = 0
    @Attribute var isPublished: Bool = false
    @Attribute var isArchived: Bool = false
    @Attribute var flag: Bool? = nil
    @Attribute var tags: [String] = []
    @Attribute var codes: Set<Int> = []
    @Attribute var scores: [Double] = []
    @Attribute var status: SQLTestStatus = .planned
    @Attribute var maybeStatus: SQLTestStatus? = nil
    @Attribute var start: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var end: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var amount: Decimal = 0
    @Attribute var link: URL = URL(string: "https://example.com")!
    @Attribute var blob: Data = Data()
    @Attribute var unmapped: Int = 0
    @Relationship var owner: SQLTestOwner? = nil
    @Relationship var stops: [SQLTestOwner] = []
    init() {}
    init(name: String) { self.name = name }
}

/// Columns named after the properties, in tables "s"."SQLTestTrip" and "s"."SQLTestOwner", with
/// primary key "_id"; identifiers of store "pg" whose primary key is an integer are ours.
struct SQLTestResolver: SQLModelResolver {
    static var tripColumns: [AnyKeyPath: (String, ColumnKind, Bool)] {
        [\SQLTestTrip.name: ("name", .text, false), \SQLTestTrip.nick: ("nick", .text, true),
         \SQLTestTrip.budget: ("budget", .double, true), \SQLTestTrip.price: ("price", .double, false),
         \SQLTestTrip.cost: ("cost", .double, false), \SQLTestTrip.weight: ("weight", .double, false),
         \SQLTestTrip.rating: ("rating", .bigint, false), \SQLTestTrip.level: ("level", .bigint, false),
         \SQLTestTrip.stars: ("stars", .bigint, true), \SQLTestTrip.small: ("small", .bigint, false),
         \SQLTestTrip.big: ("big", .bigint, false), \SQLTestTrip.huge: ("huge", .numeric, false), \SQLTestTrip.isPublished: ("isPublished", .boolean, false),
         \SQLTestTrip.isArchived: ("isArchived", .boolean, false), \SQLTestTrip.flag: ("flag", .boolean, true),
         \SQLTestTrip.tags: ("tags", .jsonb, false), \SQLTestTrip.codes: ("codes", .jsonb, false),
         \SQLTestTrip.scores: ("scores", .jsonb, false), \SQLTestTrip.status: ("status", .jsonb, false),
         \SQLTestTrip.maybeStatus: ("maybeStatus", .jsonb, true), \SQLTestTrip.start: ("start", .date, false),
         \SQLTestTrip.end: ("end", .date, false), \SQLTestTrip.uuid: ("uuid", .uuid, false),
         \SQLTestTrip.amount: ("amount", .numeric, false), \SQLTestTrip.link: ("link", .url, false),
         \SQLTestTrip.blob: ("blob", .bytea, false)]
    }
    static var ownerColumns: [AnyKeyPath: (String, ColumnKind, Bool)] {
        [\SQLTestOwner.name: ("name", .text, false), \SQLTestOwner.age: ("age", .bigint, true)]
    }

    func column(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> ColumnInfo? {
        let columns = modelType == SQLTestTrip.self ? Self.tripColumns : modelType == SQLTestOwner.self ? Self.ownerColumns : [:]
        guard let (name, kind, optional) = columns[keyPath] else { return nil }
        return ColumnInfo(sql: "\(alias).\"\(name)\"", kind: kind, isOptional: optional)
    }

    func toOne(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> (foreignKey: String, target: any PersistentModel.Type, table: String)? {
        if keyPath == \SQLTestTrip.owner { return ("\(alias).\"owner_id\"", SQLTestOwner.self, "\"s\".\"SQLTestOwner\"") }
        if keyPath == \SQLTestOwner.boss { return ("\(alias).\"boss_id\"", SQLTestOwner.self, "\"s\".\"SQLTestOwner\"") }
        return nil
    }

    func identifierColumn(for keyPath: AnyKeyPath, of modelType: Any.Type, alias: String) -> String? {
        keyPath == \SQLTestTrip.persistentModelID || keyPath == \SQLTestOwner.persistentModelID ? "\(alias).\"_id\"" : nil
    }

    func primaryKey(of id: PersistentIdentifier) -> Int64? {
        guard id.storeIdentifier == "pg" else { return nil }
        return id.primaryKey.flatMap { Int64($0) }
    }
}

private func translated(_ predicate: Predicate<SQLTestTrip>, first: Int = 1) -> SQLFragment? {
    PredicateSQL.condition(predicate, resolver: SQLTestResolver(), firstParameter: first)
}

private func orderBy(_ sortBy: [SortDescriptor<SQLTestTrip>]) -> String? {
    PredicateSQL.order(sortBy, resolver: SQLTestResolver())
}

/// Expects the predicate's SQL text and binds.
private func expectTranslation(_ predicate: Predicate<SQLTestTrip>, _ text: String, _ binds: [SQLValue] = [],
                       sourceLocation: SourceLocation = #_sourceLocation) {
    let fragment = translated(predicate)
    #expect(fragment?.text == text, sourceLocation: sourceLocation)
    #expect(fragment?.binds == binds, sourceLocation: sourceLocation)
}

/// Expects no SQL for the predicate.
private func expectNoTranslation(_ predicate: Predicate<SQLTestTrip>, sourceLocation: SourceLocation = #_sourceLocation) {
    let fragment = translated(predicate)
    #expect(fragment == nil, "\(fragment?.text ?? "")", sourceLocation: sourceLocation)
}

private func testTripID(_ key: Int64, store: String = "pg") throws -> PersistentIdentifier {
    try PersistentIdentifier.identifier(for: store, entityName: "SQLTestTrip", primaryKey: key)
}

private func testOwnerID(_ key: Int64) throws -> PersistentIdentifier {
    try PersistentIdentifier.identifier(for: "pg", entityName: "SQLTestOwner", primaryKey: key)
}

private func containsPattern(_ c: String) -> String { SQLGraphemes.notAfterPrepend + c + SQLGraphemes.notBeforeExtend }
private func startsWithPattern(_ c: String) -> String { "^" + c + SQLGraphemes.notBeforeExtend }

// MARK: - Predicates

@Suite struct PredicateSQLTests {
    @Test func comparisonsWithConstantsOnEitherSide() {
        let three = 3
        expectTranslation(#Predicate { $0.rating == 3 }, #"t0."rating" = $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating != 3 }, #"t0."rating" <> $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating < three }, #"t0."rating" < $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating <= 3 }, #"t0."rating" <= $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating > 3 }, #"t0."rating" > $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating >= 3 }, #"t0."rating" >= $1"#, [.int(3)])
        expectTranslation(#Predicate { 3 < $0.rating }, #"t0."rating" > $1"#, [.int(3)])
        expectTranslation(#Predicate { 3 >= $0.rating }, #"t0."rating" <= $1"#, [.int(3)])
        expectTranslation(#Predicate { 3 == $0.rating }, #"t0."rating" = $1"#, [.int(3)])
        expectTranslation(#Predicate { $0.rating == -1 }, #"t0."rating" = $1"#, [.int(-1)])
        expectTranslation(#Predicate { $0.small > 2 }, #"t0."small" > $1"#, [.int(2)])
    }

    @Test func doublesGuardAgainstNaN() {
        // (Not named `nan`: the compiler warns of every comparison with a value of that name,
        // which these predicates make on purpose.)
        let notANumber = Double.nan
        expectTranslation(#Predicate { $0.price > 3 }, #"(t0."price" > $1 AND t0."price" <> 'NaN'::float8)"#, [.double(3)])
        expectTranslation(#Predicate { $0.price >= 3 }, #"(t0."price" >= $1 AND t0."price" <> 'NaN'::float8)"#, [.double(3)])
        expectTranslation(#Predicate { $0.price < 3 }, #"t0."price" < $1"#, [.double(3)])
        expectTranslation(#Predicate { 3 < $0.price }, #"(t0."price" > $1 AND t0."price" <> 'NaN'::float8)"#, [.double(3)])
        expectTranslation(#Predicate { $0.price == 3 }, #"t0."price" = $1"#, [.double(3)])
        expectTranslation(#Predicate { $0.price != 3 }, #"t0."price" <> $1"#, [.double(3)])
        expectTranslation(#Predicate { $0.price == notANumber }, "FALSE")
        expectTranslation(#Predicate { $0.price != notANumber }, "TRUE")
        expectTranslation(#Predicate { $0.price < notANumber }, "FALSE")
        expectTranslation(#Predicate { $0.budget == notANumber }, "FALSE")
        expectTranslation(#Predicate { $0.budget != notANumber }, "TRUE")
        expectTranslation(#Predicate { $0.weight > 1.5 }, #"(t0."weight" > $1 AND t0."weight" <> 'NaN'::float8)"#, [.double(1.5)])
        // Two double columns: NaN = NaN is true in PostgreSQL, false in Swift.
        expectTranslation(#Predicate { $0.price == $0.cost }, #"(t0."price" = t0."cost" AND t0."price" <> 'NaN'::float8)"#)
        expectTranslation(#Predicate { $0.price < $0.cost },
                  #"(t0."price" < t0."cost" AND t0."price" <> 'NaN'::float8 AND t0."cost" <> 'NaN'::float8)"#)
    }

    @Test func foundationComparesNaNAsTheSQLAssumes() throws {
        func ops<T: Comparable>(_ a: T, _ b: T) -> [Bool] { [a < b, a <= b, a > b, a >= b, a == b] }
        let nanDate = Date(timeIntervalSinceReferenceDate: .nan), date = Date(timeIntervalSinceReferenceDate: 50)
        #expect(ops(nanDate, date) == [false, true, false, true, false])
        #expect(ops(date, nanDate) == [false, true, false, true, false])
        #expect(ops(Double.nan, 50) == [false, false, false, false, false])
        #expect(ops(Float.nan, 50) == [false, false, false, false, false])
        #expect(ops(Decimal.nan, 50) == [true, true, false, false, false])
        #expect(ops(Decimal(50), Decimal.nan) == [false, false, true, true, false])
        #expect(Decimal.nan == Decimal.nan)

        let trip = SQLTestTrip()
        trip.price = .nan
        let predicates: [Predicate<SQLTestTrip>] = [#Predicate { $0.price < 3 }, #Predicate { $0.price <= 3 }, #Predicate { $0.price > 3 },
                                                 #Predicate { $0.price >= 3 }, #Predicate { $0.price == 3 }]
        for predicate in predicates {
            #expect(try predicate.evaluate(trip) == false)
        }
        #expect(try #Predicate<SQLTestTrip> { $0.price != 3 }.evaluate(trip))
    }

    @Test func otherValueTypes() throws {
        let date = Date(timeIntervalSinceReferenceDate: 1000.5)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let amount = Decimal(string: "12.50")!
        let url = URL(string: "https://example.com/a?b=c")!
        let relative = URL(string: "a", relativeTo: URL(string: "https://example.com/")!)!
        let blob = Data([1, 2, 3])
        expectTranslation(#Predicate { $0.start < date }, #"t0."start" < $1"#, [.double(1000.5)])
        // Date's `<=` and `>=` are Comparable's `!(b < a)` and `!(a < b)`: true for NaN.
        let nanDate = Date(timeIntervalSinceReferenceDate: .nan)
        expectTranslation(#Predicate { $0.start >= date }, #"t0."start" >= $1"#, [.double(1000.5)])
        expectTranslation(#Predicate { $0.start <= date }, #"(t0."start" <= $1 OR t0."start" = 'NaN'::float8)"#, [.double(1000.5)])
        expectTranslation(#Predicate { $0.start > date }, #"(t0."start" > $1 AND t0."start" <> 'NaN'::float8)"#, [.double(1000.5)])
        expectTranslation(#Predicate { $0.start <= nanDate }, "TRUE")
        expectTranslation(#Predicate { $0.start < nanDate }, "FALSE")
        expectTranslation(#Predicate { $0.start < $0.end },
                  #"(t0."start" < t0."end" AND t0."start" <> 'NaN'::float8 AND t0."end" <> 'NaN'::float8)"#)
        expectTranslation(#Predicate { $0.start >= $0.end },
                  #"NOT (t0."start" < t0."end" AND t0."start" <> 'NaN'::float8 AND t0."end" <> 'NaN'::float8)"#)
        expectTranslation(#Predicate { $0.start == $0.end }, #"(t0."start" = t0."end" AND t0."start" <> 'NaN'::float8)"#)
        expectTranslation(#Predicate { $0.uuid == uuid }, #"t0."uuid" = $1"#, [.uuid(uuid)])
        expectTranslation(#Predicate { $0.uuid < uuid }, #"t0."uuid" < $1"#, [.uuid(uuid)])
        // Decimal orders NaN below every number; PostgreSQL above.
        expectTranslation(#Predicate { $0.amount >= amount }, #"(t0."amount" >= $1::numeric AND t0."amount" <> 'NaN'::numeric)"#, [.numeric("12.5")])
        expectTranslation(#Predicate { $0.amount < amount }, #"(t0."amount" < $1::numeric OR t0."amount" = 'NaN'::numeric)"#, [.numeric("12.5")])
        expectTranslation(#Predicate { $0.amount == amount }, #"t0."amount" = $1::numeric"#, [.numeric("12.5")])
        let nanAmount = Decimal.nan
        expectNoTranslation(#Predicate { $0.amount == nanAmount })
        expectNoTranslation(#Predicate { $0.amount < $0.amount })
        expectTranslation(#Predicate { $0.link == url }, #"t0."link" = $1"#, [.text("https://example.com/a?b=c")])
        expectNoTranslation(#Predicate { $0.link == relative })   // Swift compares the base URL too
        expectTranslation(#Predicate { $0.blob == blob }, #"t0."blob" = $1"#, [.bytes([1, 2, 3])])
        expectTranslation(#Predicate { $0.blob.isEmpty }, #"octet_length(t0."blob") = 0"#)
        expectTranslation(#Predicate { $0.blob.count > 2 }, #"octet_length(t0."blob") > $1"#, [.int(2)])
        expectTranslation(#Predicate { $0.blob != $0.blob }, #"NOT (t0."blob" = t0."blob")"#)
        expectNoTranslation(#Predicate { $0.link == $0.link })
        expectNoTranslation(#Predicate { $0.name == $0.name })
        let big = UInt64.max
        expectTranslation(#Predicate { $0.big == 3 }, #"t0."big" = $1"#, [.int(3)])
        expectNoTranslation(#Predicate { $0.big == big })   // does not fit a bigint
        expectNoTranslation(#Predicate { $0.big > 3 })      // UInt64 order is not bigint order
        // In a numeric column (how the store keeps UInt and UInt64), every value fits and orders.
        expectTranslation(#Predicate { $0.huge > big }, #"t0."huge" > $1::numeric"#, [.numeric("18446744073709551615")])
        expectTranslation(#Predicate { [big, 1].contains($0.huge) }, #"t0."huge" IN ($1::numeric, $2::numeric)"#,
                          [.numeric("18446744073709551615"), .numeric("1")])
        #expect(orderBy([SortDescriptor(\.huge)]) == #"t0."huge" ASC"#)
        expectTranslation(#Predicate { $0.rating == $0.level }, #"t0."rating" = t0."level""#)
        expectTranslation(#Predicate { $0.rating != $0.level }, #"NOT (t0."rating" = t0."level")"#)
        expectTranslation(#Predicate { $0.rating >= $0.level }, #"t0."rating" >= t0."level""#)
        expectTranslation(#Predicate { $0.stars == $0.owner.flatMap { $0.age } }, #"t0."stars" IS NOT DISTINCT FROM (SELECT t1."age" FROM "s"."SQLTestOwner" t1 WHERE t1."_id" = t0."owner_id")"#)
    }

    @Test func optionals() {
        expectTranslation(#Predicate { $0.budget == nil }, #"t0."budget" IS NULL"#)
        expectTranslation(#Predicate { $0.budget != nil }, #"t0."budget" IS NOT NULL"#)
        expectTranslation(#Predicate { nil == $0.budget }, #"t0."budget" IS NULL"#)
        expectTranslation(#Predicate { $0.budget == 5 }, #"(t0."budget" IS NOT NULL AND t0."budget" = $1)"#, [.double(5)])
        expectTranslation(#Predicate { $0.budget != 5 }, #"(t0."budget" IS NULL OR t0."budget" <> $1)"#, [.double(5)])
        let none: Double? = nil
        expectTranslation(#Predicate { $0.budget == none }, #"t0."budget" IS NULL"#)
        expectTranslation(#Predicate { $0.nick == "x" }, #"(t0."nick" IS NOT NULL AND t0."nick" = $1)"#, [.text("x")])
        expectTranslation(#Predicate { $0.nick != "x" }, #"(t0."nick" IS NULL OR t0."nick" <> $1)"#, [.text("x")])
    }

    @Test func nilCoalescingComparesTheFallbackInSwift() {
        // (nil ?? 0) > 10 is false: rows without a budget are out.
        expectTranslation(#Predicate { ($0.budget ?? 0) > 10 },
                  #"(t0."budget" IS NOT NULL AND (t0."budget" > $1 AND t0."budget" <> 'NaN'::float8))"#, [.double(10)])
        // (nil ?? 20) > 10 is true: rows without a budget are in.
        expectTranslation(#Predicate { ($0.budget ?? 20) > 10 },
                  #"(t0."budget" IS NULL OR (t0."budget" > $1 AND t0."budget" <> 'NaN'::float8))"#, [.double(10)])
        expectTranslation(#Predicate { ($0.nick ?? "") == "x" }, #"(t0."nick" IS NOT NULL AND t0."nick" = $1)"#, [.text("x")])
        expectTranslation(#Predicate { ($0.nick ?? "") != "x" }, #"(t0."nick" IS NULL OR t0."nick" <> $1)"#, [.text("x")])
        expectTranslation(#Predicate { ($0.stars ?? 0) == 0 }, #"(t0."stars" IS NULL OR t0."stars" = $1)"#, [.int(0)])
        expectTranslation(#Predicate { 3 < ($0.stars ?? 0) }, #"(t0."stars" IS NOT NULL AND t0."stars" > $1)"#, [.int(3)])
        // Two columns: COALESCE.
        expectTranslation(#Predicate { ($0.stars ?? $0.rating) > 2 }, #"COALESCE(t0."stars", t0."rating") > $1"#, [.int(2)])
        expectTranslation(#Predicate { [1, 2].contains($0.stars ?? 0) }, #"COALESCE(t0."stars", $1) = ANY($2::int8[])"#,
                  [.int(0), .intArray([1, 2])])
    }

    @Test func optionalFlatMap() {
        let over = #"(t0."budget" > $1 AND t0."budget" <> 'NaN'::float8)"#
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } == true }, #"(t0."budget" IS NOT NULL AND \#(over))"#, [.double(10)])
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } ?? false }, #"(t0."budget" IS NOT NULL AND \#(over))"#, [.double(10)])
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } == false }, #"(t0."budget" IS NOT NULL AND NOT \#(over))"#, [.double(10)])
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } == nil }, #"t0."budget" IS NULL"#)
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } ?? true }, #"NOT (t0."budget" IS NOT NULL AND NOT \#(over))"#, [.double(10)])
        expectTranslation(#Predicate { $0.budget.flatMap { $0 > 10 } != true }, #"NOT (t0."budget" IS NOT NULL AND \#(over))"#, [.double(10)])
        expectTranslation(#Predicate { $0.nick.flatMap { $0.isEmpty } == true }, #"(t0."nick" IS NOT NULL AND t0."nick" = '')"#)
    }

    @Test func boolsAndLogic() {
        expectTranslation(#Predicate { $0.isPublished }, #"t0."isPublished""#)
        expectTranslation(#Predicate { !$0.isPublished }, #"NOT t0."isPublished""#)
        expectTranslation(#Predicate { $0.isPublished == false }, #"t0."isPublished" = $1"#, [.bool(false)])
        expectTranslation(#Predicate { $0.isPublished == $0.isArchived }, #"t0."isPublished" = t0."isArchived""#)
        expectTranslation(#Predicate { $0.isPublished && $0.rating > 3 }, #"(t0."isPublished" AND t0."rating" > $1)"#, [.int(3)])
        expectTranslation(#Predicate { !$0.isPublished && $0.rating > 3 || $0.rating < 1 },
                  #"((NOT t0."isPublished" AND t0."rating" > $1) OR t0."rating" < $2)"#, [.int(3), .int(1)])
        expectTranslation(#Predicate { !($0.rating > 3 || $0.budget == nil) }, #"NOT (t0."rating" > $1 OR t0."budget" IS NULL)"#, [.int(3)])
        expectTranslation(#Predicate { !($0.budget == 5) }, #"NOT (t0."budget" IS NOT NULL AND t0."budget" = $1)"#, [.double(5)])
        expectTranslation(#Predicate { ($0.rating > 3) == ($0.level > 3) }, #"((t0."rating" > $1) = (t0."level" > $2))"#, [.int(3), .int(3)])
        expectTranslation(#Predicate { $0.flag == true }, #"(t0."flag" IS NOT NULL AND t0."flag" = $1)"#, [.bool(true)])
        expectTranslation(#Predicate { $0.flag != true }, #"(t0."flag" IS NULL OR t0."flag" <> $1)"#, [.bool(true)])
        expectTranslation(#Predicate { $0.flag ?? true }, #"(t0."flag" IS NULL OR t0."flag")"#)
        expectTranslation(#Predicate { $0.flag ?? false }, #"(t0."flag" IS NOT NULL AND t0."flag")"#)
        expectTranslation(#Predicate { !($0.flag ?? false) }, #"NOT (t0."flag" IS NOT NULL AND t0."flag")"#)
        expectTranslation(#Predicate { $0.rating == 1 ? $0.isPublished : !$0.isPublished },
                  #"((t0."rating" = $1 AND t0."isPublished") OR (NOT (t0."rating" = $2) AND NOT t0."isPublished"))"#, [.int(1), .int(1)])
        expectTranslation(#Predicate { _ in true }, "TRUE")
        expectTranslation(#Predicate { _ in false }, "FALSE")
        let on = true
        expectTranslation(#Predicate { on && $0.isPublished }, #"t0."isPublished""#)
        expectTranslation(#Predicate { on || $0.isPublished }, "TRUE")
        expectTranslation(#Predicate { on ? $0.rating > 1 : $0.rating < 1 }, #"t0."rating" > $1"#, [.int(1)])
    }

    @Test func constantsAreFoldedAsSwiftComputesThem() {
        let limit = 10
        struct Place: Codable, Sendable { var name: String }
        let trip = Place(name: "Lisbon")
        let maybe: Int? = 4
        expectTranslation(#Predicate { $0.rating > limit - 1 }, #"t0."rating" > $1"#, [.int(9)])
        expectTranslation(#Predicate { $0.rating > limit * 2 + 1 }, #"t0."rating" > $1"#, [.int(21)])
        expectTranslation(#Predicate { $0.rating == -limit }, #"t0."rating" = $1"#, [.int(-10)])
        expectTranslation(#Predicate { $0.name == trip.name }, #"t0."name" = $1"#, [.text("Lisbon")])
        expectTranslation(#Predicate { $0.rating == maybe! }, #"t0."rating" = $1"#, [.int(4)])
        expectTranslation(#Predicate { $0.rating == (maybe ?? 0) }, #"t0."rating" = $1"#, [.int(4)])
        expectTranslation(#Predicate { limit > 3 && $0.rating == 1 }, #"t0."rating" = $1"#, [.int(1)])
        let max = Int.max
        expectNoTranslation(#Predicate { $0.rating > max + 1 })   // overflows: Foundation would trap
    }

    // MARK: Strings

    @Test func stringEquality() {
        expectTranslation(#Predicate { $0.name == "Lisbon" }, #"t0."name" = $1"#, [.text("Lisbon")])
        expectTranslation(#Predicate { $0.name != "Lisbon" }, #"t0."name" <> $1"#, [.text("Lisbon")])
        expectTranslation(#Predicate { "Lisbon" == $0.name }, #"t0."name" = $1"#, [.text("Lisbon")])
        expectTranslation(#Predicate { $0.name == "" }, #"t0."name" = $1"#, [.text("")])
        // K, ; and ` have canonically equivalent non-ASCII scalars.
        let translate = "translate(t0.\"name\", '\u{212A}\u{037E}\u{1FEF}', 'K;`')"
        expectTranslation(#Predicate { $0.name == "Kyoto" }, "\(translate) = $1", [.text("Kyoto")])
        expectTranslation(#Predicate { $0.name != "a;b" }, "\(translate) <> $1", [.text("a;b")])
        // Non-ASCII: canonical equivalence by NFC on both sides.
        expectTranslation(#Predicate { $0.name == "Belém" }, #"normalize(t0."name", NFC) = normalize($1, NFC)"#, [.text("Belém")])
        expectTranslation(#Predicate { $0.name != "東京" }, #"normalize(t0."name", NFC) <> normalize($1, NFC)"#, [.text("東京")])
        expectTranslation(#Predicate { $0.nick == "Belém" }, #"(t0."nick" IS NOT NULL AND normalize(t0."nick", NFC) = normalize($1, NFC))"#,
                  [.text("Belém")])
        expectNoTranslation(#Predicate { $0.name == "\u{1FAE8}" })     // Unicode 15: unknown to older servers
        expectNoTranslation(#Predicate { $0.name == "a\u{0}b" })      // PostgreSQL text has no NUL
        expectTranslation(#Predicate { $0.name.isEmpty }, #"t0."name" = ''"#)
    }

    @Test func stringSearch() {
        let ascii = #"(octet_length(t0."name") = char_length(t0."name") OR t0."name" ~ $2)"#
        expectTranslation(#Predicate { $0.name.contains("isb") }, #"(t0."name" LIKE $1 AND \#(ascii))"#, [.text("%isb%"), .text(containsPattern("isb"))])
        expectTranslation(#Predicate { $0.name.starts(with: "Li") }, #"(t0."name" LIKE $1 AND \#(ascii))"#, [.text("Li%"), .text(startsWithPattern("Li"))])
        expectTranslation(#Predicate { $0.name.contains("a_b%c\\d e.") }, #"(t0."name" LIKE $1 AND \#(ascii))"#,
                  [.text(#"%a\_b\%c\\d e.%"#), .text(containsPattern(#"a\_b\%c\\d\ e\."#))])
        expectTranslation(#Predicate { $0.name.contains("") }, "TRUE")
        expectTranslation(#Predicate { $0.name.starts(with: "") }, "TRUE")
        let folded = "translate(t0.\"name\", '\u{212A}\u{037E}\u{1FEF}', 'K;`')"
        expectTranslation(#Predicate { $0.name.contains("OK") },
                  "(\(folded) LIKE $1 AND (octet_length(\(folded)) = char_length(\(folded)) OR \(folded) ~ $2))",
                  [.text("%OK%"), .text(containsPattern("OK"))])
        expectTranslation(#Predicate { $0.nick?.contains("a") == true },
                  #"(t0."nick" IS NOT NULL AND (t0."nick" LIKE $1 AND (octet_length(t0."nick") = char_length(t0."nick") OR t0."nick" ~ $2)))"#,
                  [.text("%a%"), .text(containsPattern("a"))])
        expectNoTranslation(#Predicate { $0.name.contains("é") })
        expectNoTranslation(#Predicate { $0.name.contains("a\tb") })
        expectNoTranslation(#Predicate { $0.name.starts(with: "\n") })
        expectNoTranslation(#Predicate { $0.name.localizedStandardContains("a") })
        expectNoTranslation(#Predicate { $0.name < "m" })
        expectNoTranslation(#Predicate { $0.name.count > 3 })
        expectNoTranslation(#Predicate { "abc".contains($0.name) })
    }

    // MARK: Collections

    @Test func constantCollectionsContainAColumn() throws {
        let u1 = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, u2 = UUID(uuidString: "00000000-0000-0000-0000-000000000002")!
        let uuids = [u1, u2]
        let empty: [Int] = []
        let withNil: [Int?] = [1, nil]
        let doubles = [1.5, .nan, 1.5]
        let statuses = [SQLTestStatus.active, .done]
        expectTranslation(#Predicate { [1, 2, 3].contains($0.rating) }, #"t0."rating" = ANY($1::int8[])"#, [.intArray([1, 2, 3])])
        expectTranslation(#Predicate { [2, 2].contains($0.rating) }, #"t0."rating" = $1"#, [.int(2)])
        expectTranslation(#Predicate { empty.contains($0.rating) }, "FALSE")
        expectTranslation(#Predicate { !empty.contains($0.rating) }, "TRUE")
        expectTranslation(#Predicate { ["a", "b"].contains($0.name) }, #"t0."name" = ANY($1::text[])"#, [.textArray(["a", "b"])])
        expectTranslation(#Predicate { ["a", "é"].contains($0.name) }, #"(t0."name" = $1 OR normalize(t0."name", NFC) = normalize($2, NFC))"#,
                  [.text("a"), .text("é")])
        expectTranslation(#Predicate { doubles.contains($0.price) }, #"t0."price" = $1"#, [.double(1.5)])
        expectTranslation(#Predicate { uuids.contains($0.uuid) }, #"t0."uuid" = ANY($1::text[]::uuid[])"#, [.textArray(uuids.map(\.uuidString))])
        let manyDoubles = [1.5, -.infinity, 1e-7]
        expectTranslation(#Predicate { manyDoubles.contains($0.price) }, #"t0."price" = ANY($1::text[]::float8[])"#,
                  [.textArray(["1.5", "-Infinity", "1e-07"])])
        expectTranslation(#Predicate { withNil.contains($0.stars) }, #"(t0."stars" IS NULL OR (t0."stars" IS NOT NULL AND t0."stars" = $1))"#, [.int(1)])
        expectTranslation(#Predicate { statuses.contains($0.status) }, #"(t0."status" = $1::jsonb OR t0."status" = $2::jsonb)"#,
                  [.jsonb("\"active\""), .jsonb("\"done\"")])
        expectTranslation(#Predicate { [true].contains($0.isPublished) }, #"t0."isPublished" = $1"#, [.bool(true)])
    }

    @Test func jsonAttributes() {
        let s = SQLTestStatus.active
        let tags = ["a", "b"]
        let codes: Set<Int> = [1, 2]
        expectTranslation(#Predicate { $0.status == s }, #"t0."status" = $1::jsonb"#, [.jsonb("\"active\"")])
        expectTranslation(#Predicate { $0.status != s }, #"t0."status" <> $1::jsonb"#, [.jsonb("\"active\"")])
        expectTranslation(#Predicate { $0.maybeStatus == s }, #"(t0."maybeStatus" IS NOT NULL AND t0."maybeStatus" = $1::jsonb)"#, [.jsonb("\"active\"")])
        expectTranslation(#Predicate { $0.maybeStatus == nil }, #"t0."maybeStatus" IS NULL"#)
        expectTranslation(#Predicate { $0.tags.contains("x") }, #"t0."tags" @> $1::jsonb"#, [.jsonb(#"["x"]"#)])
        expectTranslation(#Predicate { !$0.tags.contains("x") }, #"NOT (t0."tags" @> $1::jsonb)"#, [.jsonb(#"["x"]"#)])
        expectTranslation(#Predicate { $0.codes.contains(3) }, #"t0."codes" @> $1::jsonb"#, [.jsonb("[3]")])
        expectTranslation(#Predicate { $0.scores.contains(0.5) }, #"t0."scores" @> $1::jsonb"#, [.jsonb("[0.5]")])
        expectTranslation(#Predicate { $0.tags.isEmpty }, #"jsonb_array_length(t0."tags") = 0"#)
        expectTranslation(#Predicate { $0.codes.isEmpty }, #"jsonb_array_length(t0."codes") = 0"#)
        expectTranslation(#Predicate { $0.tags.count > 2 }, #"jsonb_array_length(t0."tags") > $1"#, [.int(2)])
        expectTranslation(#Predicate { $0.tags == tags }, #"t0."tags" = $1::jsonb"#, [.jsonb(#"["a","b"]"#)])
        let codesJSON = "[" + codes.map(String.init).joined(separator: ",") + "]"
        expectTranslation(#Predicate { $0.codes == codes }, #"(t0."codes" @> $1::jsonb AND t0."codes" <@ $2::jsonb)"#,
                  [.jsonb(codesJSON), .jsonb(codesJSON)])
        expectNoTranslation(#Predicate { $0.tags.contains("é") })   // Swift compares strings canonically, jsonb by bytes
        expectNoTranslation(#Predicate { $0.tags.contains("K") })
        expectNoTranslation(#Predicate { $0.tags.contains { $0 == "x" } })
        let nan = Double.nan
        expectNoTranslation(#Predicate { $0.scores.contains(nan) })
    }

    @Test func ranges() {
        let range = 1...5
        let open = 1..<5
        expectTranslation(#Predicate { (1...5).contains($0.rating) }, #"(t0."rating" >= $1 AND t0."rating" <= $2)"#, [.int(1), .int(5)])
        expectTranslation(#Predicate { (1..<5).contains($0.rating) }, #"(t0."rating" >= $1 AND t0."rating" < $2)"#, [.int(1), .int(5)])
        expectTranslation(#Predicate { range.contains($0.rating) }, #"(t0."rating" >= $1 AND t0."rating" <= $2)"#, [.int(1), .int(5)])
        expectTranslation(#Predicate { open.contains($0.rating) }, #"(t0."rating" >= $1 AND t0."rating" < $2)"#, [.int(1), .int(5)])
        expectTranslation(#Predicate { (0.5...1.5).contains($0.price) },
                  #"((t0."price" >= $1 AND t0."price" <> 'NaN'::float8) AND t0."price" <= $2)"#, [.double(0.5), .double(1.5)])
        let from = 3...
        let through = ...3
        expectTranslation(#Predicate { from.contains($0.rating) }, #"t0."rating" >= $1"#, [.int(3)])
        expectTranslation(#Predicate { through.contains($0.rating) }, #"t0."rating" <= $1"#, [.int(3)])
        expectTranslation(#Predicate { _ in (1...5).contains(3) }, "TRUE")
    }

    // MARK: Identifiers

    @Test func identifiers() throws {
        let id = try testTripID(7)
        let foreign = try testTripID(9, store: "elsewhere")
        let owner = try testOwnerID(3)
        let ids = [id, foreign, try testTripID(8)]
        expectTranslation(#Predicate { $0.persistentModelID == id }, #"t0."_id" = $1"#, [.int(7)])
        expectTranslation(#Predicate { id == $0.persistentModelID }, #"t0."_id" = $1"#, [.int(7)])
        expectTranslation(#Predicate { $0.persistentModelID != id }, #"t0."_id" <> $1"#, [.int(7)])
        expectTranslation(#Predicate { $0.persistentModelID == foreign }, "FALSE")   // not an object of this store
        expectTranslation(#Predicate { $0.persistentModelID != foreign }, "TRUE")
        expectTranslation(#Predicate { ids.contains($0.persistentModelID) }, #"t0."_id" = ANY($1::int8[])"#, [.intArray([7, 8])])
        expectTranslation(#Predicate { [foreign].contains($0.persistentModelID) }, "FALSE")
        expectNoTranslation(#Predicate { $0.persistentModelID == owner })   // another model's identifier: done in memory
        expectNoTranslation(#Predicate { $0.persistentModelID < id })
    }

    // MARK: Relationships

    @Test func toOneRelationships() throws {
        let owner = try testOwnerID(3)
        let exists = #"EXISTS (SELECT 1 FROM "s"."SQLTestOwner" t1 WHERE t1."_id" = t0."owner_id" AND "#
        expectTranslation(#Predicate { $0.owner == nil }, #"t0."owner_id" IS NULL"#)
        expectTranslation(#Predicate { $0.owner != nil }, #"t0."owner_id" IS NOT NULL"#)
        expectTranslation(#Predicate { $0.owner?.name == "Ana" }, exists + #"t1."name" = $1)"#, [.text("Ana")])
        expectTranslation(#Predicate { $0.owner?.name != "Ana" }, "NOT " + exists + #"t1."name" = $1)"#, [.text("Ana")])
        expectTranslation(#Predicate { $0.owner?.name == nil }, #"t0."owner_id" IS NULL"#)
        expectTranslation(#Predicate { $0.owner?.age == nil }, #"(t0."owner_id" IS NULL OR "# + exists + #"t1."age" IS NULL))"#)
        expectTranslation(#Predicate { $0.owner?.age == 30 }, exists + #"(t1."age" IS NOT NULL AND t1."age" = $1))"#, [.int(30)])
        expectTranslation(#Predicate { ($0.owner?.name ?? "") == "Ana" }, exists + #"t1."name" = $1)"#, [.text("Ana")])
        expectTranslation(#Predicate { ($0.owner?.age ?? 0) > 3 }, exists + #"(t1."age" IS NOT NULL AND t1."age" > $1))"#, [.int(3)])
        expectTranslation(#Predicate { ($0.owner?.age ?? 0) < 3 },
                  #"(t0."owner_id" IS NULL OR "# + exists + #"(t1."age" IS NULL OR t1."age" < $1)))"#, [.int(3)])
        expectTranslation(#Predicate { $0.owner?.persistentModelID == owner }, #"(t0."owner_id" IS NOT NULL AND t0."owner_id" = $1)"#, [.int(3)])
        expectTranslation(#Predicate { $0.owner?.boss?.name == "Bo" },
                  exists + #"EXISTS (SELECT 1 FROM "s"."SQLTestOwner" t2 WHERE t2."_id" = t1."boss_id" AND t2."name" = $1))"#, [.text("Bo")])
        expectTranslation(#Predicate { $0.owner.flatMap { $0.name.starts(with: "A") } == true },
                  exists + #"(t1."name" LIKE $1 AND (octet_length(t1."name") = char_length(t1."name") OR t1."name" ~ $2)))"#,
                  [.text("A%"), .text(startsWithPattern("A"))])
        expectTranslation(#Predicate { $0.owner.flatMap { $0.name == "A" } == false }, exists + #"NOT (t1."name" = $1))"#, [.text("A")])
        expectTranslation(#Predicate { $0.owner.flatMap { $0.name == "A" } ?? true }, "NOT " + exists + #"NOT (t1."name" = $1))"#, [.text("A")])
        let names: [String?] = ["Ana", "Bo"]
        expectTranslation(#Predicate { names.contains($0.owner.flatMap { $0.name }) }, exists + #"t1."name" = ANY($1::text[]))"#, [.textArray(["Ana", "Bo"])])
    }

    @Test func untranslatable() {
        let maybe: Int? = nil
        expectNoTranslation(#Predicate { $0.stops.isEmpty })
        expectNoTranslation(#Predicate { $0.stops.count > 1 })
        expectNoTranslation(#Predicate { $0.stops.contains { $0.name == "x" } })
        expectNoTranslation(#Predicate { $0.rating + 1 > 3 })
        expectNoTranslation(#Predicate { $0.stars! > 3 })
        expectNoTranslation(#Predicate { $0.rating == maybe! })           // Foundation throws
        expectNoTranslation(#Predicate { $0.unmapped == 1 })              // the resolver knows no column
        expectNoTranslation(#Predicate { $0.isPublished && $0.name.count > 1 })
        expectNoTranslation(#Predicate { $0.price * 2 > 3 })
    }

    @Test func parametersAreNumberedFromFirstParameter() throws {
        let fragment = try #require(translated(#Predicate { $0.rating > 3 && $0.name == "a" || $0.budget == 2 }, first: 4))
        #expect(fragment.text == #"((t0."rating" > $4 AND t0."name" = $5) OR (t0."budget" IS NOT NULL AND t0."budget" = $6))"#)
        #expect(fragment.binds == [.int(3), .text("a"), .double(2)])
    }

    @Test func renderingParenthesizes() {
        #expect(SQLText.not("a = b").rendered(firstParameter: 1).text == "NOT (a = b)")
        #expect(SQLText.not("(a OR b)").rendered(firstParameter: 1).text == "NOT (a OR b)")
        #expect(SQLText.not("(a) OR (b)").rendered(firstParameter: 1).text == "NOT ((a) OR (b))")
        #expect(SQLText.not("x").rendered(firstParameter: 1).text == "NOT x")
        #expect(SQLText.and(.true, "x").rendered(firstParameter: 1).text == "x")
        #expect(SQLText.or("x", .true) == .true)
    }

    @Test func prefilterKeepsTheTermsThatTranslate() throws {
        let resolver = SQLTestResolver()
        let exact = try #require(PredicateSQL.prefilter(#Predicate<SQLTestTrip> { $0.rating > 3 && $0.budget == nil }, resolver: resolver))
        #expect(exact.isExact)
        #expect(exact.fragment == translated(#Predicate { $0.rating > 3 && $0.budget == nil }))
        let partial = try #require(PredicateSQL.prefilter(
            #Predicate<SQLTestTrip> { $0.rating > 3 && $0.name.localizedStandardContains("a") && ($0.budget == nil && $0.stops.isEmpty) },
            resolver: resolver, firstParameter: 2))
        #expect(!partial.isExact)
        #expect(partial.fragment.text == #"(t0."rating" > $2 AND t0."budget" IS NULL)"#)
        #expect(partial.fragment.binds == [.int(3)])
        // An untranslatable `||` or `!` is one term: nothing of it is kept.
        #expect(PredicateSQL.prefilter(#Predicate<SQLTestTrip> { $0.rating > 3 || $0.stops.isEmpty }, resolver: resolver) == nil)
        #expect(PredicateSQL.prefilter(#Predicate<SQLTestTrip> { !($0.rating > 3 && $0.stops.isEmpty) }, resolver: resolver) == nil)
        #expect(try #require(PredicateSQL.prefilter(#Predicate<SQLTestTrip> { $0.isPublished }, resolver: resolver)).isExact)
    }

    // MARK: Sorting

    @Test func sortDescriptors() {
        #expect(orderBy([]) == "")
        #expect(orderBy([SortDescriptor(\.rating)]) == #"t0."rating" ASC"#)
        #expect(orderBy([SortDescriptor(\.rating, order: .reverse)]) == #"t0."rating" DESC"#)
        #expect(orderBy([SortDescriptor(\.budget)]) == #"t0."budget" ASC NULLS FIRST"#)
        #expect(orderBy([SortDescriptor(\.budget, order: .reverse)]) == #"t0."budget" DESC NULLS LAST"#)
        #expect(orderBy([SortDescriptor(\.start, order: .reverse), SortDescriptor(\.uuid), SortDescriptor(\.stars)])
            == #"t0."start" DESC, t0."uuid" ASC, t0."stars" ASC NULLS FIRST"#)
        #expect(orderBy([SortDescriptor(\.amount)]) == #"(t0."amount" <> 'NaN'::numeric) ASC, t0."amount" ASC"#)
        #expect(orderBy([SortDescriptor(\.amount, order: .reverse)]) == #"(t0."amount" <> 'NaN'::numeric) DESC, t0."amount" DESC"#)
        #expect(orderBy([SortDescriptor(\.price), SortDescriptor(\.weight), SortDescriptor(\.small)]) == #"t0."price" ASC, t0."weight" ASC, t0."small" ASC"#)
        #expect(orderBy([SortDescriptor(\.rating), SortDescriptor(\.name)]) == nil)
        #expect(orderBy([SortDescriptor(\.nick)]) == nil)
        #expect(orderBy([SortDescriptor(\.name, comparator: .lexical)]) == nil)
        #expect(orderBy([SortDescriptor(\.big)]) == nil)
        #expect(orderBy([SortDescriptor(\.unmapped)]) == nil)
    }

    @Test func foundationSortsAsTheOrderByDoes() {
        func trip(_ budget: Double?) -> SQLTestTrip { let t = SQLTestTrip(); t.budget = budget; return t }
        let trips = [trip(2), trip(nil), trip(1)]
        #expect(trips.sorted(using: SortDescriptor(\SQLTestTrip.budget)).map(\.budget) == [nil, 1, 2])
        #expect(trips.sorted(using: SortDescriptor(\SQLTestTrip.budget, order: .reverse)).map(\.budget) == [2, 1, nil])
        // UUIDs: Foundation compares the 16 bytes in order, as PostgreSQL does.
        var generator = SQLTestRandom(seed: 7)
        for _ in 0..<500 {
            let a = UUID.random(&generator), b = UUID.random(&generator)
            let bytesA = withUnsafeBytes(of: a.uuid) { Array($0) }, bytesB = withUnsafeBytes(of: b.uuid) { Array($0) }
            #expect((a < b) == bytesA.lexicographicallyPrecedes(bytesB))
        }
        // Strings: Foundation's order is not the bytes' (why string sorts stay in memory).
        #expect("e\u{301}x" > "éa")
        #expect(Array("e\u{301}x".utf8).lexicographicallyPrecedes(Array("éa".utf8)))
    }
}

// MARK: - The Swift string semantics the text SQL relies on

@Suite struct PredicateSQLTextSemanticsTests {
    /// Only U+212A, U+037E and U+1FEF are canonically equivalent to an ASCII character (and no
    /// other scalar's canonical decomposition is all ASCII).
    @Test func singletonsAreTheOnlyNonASCIIEquivalentsOfASCII() {
        var asciiStrings = Set<String>()
        for v in 0..<128 { asciiStrings.insert(String(Character(Unicode.Scalar(UInt8(v))))) }
        var found: [UInt32] = []
        for v in UInt32(0x80)...0x10FFFF {
            guard let s = Unicode.Scalar(v) else { continue }
            if asciiStrings.contains(String(Character(s))) { found.append(v) }
        }
        #expect(found == [0x37E, 0x1FEF, 0x212A])
        #expect(Set(TextSQL.singletons.unicodeScalars.map(\.value)) == Set(found))
        for (single, ascii) in zip(TextSQL.singletons, TextSQL.singletonTargets) { #expect(single == ascii) }
    }

    /// The grapheme sets found in one pass are those found one scalar at a time.
    @Test func graphemeSetsMatchSwiftGraphemeBreaking() {
        let (glue, prepend) = SQLGraphemes.sets
        let everyCodePoint = SQLGraphemes.compute(all: true)
        #expect(everyCodePoint.glue == glue && everyCodePoint.prepend == prepend)
        #expect(!glue.isEmpty)
        #expect(glue.allSatisfy { $0.lowerBound >= 0x80 } && prepend.allSatisfy { $0.lowerBound >= 0x80 })
        for sets in [glue, prepend] {
            for (a, b) in zip(sets, sets.dropFirst()) { #expect(a.upperBound + 1 < b.lowerBound) }
        }
        let glueSet = Set(glue.flatMap { Array($0) }), prependSet = Set(prepend.flatMap { Array($0) })
        func isIn(_ v: UInt32, _ ranges: [ClosedRange<UInt32>]) -> Bool { ranges.count == glue.count ? glueSet.contains(v) : prependSet.contains(v) }
        // Every member, its neighbours, and a sample of the rest.
        var candidates = glueSet.union(prependSet)
        for v in candidates { candidates.insert(v + 1); candidates.insert(v - 1) }
        for v in stride(from: UInt32(0x80), through: 0x10FFFF, by: 97) { candidates.insert(v) }
        for v in candidates.sorted() {
            guard let s = Unicode.Scalar(v) else { continue }
            var after = "a"
            after.unicodeScalars.append(s)
            var before = String(Character(s))
            before.unicodeScalars.append("a")
            #expect((after.count == 1) == isIn(v, glue), "U+\(String(v, radix: 16))")
            #expect((before.count == 1) == isIn(v, prepend), "U+\(String(v, radix: 16))")
            // The same for another printable ASCII character.
            var afterTilde = "~"
            afterTilde.unicodeScalars.append(s)
            #expect((afterTilde.count == 1) == isIn(v, glue))
        }
    }

    /// Differential: on a corpus of tricky strings, the generated SQL's meaning (evaluated here:
    /// LIKE, the ASCII test and the bound regular expression, run by NSRegularExpression) is
    /// Foundation's `Predicate.evaluate` answer.
    @Test func textSQLGivesFoundationsAnswer() throws {
        let pieces = ["a", "b", "K", "\u{212A}", ";", "\u{037E}", "`", "\u{1FEF}", "e", "\u{301}", "é", "\u{600}", "\r", "\n", "\r\n",
                      "#", "\u{FE0F}", "\u{20E3}", "\u{200D}", "👍", "\u{1F3FB}", "ก", "\u{0E33}", "\u{0903}", " ", "x", "ab", "%", "_",
                      "\\", ".", "Ka", "\u{1F1F5}", "\u{1F1F9}", "\u{1100}", "\u{1161}", "ﬁ", "Å", "A\u{30A}", "\u{0915}\u{094D}"]
        let needles = ["a", "b", "ab", "K", "Ka", ";", "`", "e", "#", "a b", "x", "", "%", "_", "\\", ".", "bK", "A", " ", "K;`"]
        var generator = SQLTestRandom(seed: 42)
        var corpus = pieces + [""]
        for _ in 0..<1500 {
            let count = Int.random(in: 1...5, using: &generator)
            corpus.append((0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined())
        }
        var checked = 0
        for needle in needles {
            let containsPredicate = #Predicate<SQLTestTrip> { $0.name.contains(needle) }
            let prefixPredicate = #Predicate<SQLTestTrip> { $0.name.starts(with: needle) }
            let equalPredicate = #Predicate<SQLTestTrip> { $0.name == needle }
            let fragments = [translated(containsPredicate), translated(prefixPredicate), translated(equalPredicate)]
            for (predicate, fragment) in zip([containsPredicate, prefixPredicate, equalPredicate], fragments) {
                let fragment = try #require(fragment, "\(needle)")
                for text in corpus {
                    let trip = SQLTestTrip(name: text)
                    let swift = try predicate.evaluate(trip)
                    let emulated = try SQLTestTextEmulator.evaluate(fragment, column: text)
                    #expect(swift == emulated, "\(fragment.text) on \(text.unicodeScalars.map { String($0.value, radix: 16) })")
                    checked += 1
                }
            }
        }
        // Non-ASCII equality: NFC on both sides.
        for needle in ["é", "Å", "ﬁ", "e\u{301}", "東京", "a\u{0915}\u{094D}"] {
            let predicate = #Predicate<SQLTestTrip> { $0.name == needle }
            let fragment = try #require(translated(predicate))
            for text in corpus + ["é", "e\u{301}", "A\u{30A}", "\u{212B}", "ﬁ", "fi"] {
                #expect(try predicate.evaluate(SQLTestTrip(name: text)) == SQLTestTextEmulator.evaluate(fragment, column: text))
                checked += 1
            }
        }
        #expect(checked > 90_000)
    }
}

/// Evaluates the text conditions the translator generates for a column `t0."name"` holding
/// `column`, as PostgreSQL would (a UTF-8 database, deterministic collation): `=`/`<>` (bytes),
/// translate, normalize (NFC), LIKE, octet_length = char_length, and `~` (the bound ARE, run by
/// ICU: the constructs used mean the same, except that ICU's `$` also matches before a final
/// newline, so `$` is run as `\z`).
enum SQLTestTextEmulator {
    struct Unsupported: Error { var text: String }

    static func evaluate(_ fragment: SQLFragment, column: String) throws -> Bool {
        let t = fragment.text
        func bind(_ i: Int) -> String {
            if case .text(let s) = fragment.binds[i] { return s }
            return ""
        }
        let folded = "translate(t0.\"name\", '\(TextSQL.singletons)', '\(TextSQL.singletonTargets)')"
        var value = column
        var rest = t
        if t.hasPrefix(folded) || t.hasPrefix("(" + folded) {
            let from = Array(TextSQL.singletons.unicodeScalars), to = Array(TextSQL.singletonTargets.unicodeScalars)
            value = String(String.UnicodeScalarView(column.unicodeScalars.map { s in from.firstIndex(of: s).map { to[$0] } ?? s }))
            rest = t.replacingOccurrences(of: folded, with: "t0.\"name\"")
        }
        switch rest {
        case "TRUE": return true
        case "FALSE": return false
        case #"t0."name" = $1"#: return Array(value.utf8) == Array(bind(0).utf8)
        case #"t0."name" <> $1"#: return Array(value.utf8) != Array(bind(0).utf8)
        case #"normalize(t0."name", NFC) = normalize($1, NFC)"#:
            return Array(value.precomposedStringWithCanonicalMapping.utf8) == Array(bind(0).precomposedStringWithCanonicalMapping.utf8)
        case #"(t0."name" LIKE $1 AND (octet_length(t0."name") = char_length(t0."name") OR t0."name" ~ $2))"#:
            return like(value, bind(0)) && (value.unicodeScalars.allSatisfy(\.isASCII) || regex(value, bind(1)))
        default:
            throw Unsupported(text: t)
        }
    }

    /// LIKE with `%` wildcards, `\` escapes and no `_` wildcard in the patterns made here.
    static func like(_ value: String, _ pattern: String) -> Bool {
        var literal: [Unicode.Scalar] = []
        var escaped = false
        var leading = false
        let scalars = Array(pattern.unicodeScalars)
        for (i, s) in scalars.enumerated() {
            if escaped { literal.append(s); escaped = false; continue }
            if s == "\\" { escaped = true; continue }
            if s == "%" { if i == 0 { leading = true }; continue }
            literal.append(s)
        }
        let v = Array(value.unicodeScalars)
        if !leading { return v.starts(with: literal) }
        guard literal.count <= v.count else { return false }
        return (0...(v.count - literal.count)).contains { Array(v[$0..<($0 + literal.count)]) == literal }
            || literal.isEmpty
    }

    static func regex(_ value: String, _ pattern: String) -> Bool {
        let icu = pattern.replacingOccurrences(of: "(?:$|", with: "(?:\\z|")
        guard let re = try? NSRegularExpression(pattern: icu) else { return false }
        let ns = value as NSString
        return re.firstMatch(in: value, range: NSRange(location: 0, length: ns.length)) != nil
    }
}

/// A small seedable generator (SQLTestRandom).
struct SQLTestRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private extension UUID {
    static func random(_ generator: inout SQLTestRandom) -> UUID {
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
