// Statements run again and again are named prepared statements of their connection
// (`PreparedStatements`): they answer as the same statements unprepared do, and where the server
// no longer has one or can no longer use its plan, the statement runs unprepared (in a
// transaction, the transaction runs again).
import Foundation
import Testing
import Strata
@testable import StrataPostgres
import StrataPostgresTestSupport

@Suite struct PreparedStatementTests {
    // MARK: Parameters as text

    @Test func everyParameterIsTakenAsText() {
        let cases: [(String, Int, String)] = [
            ("SELECT a FROM t0 WHERE x = ($1::uuid)", 1, "SELECT a FROM t0 WHERE x = ($1::text::uuid)"),
            ("SELECT a FROM t WHERE x = ANY($1::bigint[]) AND y = $2", 2, "SELECT a FROM t WHERE x = ANY($1::text::bigint[]) AND y = $2::text"),
            ("SELECT $2, $1 ,$3)", 3, "SELECT $2::text, $1::text ,$3::text)"),
            ("SELECT f($1::numeric)", 1, "SELECT f($1::text::numeric)"),
            // In strings and quoted names, in a name, a `$` is no parameter.
            ("SELECT 'it''s $1', \"a$1\"\"$2\", a$1, t.\"x\" FROM t WHERE x = $1", 1,
             "SELECT 'it''s $1', \"a$1\"\"$2\", a$1, t.\"x\" FROM t WHERE x = $1::text"),
            ("SELECT x FROM t WHERE y = 'NaN'::float8", 0, "SELECT x FROM t WHERE y = 'NaN'::float8"),
            ("SELECT 'é', \"日本\" WHERE x = ($1::text)", 1, "SELECT 'é', \"日本\" WHERE x = ($1::text::text)"),
        ]
        for (sql, count, expected) in cases {
            #expect(SQL.textParameters(sql, count: count) == expected, "\(sql)")
        }
    }

    @Test func unclearTextIsLeftUnprepared() {
        let cases: [(String, Int)] = [
            ("DO $$ BEGIN NULL; END $$", 0), ("SELECT $tag$x$tag$", 0), ("SELECT 1 -- $1", 1), ("SELECT /* $1 */ 1", 1),
            ("SELECT E'\\n' WHERE x = $1", 1), ("SELECT 'a\\' WHERE x = $1", 1), ("SELECT x WHERE y = $1[1]", 1),
            ("SELECT x WHERE y = $1.f", 1), ("SELECT x WHERE y = $1:", 1), ("SELECT x WHERE y = $2", 2), ("SELECT x WHERE y = $3", 2),
            ("SELECT x WHERE y = $0", 1), ("SELECT 'unterminated WHERE x = $1", 1), ("SELECT \"unterminated WHERE x = $1", 1),
            ("SELECT x WHERE y = $1", 0), ("SELECT x WHERE y = $99999999999999999999999", 1), ("SELECT x WHERE y = $", 1),
        ]
        for (sql, count) in cases {
            #expect(SQL.textParameters(sql, count: count) == nil, "\(sql)")
        }
    }

    // MARK: On the server

    private func session() throws -> PostgresSession {
        PostgresSession(configuration: try PostgresConfiguration(url: try TestServer.url()).connectionConfiguration(), location: "test")
    }

    /// The statements the server keeps for the connection (protocol-level ones included).
    private func serverStatements(_ c: SQLConnection) throws -> Int {
        Int(try c.query("SELECT count(*)::text FROM pg_prepared_statements").first?.first??.description ?? "") ?? -1
    }

    @Test func aTextRunTwiceIsPreparedAndAnswersAlike() throws {
        let sql = """
            SELECT ($1::uuid)::text, ($2::bigint + 1)::text, $3::text, ($4::jsonb)::text, ($5::double precision)::text,
                   ($6::bytea)::text, ($7::text[])::text, ($8::numeric)::text, ($9::boolean)::text, coalesce($10::text, 'null')
            """
        let binds: [[String?]] = [
            ["0F0E0D0C-0B0A-0908-0706-050403020100", "41", "Lisbon é 日本 😀 'q' \"d\" \\", #"{"b": [1, 2.5], "a": null}"#, "0.1",
             "\\x00ff10", #"{"a","b c",NULL}"#, "12.3450", "true", nil],
            [nil, nil, "", "[]", "-Infinity", "\\x", "{}", "NaN", "f", "x"],
            ["00000000-0000-0000-0000-000000000000", "-9223372036854775807", "$1 ::text", "\"\"", "5e-324", nil, nil, "1e3", "yes", "$2"],
        ]
        try session().withConnection { c in
            let statements = try #require(c.statements)
            for (i, bind) in binds.enumerated() {
                let unprepared = try c.query(sql, bind)
                let reused = try c.query(sql, bind, reused: true)
                #expect(reused == unprepared, "run \(i)")
                #expect(statements.preparedTexts == (i == 0 ? [] : [sql]), "prepared on the second run")
            }
            #expect(try serverStatements(c) == 1)
        }
    }

    /// Typed arrays in binary format, then text: prepared as written (each parameter typed by
    /// its cast), answering as the unnamed statement does, NULLs and empty arrays included.
    @Test func arraysAndTextsArePreparedAsWritten() throws {
        let sql = """
            SELECT ($1::bigint[])::text, ($2::double precision[])::text, ($3::boolean[])::text, ($4::uuid[])::text,
                   ($5::text[])::text, ($6::bytea[])::text, $7::text, coalesce($8::text, 'null'), ($9::text::jsonb)::text
            """
        func arrays(_ round: Int) throws -> [SQLArray] {
            var ints = SQLArray(.bigint), doubles = SQLArray(.double), bools = SQLArray(.boolean), uuids = SQLArray(.uuid)
            var texts = SQLArray(.text), bytes = SQLArray(.bytea)
            if round > 0 {
                ints.append(Int64.min); ints.appendNull(); ints.append(Int64(round))
                doubles.append(-0.0); doubles.append(.infinity); doubles.append(0.1 * Double(round))
                bools.append(true); bools.appendNull()
                uuids.append(UUID(uuid: (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(round))))
                texts.append(text: "é 日本 😀 'q' \"d\" \\ {x,y}"); texts.appendNull(); texts.append(text: "")
                bytes.append(bytes: Data([0, 255, UInt8(round)])); bytes.append(bytes: Data())
            }
            return [ints, doubles, bools, uuids, texts, bytes]
        }
        try session().withConnection { c in
            let statements = try #require(c.statements)
            for round in 0..<3 {
                let texts: [String?] = round == 1 ? [nil, "x", "[]"] : ["$1 ::text", nil, #"{"a": [1, 2.5]}"#]
                let unprepared = try c.query(sql, arrays: try arrays(round), then: texts)
                let reused = try c.query(sql, arrays: try arrays(round), then: texts, reused: true)
                #expect(reused == unprepared, "round \(round)")
                #expect(statements.preparedTexts == (round == 0 ? [] : [sql]), "prepared on the second run")
                if round == 2 {
                    #expect(reused.first?.prefix(4) == [#"{-9223372036854775808,NULL,2}"#, "{-0,Infinity,0.2}", "{t,NULL}",
                                                         "{00010203-0405-0607-0809-0a0b0c0d0e02}"])
                    #expect(reused.first?.suffix(5) == [#"{"é 日本 😀 'q' \"d\" \\ {x,y}",NULL,""}"#, #"{"\\x00ff02","\\x"}"#, "$1 ::text", "null",
                                                         #"{"a": [1, 2.5]}"#])
                }
            }
            #expect(try serverStatements(c) == 1)
        }
    }

    @Test func aStatementTheServerLostRunsUnprepared() throws {
        let sql = "SELECT ($1::bigint * 2)::text"
        try session().withConnection { c in
            let statements = try #require(c.statements)
            #expect(try c.query(sql, ["1"], reused: true) == [["2"]])
            #expect(try c.query(sql, ["2"], reused: true) == [["4"]])
            #expect(statements.preparedTexts == [sql])
            try c.execute("DEALLOCATE ALL")   // as DISCARD ALL, or a pooler, would
            #expect(try c.query(sql, ["3"], reused: true) == [["6"]], "26000, then unprepared")
            #expect(statements.preparedTexts.isEmpty)
            #expect(try c.query(sql, ["4"], reused: true) == [["8"]])
            #expect(try c.query(sql, ["5"], reused: true) == [["10"]])
            #expect(statements.preparedTexts == [sql], "prepared again")
        }
    }

    @Test func aPlanOutdatedByASchemaChangeRunsUnprepared() throws {
        let namespace = TestServer.namespace()
        let table = PostgresTable.qualified(namespace, "t")
        let sql = "SELECT \"x\" FROM \(table) WHERE \"x\" <> $1::text ORDER BY \"x\""
        try session().withConnection { c in
            let statements = try #require(c.statements)
            try c.execute("CREATE SCHEMA \(SQL.identifier(namespace))")
            defer { _ = try? c.execute("DROP SCHEMA \(SQL.identifier(namespace)) CASCADE") }
            try c.execute("CREATE TABLE \(table) (\"x\" text)")
            try c.execute("INSERT INTO \(table) VALUES ('a'), ('b')")
            #expect(try c.query(sql, ["a"], reused: true) == [["b"]])
            #expect(try c.query(sql, ["b"], reused: true) == [["a"]])
            #expect(statements.preparedTexts == [sql])
            // The statement's result type changes: "cached plan must not change result type".
            try c.execute("ALTER TABLE \(table) ALTER COLUMN \"x\" TYPE varchar(20)")
            #expect(try c.query(sql, ["z"], reused: true) == [["a"], ["b"]], "0A000, then unprepared")
            #expect(statements.preparedTexts.isEmpty)
            // A table dropped and made again under the same name: the statement finds the new one.
            #expect(try c.query(sql, ["a"], reused: true) == [["b"]])
            #expect(try c.query(sql, ["b"], reused: true) == [["a"]])
            #expect(statements.preparedTexts == [sql], "prepared again on its second run")
            try c.execute("DROP TABLE \(table)")
            try c.execute("CREATE TABLE \(table) (\"x\" varchar(20))")
            try c.execute("INSERT INTO \(table) VALUES ('c')")
            #expect(try c.query(sql, ["a"], reused: true) == [["c"]])
        }
    }

    @Test func errorsOfAPreparedStatementAreTheServers() throws {
        let sql = "SELECT (1 / $1::int)::text"
        try session().withConnection { c in
            #expect(try c.query(sql, ["1"], reused: true) == [["1"]])
            #expect(try c.query(sql, ["1"], reused: true) == [["1"]])
            #expect(c.statements?.preparedTexts == [sql])
            var prepared: (any Error)? = nil
            do { try c.query(sql, ["0"], reused: true) } catch { prepared = error }
            var unprepared: (any Error)? = nil
            do { try c.query(sql, ["0"]) } catch { unprepared = error }
            let error = try #require(prepared)
            #expect(PostgresStoreError.sqlState(error) == "22012")
            #expect(!PostgresStoreError.isConnectionLevel(error))
            // The same message as unprepared (the cause is postgres-nio's older error type).
            let strata = try #require(error as? StrataError), other = try #require(unprepared as? StrataError)
            #expect(strata.code == other.code && strata.message == other.message)
            // The connection and its statement are still good.
            #expect(try c.query(sql, ["1"], reused: true) == [["1"]])
        }
    }

    @Test func atMostCapacityStatementsAreKept() throws {
        try session().withConnection { c in
            let statements = try #require(c.statements)
            let texts = (0..<(PreparedStatements.capacity + 6)).map { "SELECT ($1::int + \($0))::text" }
            for (i, text) in texts.enumerated() {
                #expect(try c.query(text, ["1"], reused: true) == [["\(i + 1)"]])
                #expect(try c.query(text, ["2"], reused: true) == [["\(i + 2)"]])
            }
            #expect(statements.preparedTexts.count == PreparedStatements.capacity)
            #expect(statements.preparedTexts == Set(texts.suffix(PreparedStatements.capacity)), "the least recently used closed")
            #expect(try serverStatements(c) == PreparedStatements.capacity, "and deallocated on the server")
        }
    }

    @Test func statementsRunAgainInATransactionArePrepared() throws {
        let sql = "SELECT ($1::int)::text"
        let session = try session()
        try session.transaction { (c: SQLConnection) throws in
            #expect(c.statements != nil)
            for _ in 0..<3 { #expect(try c.query(sql, ["7"], reused: true) == [["7"]]) }
            #expect(try serverStatements(c) == 1)
        }
        // A transaction that never runs again (a batched fetch, which hands rows to its caller)
        // prepares nothing: it could not recover from a statement the server lost.
        try session.transaction(retries: 0) { (c: SQLConnection) throws in
            #expect(c.statements == nil)
        }
    }

    /// A prepared statement the server lost, in a transaction: the failure aborts the
    /// transaction, which runs again with the statement unprepared; its write is made once.
    @Test func aStatementLostInATransactionRunsTheTransactionAgain() throws {
        let namespace = TestServer.namespace()
        let table = PostgresTable.qualified(namespace, "t")
        let sql = "INSERT INTO \(table) (\"x\") VALUES ($1::int) RETURNING (\"x\")::text"
        let session = try session()
        try session.withConnection { c in
            try c.execute("CREATE SCHEMA \(SQL.identifier(namespace))")
            try c.execute("CREATE TABLE \(table) (\"x\" int)")
        }
        defer { _ = try? session.withConnection { try $0.execute("DROP SCHEMA \(SQL.identifier(namespace)) CASCADE") } }
        try session.transaction { (c: SQLConnection) throws in
            for x in ["1", "2"] { #expect(try c.query(sql, [x], reused: true) == [[x]]) }
            #expect(c.statements?.preparedTexts == [sql])
        }
        var attempts = 0
        try session.transaction { (c: SQLConnection) throws in
            attempts += 1
            if attempts == 1 { try c.execute("DEALLOCATE ALL") }   // as DISCARD ALL, or a pooler, would
            #expect(try c.query(sql, ["3"], reused: true) == [["3"]])
        }
        #expect(attempts == 2, "26000 aborted the first run; the second ran it unprepared")
        let rows = try session.withConnection { try $0.query("SELECT (\"x\")::text FROM \(table) ORDER BY \"x\"") }
        #expect(rows == [["1"], ["2"], ["3"]])
    }

    /// Through the store: point fetches (prepared from the second), and the same fetch after the
    /// namespace's tables were dropped and made again by another container.
    @Test func fetchesThroughPreparedStatements() throws {
        let fixture = try PGFixture([PGBird.self])
        let container = try fixture.container()
        let context = ModelContext(container)
        for (id, species) in [("a", "Robin"), ("b", "Wren"), ("c", "Jay")] { context.insert(PGBird(id, species)) }
        try context.save()
        for _ in 0..<3 {
            for id in ["a", "b", "c", "d"] {
                let found = try ModelContext(container).fetch(FetchDescriptor<PGBird>(predicate: #Predicate { $0.id == id }))
                #expect(found.map(\.species) == ["a": ["Robin"], "b": ["Wren"], "c": ["Jay"], "d": []][id])
            }
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<PGBird>(predicate: #Predicate { $0.species != "Wren" })) == 2)
        }
        _ = try fixture.sql("DROP SCHEMA \(SQL.identifier(fixture.namespace)) CASCADE")
        let remade = ModelContext(try fixture.container())
        remade.insert(PGBird("a", "Heron"))
        try remade.save()
        let id = "a"
        #expect(try ModelContext(container).fetch(FetchDescriptor<PGBird>(predicate: #Predicate { $0.id == id })).map(\.species) == ["Heron"])
    }
    /// `preparesStatements: false` (behind a transaction-mode pooler): the store's connections
    /// prepare nothing, and its fetches answer the same.
    @Test func aConfigurationCanTurnPreparedStatementsOff() throws {
        let fixture = try PGFixture([PGBird.self])
        var configuration = fixture.configuration
        configuration.preparesStatements = false
        let store = try PostgresStore(configuration, migrationPlan: nil)
        try store.session.withConnection { c in
            #expect(c.statements == nil)
            for _ in 0..<3 { _ = try c.query("SELECT $1::text", ["x"], reused: true) }
            #expect(try serverStatements(c) == 0)
        }
        let container = try ModelContainer(for: Schema([PGBird.self]), configurations: configuration)
        let context = ModelContext(container)
        context.insert(PGBird("a", "Robin"))
        try context.save()
        for _ in 0..<3 {
            let id = "a"
            #expect(try ModelContext(container).fetch(FetchDescriptor<PGBird>(predicate: #Predicate { $0.id == id })).map(\.species) == ["Robin"])
        }
        // Nor does it LISTEN (behind such a pooler the notifications go to a server connection
        // another client then has): it reads the save counter, and still sees another
        // container's saves.
        #expect(!store.isListening)
        let before = try store.changeToken()
        let other = ModelContext(try fixture.container())
        other.insert(PGBird("b", "Wren"))
        try other.save()
        #expect(try store.changeToken() != before)
    }
}
