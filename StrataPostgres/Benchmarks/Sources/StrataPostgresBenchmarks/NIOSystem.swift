import Foundation
import PostgresNIO
import Synchronization

/// The same work written by hand with postgres-nio: one connection, named prepared
/// statements (`PostgresPreparedStatement`) with binary parameters, `unnest` of arrays for
/// bulk inserts and upserts, `ON CONFLICT (id) DO UPDATE`, the answer streamed row by row.
///
/// Its table is `nio_bench.course`: `id uuid PRIMARY KEY`, typed columns, `tags jsonb`,
/// `created_at timestamptz` (indexed), `author_id bigint` nullable.
@MainActor
final class NIOSystem: BenchSystem {
    let name = "nio"
    let server: Server
    private var connection: PostgresConnection?
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    nonisolated static let namespace = "nio_bench"
    nonisolated static let columns = "id, title, summary, duration, created_at, is_published, tags, author_id"

    init(server: Server) { self.server = server }

    private func conn() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        let c = try await PostgresConnection.connect(configuration: server.nioConfiguration, id: 2, logger: Server.logger)
        connection = c
        return c
    }

    func close() async {
        try? await connection?.close()
        connection = nil
    }

    func reset() async throws {
        let c = try await conn()
        try await c.run("DROP SCHEMA IF EXISTS \(Self.namespace) CASCADE")
        try await c.run("CREATE SCHEMA \(Self.namespace)")
        try await c.run("""
            CREATE TABLE \(Self.namespace).course (
                id uuid PRIMARY KEY,
                title text NOT NULL,
                summary text NOT NULL,
                duration double precision NOT NULL,
                created_at timestamptz NOT NULL,
                is_published boolean NOT NULL,
                tags jsonb NOT NULL,
                author_id bigint)
            """)
        try await c.run("CREATE INDEX course_created_at ON \(Self.namespace).course (created_at)")
    }

    // MARK: statements

    /// Rows of `unnest` arrays, one array per column (authorID: -1 for none, made NULL in SQL).
    struct Columns {
        var ids: [UUID] = [], titles: [String] = [], summaries: [String] = [], durations: [Double] = []
        var dates: [Date] = [], published: [Bool] = [], tags: [String] = [], authors: [Int] = []

        init(capacity: Int) {
            ids.reserveCapacity(capacity); titles.reserveCapacity(capacity); summaries.reserveCapacity(capacity)
            durations.reserveCapacity(capacity); dates.reserveCapacity(capacity); published.reserveCapacity(capacity)
            tags.reserveCapacity(capacity); authors.reserveCapacity(capacity)
        }

        mutating func append(_ c: Course, tagsJSON: String) {
            ids.append(c.id); titles.append(c.title); summaries.append(c.summary); durations.append(c.duration)
            dates.append(c.createdAt); published.append(c.isPublished); tags.append(tagsJSON); authors.append(c.authorID ?? -1)
        }

        func bindings() -> PostgresBindings {
            var b = PostgresBindings(capacity: 8)
            b.append(ids); b.append(titles); b.append(summaries); b.append(durations)
            b.append(dates); b.append(published); b.append(tags); b.append(authors)
            return b
        }
    }

    nonisolated static let unnestSelect = """
        SELECT id, title, summary, duration, created_at, is_published, tags::jsonb, NULLIF(author_id, -1)
        FROM unnest($1::uuid[], $2::text[], $3::text[], $4::float8[], $5::timestamptz[], $6::bool[], $7::text[], $8::int8[])
            AS t(id, title, summary, duration, created_at, is_published, tags, author_id)
        """

    struct InsertMany: PostgresPreparedStatement {
        static let sql = "INSERT INTO nio_bench.course (\(NIOSystem.columns)) " + NIOSystem.unnestSelect
        typealias Row = ()
        let columns: Columns
        func makeBindings() throws -> PostgresBindings { columns.bindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    struct UpsertMany: PostgresPreparedStatement {
        static let sql = "INSERT INTO nio_bench.course (\(NIOSystem.columns)) " + NIOSystem.unnestSelect + """
             ON CONFLICT (id) DO UPDATE SET title = excluded.title, summary = excluded.summary, duration = excluded.duration,
                created_at = excluded.created_at, is_published = excluded.is_published, tags = excluded.tags, author_id = excluded.author_id
            """
        typealias Row = ()
        let columns: Columns
        func makeBindings() throws -> PostgresBindings { columns.bindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    typealias CourseRow = (UUID, String, String, Double, Date, Bool, String, Int?)

    struct ByID: PostgresPreparedStatement {
        static let sql = "SELECT \(NIOSystem.columns) FROM nio_bench.course WHERE id = $1"
        typealias Row = CourseRow
        let id: UUID
        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings(capacity: 1)
            b.append(id)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct CountAbove: PostgresPreparedStatement {
        static let sql = "SELECT count(*) FROM nio_bench.course WHERE duration > $1 AND is_published"
        typealias Row = Int
        let x: Double
        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings(capacity: 1)
            b.append(x)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int.self) }
    }

    struct Page: PostgresPreparedStatement {
        static let sql = "SELECT \(NIOSystem.columns) FROM nio_bench.course ORDER BY created_at DESC LIMIT $1 OFFSET $2"
        typealias Row = CourseRow
        let limit: Int, offset: Int
        func makeBindings() throws -> PostgresBindings {
            var b = PostgresBindings(capacity: 2)
            b.append(limit)
            b.append(offset)
            return b
        }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    struct DeleteUnpublished: PostgresPreparedStatement {
        static let sql = "DELETE FROM nio_bench.course WHERE NOT is_published"
        typealias Row = ()
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    private func course(_ r: CourseRow) throws -> Course {
        Course(id: r.0, title: r.1, summary: r.2, duration: r.3, createdAt: r.4, isPublished: r.5,
               tags: try decoder.decode([String].self, from: Data(r.6.utf8)), authorID: r.7)
    }

    private func tagsJSON(_ tags: [String]) throws -> String {
        String(decoding: try encoder.encode(tags), as: UTF8.self)
    }

    /// Rows per INSERT statement: 10k rows are a ~2.5 MB message.
    nonisolated static let rowsPerStatement = 10_000

    private func write(_ n: Int, upsert: Bool, _ course: (Int) -> Course) async throws {
        let c = try await conn()
        try await c.run("BEGIN")
        do {
            var start = 0
            while start < n {
                let end = min(n, start + Self.rowsPerStatement)
                var columns = Columns(capacity: end - start)
                for i in start..<end {
                    let x = course(i)
                    columns.append(x, tagsJSON: try tagsJSON(x.tags))
                }
                if upsert {
                    try await c.run(UpsertMany(columns: columns))
                } else {
                    try await c.run(InsertMany(columns: columns))
                }
                start = end
            }
            try await c.run("COMMIT")
        } catch {
            try? await c.run("ROLLBACK")
            throw error
        }
    }

    // MARK: workloads

    func insert(_ n: Int, data: Dataset) async throws {
        try await write(n, upsert: false) { data.course($0) }
    }

    func saveEach(_ range: Range<Int>, data: Dataset) async throws {
        let c = try await conn()
        for i in range {
            // One INSERT, its own transaction (autocommit): one round trip.
            var columns = Columns(capacity: 1)
            let x = data.course(i)
            columns.append(x, tagsJSON: try tagsJSON(x.tags))
            try await c.run(InsertMany(columns: columns))
        }
    }

    func total() async throws -> Int {
        try await conn().integer("SELECT count(*) FROM \(Self.namespace).course")
    }

    func pointFetch(_ ids: [UUID]) async throws -> Outcome {
        let c = try await conn()
        var outcome = Outcome()
        for id in ids {
            var found = false
            for try await row in try await c.execute(ByID(id: id), logger: Server.logger) {
                outcome.add(try course(row))
                found = true
            }
            if !found { throw BenchError("nio: \(id) not found") }
        }
        return outcome
    }

    func count(above x: Double, times: Int) async throws -> Outcome {
        let c = try await conn()
        var outcome = Outcome()
        for _ in 0..<times {
            for try await count in try await c.execute(CountAbove(x: x), logger: Server.logger) { outcome.count += count }
        }
        return outcome
    }

    func page(limit: Int, offset: Int, pages: Int) async throws -> Outcome {
        let c = try await conn()
        var outcome = Outcome()
        for _ in 0..<pages {
            for try await row in try await c.execute(Page(limit: limit, offset: offset), logger: Server.logger) {
                outcome.add(try course(row))
            }
        }
        return outcome
    }

    /// A server-side cursor in a read-only transaction, `FETCH FORWARD batchSize` at a time,
    /// each batch's rows decoded as they stream in. (One plain SELECT streamed through
    /// postgres-nio's row sequence was as fast up to ~25k rows, then 5 to 10 times slower per row
    /// at 50k-100k here.)
    func enumerateAll(batchSize: Int) async throws -> Outcome {
        let c = try await conn()
        var outcome = Outcome()
        try await c.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            try await c.run("DECLARE nio_all NO SCROLL CURSOR FOR SELECT \(Self.columns) FROM \(Self.namespace).course")
            let fetch = PostgresQuery(unsafeSQL: "FETCH FORWARD \(max(1, batchSize)) FROM nio_all")
            let decoder = self.decoder
            while true {
                // Each batch's rows decoded on the connection's event loop as they arrive
                // (`onRow`): no hop to this task per row.
                let batch = Mutex((Outcome(), 0))
                _ = try await c.query(fetch, logger: Server.logger) { row in
                    let r = try row.decode(CourseRow.self)
                    let c = Course(id: r.0, title: r.1, summary: r.2, duration: r.3, createdAt: r.4, isPublished: r.5,
                                   tags: try decoder.decode([String].self, from: Data(r.6.utf8)), authorID: r.7)
                    batch.withLock { $0.0.add(c); $0.1 += 1 }
                }.get()
                let (seen, rows) = batch.withLock { $0 }
                outcome.count += seen.count
                outcome.checksum &+= seen.checksum
                if rows < batchSize { break }
            }
            try await c.run("CLOSE nio_all")
            try await c.run("COMMIT")
        } catch {
            try? await c.run("ROLLBACK")
            throw error
        }
        return outcome
    }

    func upsert(_ n: Int, data: Dataset) async throws {
        try await write(n, upsert: true) { upsertedCourse($0, n: n, data: data) }
    }

    func deleteUnpublished() async throws {
        try await conn().run(DeleteUnpublished())
    }
}

extension PostgresConnection {
    /// Runs a prepared statement that answers no rows. (postgres-nio's `execute` that returns
    /// the command tag stops the program on an INSERT here: "commandTag may only be called if
    /// all rows have been consumed"; reading the empty row sequence to its end works.)
    func run<Statement: PostgresPreparedStatement>(_ statement: Statement) async throws where Statement.Row == () {
        let rows: AsyncThrowingMapSequence<PostgresRowSequence, ()> = try await execute(statement, logger: Server.logger)
        for try await _ in rows {}
    }
}
