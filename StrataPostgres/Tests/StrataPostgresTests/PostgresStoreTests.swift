// StrataPostgres on a real server (TestServer starts one, or CI does): the entry point, the
// tables as people and tools read them, upserts, versions, many writers in many processes,
// observers across processes, a standby.
import Foundation
import PostgresNIO
import Synchronization
import Testing
import Strata
@testable import StrataPostgres
import StrataPostgresTestSupport

final class PGTrip: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute var name: String = ""
    @Attribute var start: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var budget: Double? = nil
    @Attribute var price: Decimal = 0
    @Attribute var tags: [String] = []
    @Attribute var published: Bool = false
    @Attribute var ident: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute(.externalStorage) var cover: Data? = nil
    @Relationship(deleteRule: .cascade, inverse: \PGStop.trip) var stops: [PGStop] = []
    init() {}
    init(_ code: String, _ name: String, start: Double = 0) {
        self.code = code
        self.name = name
        self.start = Date(timeIntervalSinceReferenceDate: start)
    }
    static var indexes: [[PartialKeyPath<PGTrip>]] { [[\.start]] }
}

final class PGStop: PersistentModel {
    @Attribute var place: String = ""
    @Relationship var trip: PGTrip? = nil
    init() {}
    init(_ place: String) { self.place = place }
}

final class PGPerson: PersistentModel {
    @Attribute var first: String = ""
    @Attribute var last: String = ""
    @Attribute var email: String = ""
    @Attribute var age: Int = 0
    init() {}
    init(_ first: String, _ last: String, email: String, age: Int = 0) { self.first = first; self.last = last; self.email = email; self.age = age }
    static var uniqueConstraints: [[PartialKeyPath<PGPerson>]] { [[\.first, \.last], [\.email]] }
}

/// Most SwiftData models name their own key `id` (Backyard Birds does), beside the store's
/// `_id`.
final class PGBird: PersistentModel {
    @Attribute(.unique) var id: String = ""
    @Attribute var species: String = ""
    init() {}
    init(_ id: String, _ species: String) { self.id = id; self.species = species }
}

/// An attribute named as the store's own version column.
final class PGClash: PersistentModel {
    @Attribute var _version: Int = 0
    init() {}
}

/// A date `seen` has the column `seen_at` beside it: an attribute of that name clashes.
final class PGDateClash: PersistentModel {
    @Attribute var seen: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var seen_at: String = ""
    init() {}
}

/// Named as `PGTrip.stops`'s join table (`PGTrip_stops`).
final class PGTrip_stops: PersistentModel {
    @Attribute var note: String = ""
    init() {}
}

/// Two models whose names are one once cut to PostgreSQL's 63 bytes.
final class PGAModelWhoseNameIsLongerThanAnyPostgreSQLNameCanBeSoThatItEndsInA: PersistentModel {
    @Attribute var a: Int = 0
    init() {}
}

final class PGAModelWhoseNameIsLongerThanAnyPostgreSQLNameCanBeSoThatItEndsInB: PersistentModel {
    @Attribute var b: Int = 0
    init() {}
}

/// A to-many whose join table's two foreign keys (`<model>_<relationship>_owner_fkey`,
/// `…_target_fkey`) are one name once cut to 63 bytes.
final class PGOwnerWithAFairlyLongNameForTheseTests: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade) var stopsAlongTheWayInTurn: [PGStop] = []
    init() {}
}

/// A model without relationships, whose deletions keep a value: `delete(model:where:)` is one
/// statement on the server.
/// Stops along a walk: a to-many relationship without an inverse.
final class PGWalk: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var stops: [PGStop] = []
    init() {}
}

final class PGReading: PersistentModel {
    @Attribute(.preserveValueOnDeletion) var station: String = ""
    @Attribute var value: Double = 0
    init() {}
    init(_ station: String, _ value: Double) { self.station = station; self.value = value }
}

/// A counter changed by many writers at once.
final class PGTally: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var count: Int = 0
    init() {}
    init(_ name: String) { self.name = name }
}

/// A fresh namespace on the test server, and containers on it.
extension PGFixture {
    /// Runs `save` on a thread of its own while another writer holds `change` (one statement
    /// changing one row) uncommitted; commits it once the save waits for it (a backend blocked
    /// by the writer's, asked of the server query after query) or ended without waiting. The
    /// save's outcome ("saved", or its error's text) and whether it was seen waiting.
    func saveWhileAnotherWriterHolds(_ change: String, _ save: @escaping @Sendable () throws -> Void) throws -> (outcome: String?, waited: Bool) {
        let writer = PostgresSession(configuration: try configuration.connectionConfiguration(), location: "other writer")
        let watcher = PostgresSession(configuration: try configuration.connectionConfiguration(), location: "watcher")
        let outcome = Mutex<String?>(nil)
        let ended = DispatchSemaphore(value: 0)
        var waited = false
        try writer.withConnection { other in
            try other.execute("BEGIN")
            #expect(try other.execute(change) == 1)
            let otherPID = try other.query("SELECT pg_backend_pid()::text").first?.first ?? nil
            Thread {
                let ending: String
                do {
                    try save()
                    ending = "saved"
                } catch {
                    ending = "\(error)"
                }
                outcome.withLock { $0 = ending }
                ended.signal()
            }.start()
            try watcher.withConnection { w in
                while outcome.withLock({ $0 == nil }) {
                    let waiting = try w.query("SELECT count(*)::text FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))", [otherPID])
                    if waiting.first?.first != "0" { waited = true; break }
                }
            }
            try other.execute("COMMIT")
        }
        ended.wait()
        return (outcome.withLock { $0 }, waited)
    }
}

struct PGFixture {
    let url: URL
    let namespace: String
    let models: [any PersistentModel.Type]

    init(_ models: [any PersistentModel.Type], name: String = #function, namespace: String? = nil) throws {
        url = try TestServer.url()
        self.namespace = namespace ?? TestServer.namespace(name)
        self.models = models
    }

    var configuration: PostgresConfiguration { PostgresConfiguration(schema: Schema(models), url: url, namespace: namespace) }

    func container() throws -> ModelContainer { try ModelContainer(for: Schema(models), configurations: configuration) }

    /// Raw SQL on the server, for checking what the tables hold.
    func sql(_ text: String, _ binds: [String?] = []) throws -> [[String?]] {
        let session = PostgresSession(configuration: try configuration.connectionConfiguration(), location: "test")
        return try session.withConnection { try $0.query(text, binds) }
    }

    /// Two containers, as two machines would have, on the namespace, which holds three
    /// `PGBird`s: a (wren), b (robin), c (jay).
    func twoMachinesWithThreeBirds() throws -> (here: ModelContainer, elsewhere: ModelContainer) {
        let here = try container(), elsewhere = try container()
        let seed = ModelContext(here)
        for (id, species) in [("a", "wren"), ("b", "robin"), ("c", "jay")] { seed.insert(PGBird(id, species)) }
        try seed.save()
        return (here, elsewhere)
    }

    /// A trigger on `table` of the namespace that logs the text of each statement that writes
    /// it (`event`: INSERT, UPDATE or DELETE); the function returned says, for each statement
    /// logged so far, whether it was a one-statement save (its text also writes the history
    /// and notifies). A statement undone takes its log row with it.
    func logStatements(_ event: String, on table: String) throws -> () throws -> [Bool] {
        let schema = SQL.identifier(namespace)
        let log = "\(schema).\"log\""
        _ = try sql("CREATE TABLE \(log) (\"n\" serial, \"query\" text)")
        _ = try sql("""
            CREATE FUNCTION \(schema)."logged"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
            INSERT INTO \(log) ("query") VALUES (current_query()); RETURN NULL; END $$
            """)
        _ = try sql("CREATE TRIGGER \"logged\" AFTER \(event) ON \(schema).\(SQL.identifier(table)) FOR EACH STATEMENT EXECUTE FUNCTION \(schema).\"logged\"()")
        return {
            try sql("SELECT \"query\" FROM \(log) ORDER BY \"n\"").map { row in
                let query = row[0] ?? ""
                return query.contains("pg_notify") && query.contains("strata_history")
            }
        }
    }
}

@Suite struct PostgresStoreTests {
    @Test func theEntryPointAsTheIssueWritesIt() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        let configuration = PostgresConfiguration(
            "Trips",
            schema: Schema([PGTrip.self]),
            url: url,
            namespace: namespace,
            allowsSave: true)
        let container = try ModelContainer(for: PGTrip.self, configurations: configuration)
        let context = ModelContext(container)
        context.insert(PGTrip("LIS", "Lisbon"))
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGTrip>()).map(\.name) == ["Lisbon"])
    }

    @Test func everyContainerSpellingTakesIt() throws {
        let url = try TestServer.url()
        let namespace = TestServer.namespace()
        let trips = PostgresConfiguration("Trips", schema: Schema([PGTrip.self, PGStop.self]), url: url, namespace: namespace)
        let people = PostgresConfiguration("People", schema: Schema([PGPerson.self]), url: try TestServer.socketURL(), namespace: namespace + "_people")
        // Unlabeled, as SwiftData's init(for:_:); the second store through the Unix socket.
        let container = try ModelContainer(for: Schema([PGTrip.self, PGStop.self, PGPerson.self]), trips, people)
        let context = ModelContext(container)
        context.insert(PGTrip("LIS", "Lisbon"))
        context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com"))
        try context.save()
        let people2 = try fixtureSQL(url, "SELECT count(*)::text FROM \"\(namespace)_people\".\"PGPerson\"")
        #expect(people2 == "1", "PGPerson went to its configuration's namespace")
        // Beside a file store in one container: each model to its configuration.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = ModelConfiguration("People", schema: Schema([PGPerson.self]), url: folder.appendingPathComponent("people.store"))
        let mixed = try ModelContainer(for: Schema([PGTrip.self, PGStop.self, PGPerson.self]), configurations: [trips, file] as [any DataStoreConfiguration])
        let mixedContext = ModelContext(mixed)
        mixedContext.insert(PGPerson("Alan", "Turing", email: "alan@example.com"))
        mixedContext.insert(PGTrip("OSL", "Oslo"))
        try mixedContext.save()
        #expect(try ModelContext(mixed).fetch(FetchDescriptor<PGTrip>(sortBy: [SortDescriptor(\.code)])).map(\.code) == ["LIS", "OSL"])
        #expect(try ModelContext(mixed).fetch(FetchDescriptor<PGPerson>()).map(\.first) == ["Alan"], "the file store's, not the server's")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("people.store").path))
    }

    private func fixtureSQL(_ url: URL, _ text: String) throws -> String? {
        let session = PostgresSession(configuration: try PostgresConfiguration(url: url).connectionConfiguration(), location: "test")
        return try session.withConnection { try $0.query(text) }.first?.first ?? nil
    }

    @Test func tablesThatPeopleAndToolsCanRead() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let context = ModelContext(try fixture.container())
        let trip = PGTrip("LIS", "Lisbon", start: 123.456789012345)
        trip.budget = 0.1 + 0.2
        trip.price = Decimal(string: "12.345")!
        trip.tags = ["sea", "tram"]
        trip.cover = Data([1, 2, 3, 255])
        context.insert(trip)
        trip.stops = [PGStop("Alfama"), PGStop("Belém")]
        try context.save()
        let ns = fixture.namespace
        let columns = try fixture.sql("SELECT column_name::text, data_type::text FROM information_schema.columns WHERE table_schema = $1::text AND table_name = 'PGTrip' ORDER BY ordinal_position", [ns])
        let types = Dictionary(columns.compactMap { row in row[0].map { ($0, row[1] ?? "") } }, uniquingKeysWith: { a, _ in a })
        #expect(types["name"] == "text")
        #expect(types["budget"] == "double precision")
        #expect(types["price"] == "numeric")
        #expect(types["tags"] == "json", "JSON kept as written (a -0.0 stays -0.0); predicates read it as jsonb")
        #expect(types["published"] == "boolean")
        #expect(types["ident"] == "uuid")
        #expect(types["start"] == "double precision")
        #expect(types["start_at"] == "timestamp with time zone")
        let row = try fixture.sql("SELECT \"name\", \"price\"::text, \"tags\"::text, to_char(\"start_at\" AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM \"\(ns)\".\"PGTrip\"")
        #expect(row.first == ["Lisbon", "12.345", "[\"sea\",\"tram\"]", "2001-01-01"])
        let stops = try fixture.sql("SELECT s.\"place\" FROM \"\(ns)\".\"PGTrip_stops\" j JOIN \"\(ns)\".\"PGStop\" s ON s.\"_id\" = j.\"target_id\" ORDER BY j.\"position\"")
        #expect(stops.map { $0[0] } == ["Alfama", "Belém"])
        let constraints = try fixture.sql("SELECT constraint_type::text FROM information_schema.table_constraints WHERE table_schema = $1::text AND table_name = 'PGTrip'", [ns])
        #expect(constraints.contains { $0[0] == "UNIQUE" })
        let external = try fixture.sql("SELECT encode(\"data\", 'hex') FROM \"\(ns)\".\"PGTrip__external\"")
        #expect(external.first?.first == "010203ff")
        // Values read back exactly, in another container.
        let back = try #require(try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>()).first)
        #expect(back.start == Date(timeIntervalSinceReferenceDate: 123.456789012345))
        #expect(back.budget == 0.1 + 0.2)
        #expect(back.price == Decimal(string: "12.345")!)
        #expect(back.tags == ["sea", "tram"])
        #expect(back.cover == Data([1, 2, 3, 255]))
        #expect(back.stops.map(\.place) == ["Alfama", "Belém"])
    }

    /// A namespace is any PostgreSQL schema name: capitals, quotes and punctuation are kept
    /// as they are (quoted), in the tables, the id sequence, history and notifications alike.
    /// (Until 2026-11-30 the id sequence was named unquoted, and the first insert into a
    /// namespace with a capital failed: `schema "trips" does not exist`.)
    @Test func aNamespaceWithCapitalsAndQuotesWorks() throws {
        let namespace = "Trip's \"Log\"-" + TestServer.namespace()
        let fixture = try PGFixture([PGTrip.self, PGStop.self], namespace: String(namespace.prefix(63)))
        let container = try fixture.container()
        // Another store on the namespace, as another process's, listens on its channel (as the
        // store itself does: postgres-nio's listener and the store's LISTEN): each save's
        // NOTIFY signals `heard`.
        let listener = try PostgresStore(fixture.configuration, migrationPlan: nil)
        let heard = DispatchSemaphore(value: 0)
        let session = PostgresSession(configuration: try fixture.configuration.connectionConfiguration(), location: "test")
        let listening = try #require(session.listen(listener.channel) { _ in heard.signal() })
        defer { try? listening.close().wait() }
        let context = ModelContext(container)
        let trip = PGTrip("T1", "Lisbon")
        trip.stops = [PGStop("Alfama"), PGStop("Belém")]
        trip.cover = Data([1, 2, 3])
        context.insert(trip)
        try context.save()
        let first = try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>())
        #expect(first.first?.cover == Data([1, 2, 3]))
        #expect(first.first?.stops.count == 2)
        context.insert(PGTrip("T1", "Lisboa"))   // an upsert of the same code: its values win
        try context.save()
        let reader = ModelContext(try fixture.container())
        let read = try reader.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "T1" }))
        #expect(read.map(\.name) == ["Lisboa"])
        #expect(read.first?.cover == nil)
        try reader.delete(model: PGStop.self, where: #Predicate { $0.place == "Alfama" })
        try reader.save()
        #expect(try reader.fetchCount(FetchDescriptor<PGStop>()) == 1)
        #expect(try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 3)
        #expect(try fixture.sql("SELECT count(*)::text FROM \(PostgresTable.qualified(fixture.namespace, "PGTrip"))").first?.first == "1")
        // The three saves' notifications arrive (waited for; the bound is for a very busy
        // machine, as ManyProcessesTests' is).
        let deadline = DispatchTime.now() + .seconds(120)
        for save in 1...3 { #expect(heard.wait(timeout: deadline) == .success, "notification \(save) of 3") }
    }

    /// A namespace longer than a PostgreSQL name is refused with a typed error before anything
    /// is made: the server would cut it to 63 bytes, and two that begin alike would share one
    /// schema.
    @Test func aNamespaceLongerThanAPostgreSQLNameIsRefused() throws {
        let start = String(TestServer.namespace().prefix(40))
        let long = start + String(repeating: "n", count: 64 - start.utf8.count)
        let fixture = try PGFixture([PGPerson.self], namespace: long)
        #expect(throws: StrataError.self) { try fixture.container() }
        let cut = String(long.prefix(63))
        #expect(try fixture.sql("SELECT count(*)::text FROM pg_namespace WHERE nspname = $1", [cut]).first?.first == "0")
        #expect(throws: StrataError.self) { try PostgresConfiguration(url: fixture.url, namespace: "a\u{0}b").validate() }
    }

    /// A translated condition's parameters get their casts, a scalar one in a subquery of its
    /// own (converted once per run) and an array as it is (`= ANY` reads it as an array); a `$n`
    /// inside a quoted identifier or literal is not a parameter and stays as it is.
    @Test func castsTouchParametersOnly() {
        let fragment = SQLFragment(text: #"t0."a$1" = $1 AND t0."b" = 'x$2''$1' AND t0."c" = $2::jsonb AND $4 < $2 AND t0."d" = ANY($3)"#,
                                   binds: [.int(5), .text("{}"), .intArray([1, 2])])
        #expect(PostgresStore.cast(fragment)
                == #"t0."a$1" = (SELECT $1::bigint) AND t0."b" = 'x$2''$1' AND t0."c" = $2::jsonb AND $4 < (SELECT $2::text) AND t0."d" = ANY(($3::bigint[]))"#)
    }

    /// The text form of a `text[]` parameter: quotes and backslashes escaped, any other
    /// character (of any length in UTF-8) as it is, NULL for nil.
    @Test func arrayLiteralsQuoteWhatTheyMust() {
        #expect(PostgresValues.arrayLiteral([]) == "{}")
        #expect(PostgresValues.arrayLiteral(["a\"b", "c\\d", nil, "é😀", "", "NULL", "x,y}"])
                == #"{"a\"b","c\\d",NULL,"é😀","","NULL","x,y}"}"#)
    }

    /// U+0000 is found wherever it is, in small (inline) and large strings, as
    /// `utf8.contains(0)` finds it.
    @Test func nulIsFoundInEveryKindOfString() {
        let long = String(repeating: "é-abc", count: 40)
        for text in ["", "a", "\u{0}", "a\u{0}", "\u{0}a", "short", long, long + "\u{0}", "\u{0}" + long,
                     long + "\u{0}" + long, "😀\u{0}😀", String(long.dropFirst(3)) + "\u{0}"] {
            #expect(PostgresValues.hasNul(text) == text.utf8.contains(0), "\(text.debugDescription)")
        }
    }

    /// UUIDs as the server prints them are read without `sscanf`, to the same value; any other
    /// text is read as `UUID(uuidString:)` reads it.
    @Test func uuidTextsReadAsFoundationReadsThem() {
        for _ in 0..<200 {
            let u = UUID()
            #expect(PostgresValues.uuid(u.uuidString.lowercased()) == u)
            #expect(PostgresValues.uuid(u.uuidString) == u)
        }
        for text in ["", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1g", "a0eebc999c0b-4ef8-bb6d-6bb9bd380a11-",
                     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a111", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"] {
            #expect(PostgresValues.uuid(text) == UUID(uuidString: text))
        }
    }

    /// A bigint[]'s text, as the id allocation reads it.
    @Test func integerArraysReadExactly() {
        #expect(SaveRun.integers("{}") == [])
        #expect(SaveRun.integers("{1,22,-3,9223372036854775807}") == [1, 22, -3, Int64.max])
        for bad in ["", "{", "1,2", "{1,}", "{,1}", "{1,,2}", "{9223372036854775808}", "{1 ,2}", "{--1}", "{NULL}"] {
            #expect(SaveRun.integers(bad) == nil, "\(bad)")
        }
    }

    @Test func anAttributeNamedIDIsAColumnOfItsOwn() throws {
        let fixture = try PGFixture([PGBird.self])
        do {
            let context = ModelContext(try fixture.container())
            context.insert(PGBird("robin", "Erithacus rubecula"))
            context.insert(PGBird("wren", "Troglodytes"))
            try context.save()
        }
        let context = ModelContext(try fixture.container())
        context.insert(PGBird("wren", "Troglodytes troglodytes"))   // an upsert by the unique id
        try context.save()
        let key = "wren"
        let found = try context.fetch(FetchDescriptor<PGBird>(predicate: #Predicate { $0.id == key }))
        #expect(found.map(\.species) == ["Troglodytes troglodytes"])
        let rows = try fixture.sql("SELECT \"id\" FROM \"\(fixture.namespace)\".\"PGBird\" ORDER BY \"id\"")
        #expect(rows.map { $0[0] } == ["robin", "wren"])
    }

    @Test func aPropertyNamedAsAnotherColumnIsASchemaError() throws {
        let cases: [([any PersistentModel.Type], [String])] = [
            ([PGClash.self], ["_version"]), ([PGDateClash.self], ["seen_at", "seen"]),
            // Two tables of one name: a model named as another's join table, and two models
            // whose names PostgreSQL cuts to the same 63 bytes.
            ([PGTrip.self, PGStop.self, PGTrip_stops.self], ["join table of PGTrip.stops", "table of PGTrip_stops"]),
            ([PGAModelWhoseNameIsLongerThanAnyPostgreSQLNameCanBeSoThatItEndsInA.self, PGAModelWhoseNameIsLongerThanAnyPostgreSQLNameCanBeSoThatItEndsInB.self],
             ["cuts a name to 63 bytes"]),
            // Two foreign keys of one join table, cut to one name (one would have been left
            // out, and the delete rule of its side with it).
            ([PGOwnerWithAFairlyLongNameForTheseTests.self, PGStop.self], ["owner's foreign key", "target's foreign key"]),
        ]
        for (models, names) in cases {
            let fixture = try PGFixture(models, name: "clash_\(names[0])")
            #expect {
                _ = try fixture.container()
            } throws: { error in
                (error as? StrataError)?.code == .invalidSchema && names.allSatisfy { "\(error)".contains($0) }
            }
        }
    }

    @Test func upsertsByUniqueValueAcrossContainers() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        do {
            let context = ModelContext(try fixture.container())
            context.insert(PGTrip("LIS", "Lisbon"))
            try context.save()
        }
        let context = ModelContext(try fixture.container())
        let again = PGTrip("LIS", "Lisboa")
        context.insert(again)
        context.insert(PGTrip("OSL", "Oslo"))
        try context.save()
        let names = try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>(sortBy: [SortDescriptor(\.code)])).map(\.name)
        #expect(names == ["Lisboa", "Oslo"])
        #expect(try fixture.sql("SELECT count(*)::text FROM \"\(fixture.namespace)\".\"PGTrip\"").first?.first == "2")
    }

    /// `fetch(_:batchSize:)` reads the identifiers (the predicate, sort and paging on the
    /// server), then each batch with one query when it is first read, as the rows are then: a
    /// row changed meanwhile shows its change, a row deleted meanwhile is `isDeleted`.
    @Test func fetchWithABatchSizeReadsOneBatchAtATime() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        do {
            let context = ModelContext(try fixture.container())
            for i in 0..<30 { context.insert(PGTrip(String(format: "T%02d", i), "trip \(i)", start: Double(i))) }
            try context.save()
        }
        let context = ModelContext(try fixture.container())
        var descriptor = FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code != "T00" && $0.code != "T01" }, sortBy: [SortDescriptor(\.start, order: .reverse)])
        let results = try context.fetch(descriptor, batchSize: 10)
        #expect(results.count == 28)
        let table = "\"\(fixture.namespace)\".\"PGTrip\""
        _ = try fixture.sql("UPDATE \(table) SET \"name\" = 'changed' WHERE \"code\" = 'T05'")
        _ = try fixture.sql("DELETE FROM \(table) WHERE \"code\" = 'T20'")
        #expect(results[0].code == "T29")
        let all = results.map { $0.isDeleted ? "deleted" : $0.name }
        #expect(all.count == 28)
        #expect(all[9] == "deleted", "T20, read after its deletion: \(all)")
        #expect(all[24] == "changed", "T05, read after its change: \(all)")
        #expect(all[27] == "trip 2")
        descriptor.fetchOffset = 5
        descriptor.fetchLimit = 4
        #expect(try context.fetch(descriptor, batchSize: 3).map(\.code) == ["T24", "T23", "T22", "T21"])
    }

    /// An upsert onto a stored row of a model with several unique constraints is recorded as an
    /// update of the attributes whose values it changed, as with one constraint.
    @Test func anUpsertWithSeveralUniqueConstraintsRecordsWhatItChanged() throws {
        let fixture = try PGFixture([PGPerson.self])
        let container = try fixture.container()
        do {
            let context = ModelContext(container)
            context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com", age: 36))
            try context.save()
        }
        let context = ModelContext(container)
        context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com", age: 37))
        try context.save()
        let last = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        let updated = last.changes.compactMap { change -> [String]? in
            guard case .update(let update as DefaultHistoryUpdate<PGPerson>) = change else { return nil }
            return update.updatedAttributes.map(\.name)
        }
        #expect(updated == [["age"]], "\(last.changes)")
    }

    @Test func severalUniqueConstraintsNeverMakeTwoRowsForOneKey() throws {
        let fixture = try PGFixture([PGPerson.self])
        do {
            let context = ModelContext(try fixture.container())
            context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com"))
            try context.save()
        }
        let context = ModelContext(try fixture.container())
        context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com", age: 36))
        context.insert(PGPerson("Alan", "Turing", email: "alan@example.com"))
        try context.save()
        // One of the two constraints matching: the same object.
        context.insert(PGPerson("Countess", "Lovelace", email: "ada@example.com", age: 37))
        try context.save()
        let people = try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGPerson>(sortBy: [SortDescriptor(\.email)]))
        #expect(people.map(\.email) == ["ada@example.com", "alan@example.com"])
        #expect(people.first?.age == 37)
        // Matching two different objects on two constraints: refused, nothing written.
        context.insert(PGPerson("Alan", "Turing", email: "ada@example.com"))
        #expect(throws: StrataError.self) { try context.save() }
        #expect(try fixture.sql("SELECT count(*)::text FROM \"\(fixture.namespace)\".\"PGPerson\"").first?.first == "2")
    }

    @Test func aLostUpdateAndAResurrectedRowAreConflicts() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGTrip("LIS", "Lisbon"))
        seed.insert(PGTrip("OSL", "Oslo"))
        try seed.save()
        // Two containers stand for two machines: each read the rows.
        let a = ModelContext(try fixture.container()), b = ModelContext(try fixture.container())
        let lisbonA = try #require(try a.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first)
        let lisbonB = try #require(try b.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first)
        let osloA = try #require(try a.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "OSL" })).first)
        let osloB = try #require(try b.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "OSL" })).first)
        lisbonB.name = "Lisboa"
        b.delete(osloB)
        try b.save()
        lisbonA.name = "Lisbon!"
        var thrown: StrataError?
        do { try a.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(thrown?.objects == [lisbonA.persistentModelID])
        a.rollback()
        osloA.name = "Oslo!"
        thrown = nil
        do { try a.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict)
        let names = try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>()).map(\.name)
        #expect(names == ["Lisboa"], "never a lost update, never a deleted row back")
    }

    /// The version an update is checked against is the one its context read, not the one
    /// another context of the same container read later: a stale object's save is a conflict
    /// even after the process read the row again elsewhere. Until 2026-12-01 the store kept one
    /// version per row for the whole container (the last one read), so the other context's
    /// read hid the other machine's change, and the stale save overwrote it. Now the version
    /// travels with each context's object (`DefaultSnapshot.version`; Docs/Postgres.md, "Many
    /// writers on many machines").
    @Test func anotherContextsLaterReadDoesNotHideALostUpdate() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGTrip("LIS", "Lisbon"))
        try seed.save()
        let here = try fixture.container(), elsewhere = try fixture.container()
        let a = ModelContext(here)
        let lisbonA = try #require(try a.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first)
        // Another machine changes the row...
        let b = ModelContext(elsewhere)
        try #require(try b.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first).name = "Lisboa"
        try b.save()
        // ...and another context of this container reads it, changed.
        let reader = ModelContext(here)
        #expect(try reader.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first?.name == "Lisboa")
        // The first context's object is still the row as it read it.
        lisbonA.name = "Lisbon!"
        var thrown: StrataError?
        do { try a.save() } catch let error as StrataError { thrown = error }
        let names = try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>()).map(\.name)
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(names == ["Lisboa"], "never a lost update")
        // The same for a deletion: read again elsewhere, the stale object is not deleted.
        a.rollback()
        let lisboaA = try #require(try a.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first)
        try #require(try b.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first).name = "Lisboa!"
        try b.save()
        #expect(try ModelContext(here).fetch(FetchDescriptor<PGTrip>()).first?.name == "Lisboa!")
        a.delete(lisboaA)
        var deleteThrown: StrataError?
        do { try a.save() } catch let error as StrataError { deleteThrown = error }
        #expect(deleteThrown?.code == .saveConflict, "\(String(describing: deleteThrown))")
        #expect(try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>()).map(\.name) == ["Lisboa!"])
    }

    /// An upsert by one context over an object another context of the container holds: the
    /// store answers with the version the upsert replaced (`replacedVersions`), so the other
    /// context's later save wins over it, as on a file; another machine's change after that is
    /// still a conflict.
    @Test func anUpsertByAnotherContextOfTheContainerMeetsTheEnginesRule() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let here = try fixture.container(), elsewhere = try fixture.container()
        let seed = ModelContext(here)
        seed.insert(PGTrip("LIS", "Lisbon"))
        try seed.save()
        let b = ModelContext(here)
        let lisbonB = try #require(try b.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "LIS" })).first)
        let a = ModelContext(here)
        a.insert(PGTrip("LIS", "Lisboa"))
        try a.save()
        lisbonB.budget = 10
        try b.save()
        let other = ModelContext(elsewhere)
        let all = try other.fetch(FetchDescriptor<PGTrip>())
        #expect(all.map(\.name) == ["Lisbon"], "the later save wins, whole, as on a file")
        #expect(all.map(\.budget) == [10])
        // Another machine's change, then a stale save here: a conflict.
        for trip in all { trip.budget = 20 }
        try other.save()
        lisbonB.budget = 30
        var thrown: StrataError?
        do { try b.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
    }

    /// A save that names a stored object while another writer is deleting it: the save waits
    /// for that writer (the rows a save names are locked `FOR KEY SHARE` when it checks them),
    /// and once the deletion commits it writes no reference to the object, as it does for one
    /// deleted earlier. Until 2026-11-30 the check read the rows without a lock, and the commit
    /// failed on the deferred foreign key (SQLSTATE 23503, an untyped refusal).
    @Test func aSaveNamingARowAnotherWriterIsDeletingWaitsThenWritesNoReference() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self, PGWalk.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGStop("Alfama"))
        seed.insert(PGStop("Belém"))
        try seed.save()
        let container = try fixture.container()
        let ns = fixture.namespace
        // The other writer's deletion, not committed yet, while the save runs.
        let (outcome, sawTheSaveWait) = try fixture.saveWhileAnotherWriterHolds(
            "DELETE FROM \"\(ns)\".\"PGStop\" WHERE \"place\" = 'Alfama'") {
            let context = ModelContext(container)
            let walk = PGWalk()
            walk.name = "walk"
            context.insert(walk)
            walk.stops = try context.fetch(FetchDescriptor<PGStop>(sortBy: [SortDescriptor(\.place)]))
            try context.save()
        }
        #expect(sawTheSaveWait, "the save should have waited for the uncommitted deletion")
        #expect(outcome == "saved")
        let walk = try #require(try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGWalk>()).first)
        #expect(walk.stops.map(\.place) == ["Belém"], "no reference to the row deleted meanwhile")
    }

    /// A save of more new objects than a bulk statement sends at a time goes in parts (3 rows
    /// here), each part's arrays made while the server runs the one before. The new objects
    /// whose unique values stored rows hold, in any part, are upserted onto those rows; a part
    /// that cannot be made once others were sent fails the whole save, and nothing is kept.
    @Test func aSaveInPartsUpsertsHeldValuesAndKeepsNothingWhenAPartFails() throws {
        let fixture = try PGFixture([PGBird.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGBird("b3", "old"))
        seed.insert(PGBird("b7", "old"))
        try seed.save()
        let ns = fixture.namespace
        let rowsOf = "SELECT \"id\", \"_id\"::text, \"species\" FROM \"\(ns)\".\"PGBird\" ORDER BY \"id\""
        let before = try fixture.sql(rowsOf)
        var configuration = fixture.configuration
        configuration.bulkPartSize = 3
        let container = try ModelContainer(for: Schema([PGBird.self]), configurations: configuration)
        let context = ModelContext(container)
        for i in 0..<10 { context.insert(PGBird("b\(i)", "new \(i)")) }
        try context.save()
        let after = try fixture.sql(rowsOf)
        #expect(after.map { $0[0] } == (0..<10).map { "b\($0)" })
        #expect(after.map { $0[2] } == (0..<10).map { "new \($0)" })
        let heldRows = { (rows: [[String?]]) in rows.filter { $0[0] == "b3" || $0[0] == "b7" }.map { $0[1] } }
        #expect(heldRows(after) == heldRows(before), "b3 and b7 were upserted onto their rows")
        let last = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        var updates = 0, inserts = 0
        for change in last.changes {
            if case .insert = change { inserts += 1 }
            if case .update = change { updates += 1 }
        }
        #expect((inserts, updates) == (8, 2))
        // The third part holds a string PostgreSQL's text cannot (U+0000): the two parts sent
        // before it are undone with the rest.
        let failing = ModelContext(container)
        for i in 10..<20 { failing.insert(PGBird("b\(i)", i == 17 ? "nul\u{0}" : "new \(i)")) }
        failing.insert(PGBird("b3", "changed"))
        var thrown: StrataError?
        do { try failing.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .corruptRecord)
        #expect(try fixture.sql(rowsOf) == after, "nothing of the failed save is kept")
    }

    /// A new object whose unique value another writer is inserting at that moment: the save's
    /// plain insert waits for that writer, fails on its row once it commits (23505), and the
    /// save runs again, upserting onto the row. It succeeds as an upsert, with no unique-value
    /// error, and its history records an update of that row and an insert of the other object.
    @Test func anInsertMeetingAValueAnotherWriterIsInsertingUpsertsOntoItsRow() throws {
        let fixture = try PGFixture([PGBird.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGBird("b0", "kite"))
        try seed.save()
        let container = try fixture.container()
        let ns = fixture.namespace
        // The other writer's row for "b1", not committed yet, while the save runs.
        let (outcome, sawTheSaveWait) = try fixture.saveWhileAnotherWriterHolds("""
            INSERT INTO "\(ns)"."PGBird" ("_id", "id", "species") VALUES (nextval('"\(ns)"."strata_ids"'::regclass), 'b1', 'owl')
            """) {
            let context = ModelContext(container)
            context.insert(PGBird("b1", "wren"))
            context.insert(PGBird("b2", "robin"))
            try context.save()
        }
        #expect(sawTheSaveWait, "the save should have waited for the uncommitted row")
        #expect(outcome == "saved")
        let rows = try fixture.sql("SELECT \"id\", \"species\" FROM \"\(ns)\".\"PGBird\" ORDER BY \"id\"")
        #expect(rows.map { $0.compactMap { $0 } } == [["b0", "kite"], ["b1", "wren"], ["b2", "robin"]], "one row for b1, with the save's values")
        let last = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        var kinds: [String] = []
        for change in last.changes {
            switch change {
            case .insert: kinds.append("insert")
            case .update: kinds.append("update")
            case .delete: kinds.append("delete")
            @unknown default: kinds.append("other")
            }
        }
        #expect(kinds.sorted() == ["insert", "update"], "b2 inserted, the row of b1 updated")
    }

    /// A container (and its store) whose last reference goes away on one of SwiftNIO's event
    /// loop threads, as it does when the last one was taken by the store's LISTEN callback: its
    /// connections close without waiting there, where SwiftNIO traps a wait. (CI hit it on
    /// 2026-11-30: "wait() must not be called when on an EventLoop", from the store's deinit.)
    @Test func aStoreLetGoOfOnAnEventLoopThreadDoesNotTrap() throws {
        let fixture = try PGFixture([PGBird.self])
        let context = ModelContext(try fixture.container())
        context.insert(PGBird("b1", "wren"))
        try context.save()
        let held = Mutex<ModelContainer?>(try fixture.container())
        _ = try held.withLock { try ModelContext(try #require($0)).fetchCount(FetchDescriptor<PGBird>()) }
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try loop.submit { held.withLock { $0 = nil } }.wait()
        #expect(try ModelContext(try fixture.container()).fetchCount(FetchDescriptor<PGBird>()) == 1)
    }

    /// A fetch or save on one of SwiftNIO's event loop threads (a Vapor route returning a
    /// future, an `EventLoopFuture` callback) is refused with a typed error that says where to
    /// call from, instead of the trap SwiftNIO sets on waiting there; the store works after.
    @Test func useOnAnEventLoopThreadIsATypedErrorNotATrap() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let seed = ModelContext(container)
        seed.insert(PGBird("b1", "wren"))
        try seed.save()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let outcome = try loop.submit { () -> String in
            let context = ModelContext(container)
            do { return "counted \(try context.fetchCount(FetchDescriptor<PGBird>()))" } catch let error as StrataError {
                return "\(error.code): \(error.message)"
            } catch {
                return "untyped: \(error)"
            }
        }.wait()
        #expect(outcome.hasPrefix("storeFailure") && outcome.contains("event loop"), "\(outcome)")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGBird>()) == 1)
    }

    @Test func aFailedSaveLeavesTheConnectionsUsable() throws {
        let fixture = try PGFixture([PGPerson.self])
        let context = ModelContext(try fixture.container())
        context.insert(PGPerson("Ada", "Lovelace", email: "ada@example.com"))
        context.insert(PGPerson("Alan", "Turing", email: "alan@example.com"))
        try context.save()
        let alan = try #require(try context.fetch(FetchDescriptor<PGPerson>(predicate: #Predicate { $0.first == "Alan" })).first)
        alan.email = "ada@example.com"     // a changed object taking a unique value: refused
        for _ in 0..<12 { #expect(throws: StrataError.self) { try context.save() } }
        context.rollback()
        // Every pooled connection answers (none was left inside a failed transaction).
        for _ in 0..<20 { #expect(try context.fetchCount(FetchDescriptor<PGPerson>()) == 2) }
    }

    @Test func aStringWithNULIsRefusedWithATypedError() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let context = ModelContext(try fixture.container())
        context.insert(PGTrip("OK", "fine"))
        context.insert(PGTrip("NUL", "before\u{0}after"))
        var thrown: StrataError?
        do { try context.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .corruptRecord)
        #expect(thrown.map { "\($0)".contains("U+0000") } == true, "\(String(describing: thrown))")
        #expect(try ModelContext(try fixture.container()).fetchCount(FetchDescriptor<PGTrip>()) == 0, "nothing of the save is kept")
        // The same string in a JSON value (an array of strings) is kept.
        let trip = try #require(try context.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "NUL" })).first)
        trip.name = "after"
        trip.tags = ["a\u{0}b"]
        try context.save()
        #expect(try ModelContext(try fixture.container()).fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.code == "NUL" })).first?.tags == ["a\u{0}b"])
    }

    @Test func enumerateReadsThroughACursorABatchAtATime() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let context = ModelContext(try fixture.container())
        for i in 0..<40 {
            let trip = PGTrip(String(format: "T%02d", i), "trip \(i)", start: Double(i))
            trip.published = i % 2 == 0
            context.insert(trip)
            trip.stops = [PGStop("a\(i)"), PGStop("b\(i)")]
        }
        try context.save()
        let reader = ModelContext(try fixture.container())
        var page = FetchDescriptor<PGTrip>(predicate: #Predicate { $0.published }, sortBy: [SortDescriptor(\.start, order: .reverse)])
        page.fetchOffset = 3
        page.fetchLimit = 11
        var seen: [String] = []
        try reader.enumerate(page, batchSize: 4) { trip in
            seen.append(trip.code)
            #expect(trip.stops.map(\.place).sorted() == ["a\(Int(trip.code.dropFirst())!)", "b\(Int(trip.code.dropFirst())!)"])
        }
        let expected = (0..<40).filter { $0 % 2 == 0 }.reversed().dropFirst(3).prefix(11).map { String(format: "T%02d", $0) }
        #expect(seen == Array(expected))
        // A save from inside the block (another connection) does not disturb the cursor.
        var count = 0
        try reader.enumerate(FetchDescriptor<PGTrip>(sortBy: [SortDescriptor(\.code)]), batchSize: 16) { trip in
            count += 1
            if count == 1 {
                let writer = ModelContext(reader.container)
                writer.insert(PGTrip("ZZ", "added meanwhile"))
                try writer.save()
            }
        }
        #expect(count == 40, "the rows of the cursor's snapshot")
        #expect(try reader.fetchCount(FetchDescriptor<PGTrip>()) == 41)
    }

    /// A model without to-many relationships or external values reads its next batch while
    /// this one is made into objects: every row once, in order; a block that throws stops it
    /// with the error, and the connection goes on serving (no batch left in its way).
    @Test func enumerateReadsTheNextBatchAheadInOrder() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let context = ModelContext(try fixture.container())
        let trip = PGTrip("T1", "trip")
        context.insert(trip)
        for i in 0..<42 {
            let stop = PGStop(String(format: "S%02d", i))
            stop.trip = trip
            context.insert(stop)
        }
        try context.save()
        let reader = ModelContext(try fixture.container())
        var seen: [String] = []
        try reader.enumerate(FetchDescriptor<PGStop>(sortBy: [SortDescriptor(\.place, order: .reverse)]), batchSize: 4) { stop in
            seen.append(stop.place)
            #expect(stop.trip?.code == "T1")
        }
        #expect(seen == (0..<42).reversed().map { String(format: "S%02d", $0) })
        struct Enough: Error {}
        var before = 0
        #expect(throws: Enough.self) {
            try reader.enumerate(FetchDescriptor<PGStop>(), batchSize: 4) { _ in
                before += 1
                if before == 6 { throw Enough() }
            }
        }
        #expect(before == 6)
        for _ in 0..<3 { #expect(try ModelContext(try fixture.container()).fetchCount(FetchDescriptor<PGStop>()) == 42) }
        #expect(try reader.fetch(FetchDescriptor<PGStop>(predicate: #Predicate { $0.place == "S07" })).count == 1)
    }

    @Test func pushedDownQueries() throws {
        let fixture = try PGFixture([PGTrip.self, PGStop.self])
        let context = ModelContext(try fixture.container())
        for i in 0..<30 {
            let trip = PGTrip(String(format: "T%02d", i), "trip \(i)", start: Double(i) * 100)
            trip.published = i % 3 == 0
            trip.budget = i % 2 == 0 ? Double(i) : nil
            context.insert(trip)
        }
        try context.save()
        let reader = ModelContext(try fixture.container())
        #expect(try reader.fetchCount(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.published })) == 10)
        #expect(try reader.fetchCount(FetchDescriptor<PGTrip>(predicate: #Predicate { $0.budget == nil })) == 15)
        let threshold = Date(timeIntervalSinceReferenceDate: 500)
        var page = FetchDescriptor<PGTrip>(predicate: #Predicate { $0.start >= threshold }, sortBy: [SortDescriptor(\.start, order: .reverse)])
        page.fetchOffset = 2
        page.fetchLimit = 3
        #expect(try reader.fetch(page).map(\.code) == ["T27", "T26", "T25"])
        let some = ["T01", "T05", "T99"]
        #expect(try reader.fetch(FetchDescriptor<PGTrip>(predicate: #Predicate { some.contains($0.code) }, sortBy: [SortDescriptor(\.code)])).map(\.code) == ["T01", "T05"])
    }

    /// `delete(model:where:)` goes to the server as one `DELETE … WHERE`, in a transaction that
    /// records its history (tombstones included); a predicate that does not translate is
    /// selected by the context and deleted with the save.
    @Test func deleteWhereIsOneStatementWithItsHistory() throws {
        let fixture = try PGFixture([PGReading.self])
        let container = try fixture.container()
        let seed = ModelContext(container)
        for i in 0..<12 { seed.insert(PGReading("s\(i % 3)", Double(i))) }
        try seed.save()
        let other = try fixture.container()     // as another process would
        let context = ModelContext(other)
        context.author = "cleaner"
        try context.delete(model: PGReading.self, where: #Predicate { $0.value < 4 })
        try context.save()
        #expect(try fixture.sql("SELECT count(*)::text FROM \"\(fixture.namespace)\".\"PGReading\"").first?.first == "8")
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGReading>(sortBy: [SortDescriptor(\.value)])).map(\.value)
                == (4..<12).map(Double.init))
        let history = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        let last = try #require(history.last)
        #expect(last.author == "cleaner")
        let stations = last.changes.compactMap { change -> String? in
            guard case .delete(let delete as DefaultHistoryDelete<PGReading>) = change else { return nil }
            return delete.tombstone[\.station] as? String
        }
        #expect(stations.sorted() == ["s0", "s0", "s1", "s2"], "one deletion per row, each with its tombstone")
        #expect(last.changes.count == 4)
        // Localized search does not translate: the context selects the rows and deletes them.
        try context.delete(model: PGReading.self, where: #Predicate { $0.station.localizedStandardContains("S1") })
        try context.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGReading>(sortBy: [SortDescriptor(\.value)])).map(\.value)
                == [5, 6, 8, 9, 11])
        // Nothing selected: nothing deleted, no history.
        let tokens = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
        try context.delete(model: PGReading.self, where: #Predicate { $0.value > 100 })
        try context.save()
        #expect(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == tokens)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGReading>()) == 5)
    }

    /// A model without tombstones: the server writes the deletion's history itself.
    @Test func deleteWhereWithoutTombstonesRecordsItsHistory() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let seed = ModelContext(container)
        let birds = (0..<6).map { PGBird("b\($0)", $0 % 2 == 0 ? "wren" : "robin") }
        for bird in birds { seed.insert(bird) }
        try seed.save()
        let context = ModelContext(try fixture.container())
        context.author = "pruner \"x\""
        // The commit counter (what observers poll where there is no LISTEN) is raised by the
        // same statement, once, and only when a row was deleted.
        let commits = "SELECT \"value\" FROM \"\(fixture.namespace)\".\"strata_meta\" WHERE \"name\" = 'commits'"
        let before = try #require(fixture.sql(commits).first?.first.flatMap { $0 }.flatMap(Int.init))
        try context.delete(model: PGBird.self, where: #Predicate { $0.species == "wren" })
        try context.save()
        #expect(try fixture.sql(commits).first?.first.flatMap { $0 }.flatMap(Int.init) == before + 1)
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)])).map(\.id) == ["b1", "b3", "b5"])
        let history = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        let last = try #require(history.last)
        #expect(history.count == 2)
        #expect(last.author == "pruner \"x\"")
        let deleted = Set(last.changes.compactMap { change -> PersistentIdentifier? in
            guard case .delete = change else { return nil }
            return change.changedPersistentIdentifier
        })
        #expect(deleted == Set([birds[0], birds[2], birds[4]].map(\.persistentModelID)))
        #expect(abs(last.timestamp.timeIntervalSinceNow) < 3600)
        // Nothing selected: no history, and the counter stays.
        try context.delete(model: PGBird.self, where: #Predicate { $0.species == "owl" })
        try context.save()
        #expect(try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 2)
        #expect(try fixture.sql(commits).first?.first.flatMap { $0 }.flatMap(Int.init) == before + 1)
    }

    /// History tokens follow commit order: three writers (containers of their own, as three
    /// processes would have) save and batch-delete at once, and a reader polling the history
    /// table never sees a token before every lower one (a token committed ahead of a lower one
    /// would show as a hole, and an observer reading past it would miss the lower one forever).
    /// At the end the tokens are contiguous, one per committed save or deletion, and no writer
    /// saw an error (deadlocks and serialization failures are retried).
    @Test func historyTokensFollowCommitOrderUnderConcurrentWriters() throws {
        let fixture = try PGFixture([PGBird.self])
        _ = try fixture.container()
        // (Sorted here: `ORDER BY "token"` would sort the text column of that name.)
        let history = "SELECT \"token\"::text FROM \"\(fixture.namespace)\".\"strata_history\""
        let writers = 3, rounds = 15
        let errors = Mutex<[String]>([])
        let recorded = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let configuration = fixture.configuration
        var threads: [Thread] = []
        for w in 0..<writers {
            threads.append(Thread {
                defer { done.add(1, ordering: .releasing) }
                do {
                    let container = try ModelContainer(for: PGBird.self, configurations: configuration)
                    for r in 0..<rounds {
                        let context = ModelContext(container)
                        for i in 0..<3 { context.insert(PGBird("w\(w)-r\(r)-\(i)", i == 0 ? "wren" : "robin")) }
                        try context.save()
                        recorded.add(1, ordering: .relaxed)
                        // This writer's wren of the round before: one row, one record.
                        let doomed = "w\(w)-r\(r - 1)-0"
                        let deleting = ModelContext(container)
                        try deleting.delete(model: PGBird.self, where: #Predicate { $0.id == doomed })
                        try deleting.save()
                        if r > 0 { recorded.add(1, ordering: .relaxed) }
                    }
                } catch {
                    errors.withLock { $0.append("writer \(w): \(error)") }
                }
            })
        }
        for thread in threads { thread.start() }
        var polls = 0
        var holes: [String] = []
        while true {
            let finished = done.load(ordering: .acquiring) == writers
            let tokens = try fixture.sql(history).compactMap { $0.first.flatMap { $0 }.flatMap(Int.init) }.sorted()
            polls += 1
            if let first = tokens.first, tokens != Array(first..<(first + tokens.count)) { holes.append("\(tokens)") }
            if finished { break }
        }
        #expect(errors.withLock { $0 } == [])
        #expect(holes == [], "a reader saw a token before a lower one was committed (\(polls) polls)")
        let tokens = try fixture.sql(history).compactMap { $0.first.flatMap { $0 }.flatMap(Int.init) }.sorted()
        #expect(tokens.count == recorded.load(ordering: .relaxed))
        #expect(tokens == Array(1...max(1, tokens.count)))
        #expect(try ModelContext(try fixture.container()).fetchCount(FetchDescriptor<PGBird>()) == writers * rounds * 3 - writers * (rounds - 1))
    }

    /// A namespace whose counter rows were deleted by hand: a save and a batch deletion each
    /// fail with a typed error and change nothing (they cannot record themselves), and the
    /// next open puts the counters back.
    @Test func aMissingCounterRowFailsWritesWithoutChangingAnything() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let seed = ModelContext(container)
        seed.insert(PGBird("a", "wren"))
        try seed.save()
        let meta = "\"\(fixture.namespace)\".\"strata_meta\""
        for counter in ["commits", "history"] {
            _ = try fixture.sql("DELETE FROM \(meta) WHERE \"name\" = $1::text", [counter])
            let context = ModelContext(container)
            context.insert(PGBird("b-\(counter)", "robin"))
            do {
                try context.save()
                Issue.record("the save went through without its \(counter) counter")
            } catch let error as StrataError {
                #expect(error.code == .corruptRecord, "\(error)")
            }
            let deleting = ModelContext(container)
            try deleting.delete(model: PGBird.self, where: #Predicate { $0.species == "wren" })
            do {
                try deleting.save()
                Issue.record("the deletion saved without its \(counter) counter")
            } catch let error as StrataError {
                #expect(error.code == .corruptRecord, "\(error)")
            }
            #expect(try fixture.sql("SELECT count(*)::text FROM \"\(fixture.namespace)\".\"PGBird\"").first?.first == "1")
            // An open puts the counter back; then both writes go through.
            let reopened = try fixture.container()
            let after = ModelContext(reopened)
            after.insert(PGBird("c-\(counter)", "robin"))
            try after.save()
            try after.delete(model: PGBird.self, where: #Predicate { $0.id != "a" })
            try after.save()
        }
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGBird>()).map(\.id) == ["a"])
    }

    /// A save of new objects of a model without relationships is one statement, outside a
    /// transaction: the insert, the history record, the counter and the notification, all or
    /// nothing. A trigger logs the text of each statement that inserts into the model's table.
    /// An insert whose unique value a row holds fails that statement whole, and the save upserts
    /// in a transaction.
    @Test func aSaveOfNewObjectsIsOneStatement() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let namespace = SQL.identifier(fixture.namespace)
        let logged = try fixture.logStatements("INSERT", on: "PGBird")
        let history = PostgresTable.qualified(fixture.namespace, "strata_history")
        let context = ModelContext(container)
        for (id, species) in [("a", "wren"), ("b", "robin"), ("c", "jay")] { context.insert(PGBird(id, species)) }
        try context.save()
        for id in ["d", "e"] {
            context.insert(PGBird(id, "heron"))
            try context.save()   // the second run of the statement's text runs prepared
        }
        var entries = try logged()
        #expect(entries == [true, true, true])
        #expect(try fixture.sql("SELECT count(*)::text FROM \(history)").first?.first == "3")
        // An upsert: the one statement fails (and with it its log row); the transaction inserts
        // what it can, then upserts.
        let upserting = ModelContext(container)
        upserting.insert(PGBird("a", "owl"))
        upserting.insert(PGBird("f", "owl"))
        try upserting.save()
        entries = try logged()
        #expect(entries == [true, true, true, false, false])
        let rows = try fixture.sql("SELECT \"id\", \"species\" FROM \(namespace).\"PGBird\" ORDER BY \"id\"")
        #expect(rows == [["a", "owl"], ["b", "robin"], ["c", "jay"], ["d", "heron"], ["e", "heron"], ["f", "owl"]])
        let transactions = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(transactions.count == 4)
        #expect(transactions.first?.changes.count == 3)
        let kinds = transactions.last?.changes.map { change -> String in
            switch change {
            case .insert: return "insert"
            case .update: return "update"
            case .delete: return "delete"
            @unknown default: return "other"
            }
        }
        #expect(kinds?.sorted() == ["insert", "update"], "\(String(describing: transactions.last?.changes))")
        // The objects saved in one statement are the stored ones: changed and saved again.
        let reader = ModelContext(container)
        let d = try #require(try reader.fetch(FetchDescriptor<PGBird>(predicate: #Predicate { $0.id == "d" })).first)
        d.species = "egret"
        try reader.save()
        #expect(try fixture.sql("SELECT \"species\" FROM \(namespace).\"PGBird\" WHERE \"id\" = 'd'") == [["egret"]])
    }

    /// A save of changed objects of a model without relationships is one statement too, and
    /// still checks each row's version: a stale object makes that statement change nothing, and
    /// the save is a conflict naming it. The versions the statement leaves are the objects':
    /// changed again, they save again.
    @Test func aSaveOfChangedObjectsIsOneStatement() throws {
        let fixture = try PGFixture([PGBird.self])
        let (here, elsewhere) = try fixture.twoMachinesWithThreeBirds()
        let namespace = SQL.identifier(fixture.namespace)
        let logged = try fixture.logStatements("UPDATE", on: "PGBird")
        func species() throws -> [String?] {
            try fixture.sql("SELECT \"species\" FROM \(namespace).\"PGBird\" ORDER BY \"id\"").map { $0[0] }
        }
        let a = ModelContext(here), b = ModelContext(elsewhere)
        let birdsA = try a.fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)]))
        let birdsB = try b.fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)]))
        birdsA[0].species = "owl"
        birdsA[1].species = "owl"
        try a.save()
        birdsA[0].species = "heron"
        try a.save()
        #expect(try species() == ["heron", "owl", "jay"])
        #expect(try logged() == [true, true])
        // b read "a" before both saves: its save is a conflict, and writes nothing of it.
        birdsB[0].species = "crow"
        birdsB[2].species = "crow"
        var thrown: StrataError?
        do { try b.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(thrown?.objects == [birdsB[0].persistentModelID])
        #expect(try species() == ["heron", "owl", "jay"], "never a lost update")
        #expect(try logged() == [true, true], "the failed statements' writes were undone")
        b.rollback()
        birdsB[2].species = "crow"
        try b.save()
        #expect(try species() == ["heron", "owl", "crow"])
        #expect(try logged() == [true, true, true])
        let history = try ModelContext(here).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.map(\.changes.count) == [3, 2, 1, 1])
    }

    /// A save of deleted objects of a model without relationships is one statement as well,
    /// at the versions the context read: the deletion of an object another writer changed is a
    /// conflict, and deletes nothing.
    @Test func aSaveOfDeletedObjectsIsOneStatement() throws {
        let fixture = try PGFixture([PGBird.self])
        let (here, elsewhere) = try fixture.twoMachinesWithThreeBirds()
        let namespace = SQL.identifier(fixture.namespace)
        let logged = try fixture.logStatements("DELETE", on: "PGBird")
        func ids() throws -> [String?] {
            try fixture.sql("SELECT \"id\" FROM \(namespace).\"PGBird\" ORDER BY \"id\"").map { $0[0] }
        }
        let x = ModelContext(here), y = ModelContext(elsewhere)
        let birdsX = try x.fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)]))
        let birdsY = try y.fetch(FetchDescriptor<PGBird>(sortBy: [SortDescriptor(\.id)]))
        x.delete(birdsX[0])
        try x.save()
        #expect(try ids() == ["b", "c"])
        #expect(try logged() == [true])
        birdsX[1].species = "owl"
        try x.save()
        // y read "b" before x changed it: deleting it is a conflict.
        y.delete(birdsY[1])
        var thrown: StrataError?
        do { try y.save() } catch let error as StrataError { thrown = error }
        #expect(thrown?.code == .saveConflict, "\(String(describing: thrown))")
        #expect(thrown?.objects == [birdsY[1].persistentModelID])
        #expect(try ids() == ["b", "c"], "never a changed row deleted unseen")
        #expect(try logged() == [true])
        y.rollback()
        y.delete(birdsY[2])
        try y.save()
        #expect(try ids() == ["b"])
        #expect(try logged() == [true, true])
        let history = try ModelContext(here).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        let deletes = history.map { transaction in
            transaction.changes.filter { if case .delete = $0 { return true } else { return false } }.count
        }
        #expect(deletes == [0, 1, 0, 1])
    }

    /// Writers on threads of their own, each with its own container, add one to the same
    /// object again and again, each change a save of one statement (a model without
    /// relationships): a save over another's change is a conflict, which the writer answers by
    /// reading the object again. No increment is lost, and each saved one has its history record.
    @Test func concurrentChangesOfOneObjectAreNeverLost() throws {
        let fixture = try PGFixture([PGTally.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGTally("visits"))
        try seed.save()
        let writers = 3, increments = 10
        let errors = Mutex<[String]>([])
        let conflicts = Atomic<Int>(0)
        let configuration = fixture.configuration
        var threads: [Thread] = []
        let finished = DispatchGroup()
        for w in 0..<writers {
            finished.enter()
            threads.append(Thread {
                defer { finished.leave() }
                do {
                    let container = try ModelContainer(for: PGTally.self, configurations: configuration)
                    var done = 0
                    while done < increments {
                        let context = ModelContext(container)
                        guard let tally = try context.fetch(FetchDescriptor<PGTally>()).first else { throw StrataError(.storeFailure, "no tally") }
                        tally.count += 1
                        do {
                            try context.save()
                            done += 1
                        } catch let error as StrataError where error.code == .saveConflict {
                            conflicts.add(1, ordering: .relaxed)
                        }
                    }
                } catch {
                    errors.withLock { $0.append("writer \(w): \(error)") }
                }
            })
        }
        for thread in threads { thread.start() }
        finished.wait()
        #expect(errors.withLock { $0 } == [])
        let context = ModelContext(try fixture.container())
        #expect(try context.fetch(FetchDescriptor<PGTally>()).map(\.count) == [writers * increments],
                "\(conflicts.load(ordering: .relaxed)) conflicts")
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == 1 + writers * increments)
    }

    /// A read-only store refuses a batch deletion with the same typed error as a save.
    @Test func aReadOnlyStoreRefusesDeleteWhere() throws {
        let fixture = try PGFixture([PGReading.self])
        let seed = ModelContext(try fixture.container())
        seed.insert(PGReading("s0", 1))
        try seed.save()
        let readOnly = PostgresConfiguration(schema: Schema([PGReading.self]), url: fixture.url, namespace: fixture.namespace, allowsSave: false)
        let context = ModelContext(try ModelContainer(for: PGReading.self, configurations: readOnly))
        try context.delete(model: PGReading.self)
        #expect(throws: StrataError.self) { try context.save() }
        #expect(context.hasChanges, "the deletion stays pending")
        #expect(try ModelContext(try fixture.container()).fetchCount(FetchDescriptor<PGReading>()) == 1)
    }

    /// History records are kept compact (runs of ids, in one string), written by hand: an author
    /// with quotes, a newline and a control character comes back as it was, and records in the
    /// earlier forms (DataStoreHistoryRecord's own Codable form; form 2, ids as an array of
    /// numbers) still read. The record column is compressed with lz4 where the server has it.
    @Test func historyRecordsReadInEveryForm() throws {
        let fixture = try PGFixture([PGReading.self])
        let container = try fixture.container()
        let context = ModelContext(container)
        context.author = "Ada \"the\" importer\n\u{1}é"
        let readings = (0..<3).map { PGReading("s\($0)", Double($0)) }
        for r in readings { context.insert(r) }
        try context.save()
        readings[1].value = 10
        try context.save()
        let first = try fixture.sql("SELECT \"record\"::text FROM \"\(fixture.namespace)\".\"strata_history\" ORDER BY \"token\" LIMIT 1")
        let text = try #require(first.first?.first ?? nil)
        #expect(text.contains("\"runs\""), "the compact form: \(text)")
        #expect(text.contains("\"v\": 3") && text.contains("\"ids\": \""), "form 3, ids as one string: \(text)")
        let lz4 = try fixture.sql("SELECT ('lz4' = ANY(enumvals))::text FROM pg_settings WHERE name = 'default_toast_compression'")
        if lz4.first?.first ?? nil == "true" {
            let compression = try fixture.sql("SELECT attcompression::text FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'record'",
                                              ["\"\(fixture.namespace)\".\"strata_history\""])
            #expect(compression.first?.first ?? nil == "l", "the history's records are compressed with lz4")
        }
        // A record in the first form, as an earlier version wrote it.
        let id = readings[2].persistentModelID
        let old = DataStoreHistoryRecord(timestamp: Date(timeIntervalSinceReferenceDate: 1000), author: "old", bundleIdentifier: "b", processIdentifier: "1",
                                         changes: [.init(kind: .update, identifier: id, attributes: ["value"])])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(old), as: UTF8.self)
        let ns = "\"\(fixture.namespace)\""
        _ = try fixture.sql("WITH t AS (UPDATE \(ns).\"strata_meta\" SET \"value\" = ((\"value\")::bigint + 1)::text WHERE \"name\" = 'history' RETURNING (\"value\")::bigint AS v) INSERT INTO \(ns).\"strata_history\" (\"token\", \"record\") SELECT t.v, $1::jsonb FROM t RETURNING 1", [json])
        // Form 2, as the version before wrote it: ids as an array of numbers.
        let key = try #require(fixture.sql("SELECT \"_id\"::text FROM \(ns).\"PGReading\" ORDER BY \"_id\" LIMIT 1").first?.first ?? nil)
        let formTwo = #"{"v": 2, "timestamp": 2000, "author": "two", "bundle": "b", "process": "1", "runs": [{"kind": "update", "model": "PGReading", "ids": [\#(key)], "attributes": ["value"]}]}"#
        _ = try fixture.sql("WITH t AS (UPDATE \(ns).\"strata_meta\" SET \"value\" = ((\"value\")::bigint + 1)::text WHERE \"name\" = 'history' RETURNING (\"value\")::bigint AS v) INSERT INTO \(ns).\"strata_history\" (\"token\", \"record\") SELECT t.v, $1::jsonb FROM t RETURNING 1", [formTwo])
        let history = try ModelContext(try fixture.container()).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        try #require(history.count == 4)
        #expect(history[0].author == "Ada \"the\" importer\n\u{1}é")
        #expect(history[0].changes.count == 3)
        #expect(Set(history[0].changes.map(\.changedPersistentIdentifier)) == Set(readings.map(\.persistentModelID)))
        let updated = history[1].changes.compactMap { change -> [String]? in
            guard case .update(let update as DefaultHistoryUpdate<PGReading>) = change else { return nil }
            return update.updatedAttributes.map(\.name)
        }
        #expect(updated == [["value"]])
        #expect(history[1].changes.first?.changedPersistentIdentifier == readings[1].persistentModelID)
        #expect(history[2].author == "old")
        #expect(history[2].changes.first?.changedPersistentIdentifier == id)
        #expect(history[3].author == "two")
        #expect(history[3].changes.first?.changedPersistentIdentifier == readings[0].persistentModelID)
    }

    /// A form-3 record whose ids are not numbers is a typed error naming the record, not a trap
    /// and not a record with fewer changes.
    @Test func aHistoryRecordWithBadIdsIsATypedError() throws {
        let fixture = try PGFixture([PGReading.self])
        let context = ModelContext(try fixture.container())
        context.insert(PGReading("s", 1))
        try context.save()
        let ns = "\"\(fixture.namespace)\""
        _ = try fixture.sql(#"UPDATE \#(ns)."strata_history" SET "record" = jsonb_set("record", '{runs,0,ids}', '"1,x,3"')"#)
        #expect {
            _ = try ModelContext(try fixture.container()).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        } throws: { error in
            (error as? StrataError)?.code == .corruptRecord && "\(error)".contains("\"x\"")
        }
    }
}
