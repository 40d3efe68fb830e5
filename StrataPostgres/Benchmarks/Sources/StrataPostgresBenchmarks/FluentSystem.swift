import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import Synchronization

/// The Fluent model, as a Vapor app declares it. Its table is `fluent_bench.courses`, made by
/// the migration below: `id uuid PRIMARY KEY` (`@ID`), typed columns, `tags text[]` (Fluent's
/// mapping of `[String]`), `created_at timestamptz`, indexed.
final class FluentCourse: Model, @unchecked Sendable {
    static let schema = "courses"
    static let space: String? = "fluent_bench"

    @ID(key: .id) var id: UUID?
    @Field(key: "title") var title: String
    @Field(key: "summary") var summary: String
    @Field(key: "duration") var duration: Double
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "is_published") var isPublished: Bool
    @Field(key: "tags") var tags: [String]
    @OptionalField(key: "author_id") var authorID: Int?

    init() {}

    init(_ c: Course) {
        id = c.id
        set(c)
    }

    /// Every field but the id, from the harness's record.
    func set(_ c: Course) {
        title = c.title
        summary = c.summary
        duration = c.duration
        createdAt = c.createdAt
        isPublished = c.isPublished
        tags = c.tags
        authorID = c.authorID
    }

    var course: Course {
        Course(id: id!, title: title, summary: summary, duration: duration, createdAt: createdAt, isPublished: isPublished,
               tags: tags, authorID: authorID)
    }
}

/// The migration: the table with its unique primary key, and the index on `created_at` (Fluent's
/// schema builder has no index; SQLKit's `create(index:)` is what Fluent users write).
struct CreateCourses: AsyncMigration {
    func prepare(on database: any Database) async throws {
        try await database.schema(FluentCourse.schema, space: FluentCourse.space)
            .id()
            .field("title", .string, .required)
            .field("summary", .string, .required)
            .field("duration", .double, .required)
            .field("created_at", .datetime, .required)
            .field("is_published", .bool, .required)
            .field("tags", .array(of: .string), .required)
            .field("author_id", .int64)
            .create()
        try await (database as! any SQLDatabase).create(index: "courses_created_at")
            .on(SQLQualifiedTable(FluentCourse.schema, space: FluentCourse.space))
            .column("created_at")
            .run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema(FluentCourse.schema, space: FluentCourse.space).delete()
    }
}

/// Idiomatic Fluent on fluent-postgres-driver: `create(on:)` of model arrays, `query(on:)` with
/// `filter`, `sort`, `range`, `count()`, `chunk(max:)`, `delete()`, transactions. Fluent has no
/// upsert: W6 does what a Fluent user does, in one transaction: for each 5,000 incoming records,
/// one query for the stored ones among their ids (`filter(\.$id ~~ ids)`), then `update(on:)`
/// of each one found and one batch `create(on:)` of the others.
@MainActor
final class FluentSystem: BenchSystem {
    let name = "fluent"
    let server: Server
    private let databases: Databases
    private let database: any Database
    private var migrated = false

    /// Rows per batch `create(on:)`: one INSERT binds 8 values a row, and PostgreSQL takes at
    /// most 65,535 parameters a statement.
    nonisolated static let rowsPerInsert = 5_000

    init(server: Server) throws {
        self.server = server
        let group = MultiThreadedEventLoopGroup.singleton
        databases = Databases(threadPool: NIOThreadPool.singleton, on: group)
        let configuration = SQLPostgresConfiguration(hostname: server.host, port: server.port, username: server.user,
                                                     password: server.password, database: server.database, tls: .disable)
        databases.use(.postgres(configuration: configuration, maxConnectionsPerEventLoop: 1, sqlLogLevel: .trace), as: .psql)
        database = databases.database(.psql, logger: Server.logger, on: group.any())!
    }

    func close() async { await databases.shutdownAsync() }

    func reset() async throws {
        let sql = database as! any SQLDatabase
        try await sql.raw("CREATE SCHEMA IF NOT EXISTS fluent_bench").run()
        let migrations = Migrations()
        migrations.add(CreateCourses())
        let migrator = Migrator(databases: databases, migrations: migrations, logger: Server.logger, on: database.eventLoop)
        try await migrator.setupIfNeeded().get()
        try await migrator.revertAllBatches().get()
        try await migrator.prepareBatch().get()
    }

    func insert(_ n: Int, data: Dataset) async throws {
        try await database.transaction { db in
            var start = 0
            while start < n {
                let end = min(n, start + Self.rowsPerInsert)
                try await (start..<end).map { FluentCourse(data.course($0)) }.create(on: db)
                start = end
            }
        }
    }

    func saveEach(_ range: Range<Int>, data: Dataset) async throws {
        for i in range { try await FluentCourse(data.course(i)).create(on: database) }
    }

    func total() async throws -> Int {
        try await FluentCourse.query(on: database).count()
    }

    func pointFetch(_ ids: [UUID]) async throws -> Outcome {
        var outcome = Outcome()
        for id in ids {
            guard let c = try await FluentCourse.find(id, on: database) else { throw BenchError("fluent: \(id) not found") }
            outcome.add(c.course)
        }
        return outcome
    }

    func count(above x: Double, times: Int) async throws -> Outcome {
        var outcome = Outcome()
        for _ in 0..<times {
            outcome.count += try await FluentCourse.query(on: database)
                .filter(\.$duration > x)
                .filter(\.$isPublished == true)
                .count()
        }
        return outcome
    }

    func page(limit: Int, offset: Int, pages: Int) async throws -> Outcome {
        var outcome = Outcome()
        for _ in 0..<pages {
            let page = try await FluentCourse.query(on: database)
                .sort(\.$createdAt, .descending)
                .range(offset..<(offset + limit))
                .all()
            for c in page { outcome.add(c.course) }
        }
        return outcome
    }

    func enumerateAll(batchSize: Int) async throws -> Outcome {
        // The chunk's closure runs on the connection's event loop and cannot throw: it keeps
        // the first row that failed to decode.
        let seen = Mutex((Outcome(), (any Error)?.none))
        // The future-returning `chunk`: the async one of fluent-kit 1.57.0 hands the last,
        // partial chunk to the closure only when the query fails (QueryBuilder+Concurrency.swift),
        // so it loses the tail of every answer whose size is not a multiple of `max`.
        try await FluentCourse.query(on: database).chunk(max: batchSize) { results in
            seen.withLock { seen in
                for result in results {
                    switch result {
                    case .success(let c): seen.0.add(c.course)
                    case .failure(let error): if seen.1 == nil { seen.1 = error }
                    }
                }
            }
        }.get()
        let (outcome, error) = seen.withLock { $0 }
        if let error { throw error }
        return outcome
    }

    func upsert(_ n: Int, data: Dataset) async throws {
        try await database.transaction { db in
            var start = 0
            while start < n {
                let end = min(n, start + Self.rowsPerInsert)
                let incoming = (start..<end).map { upsertedCourse($0, n: n, data: data) }
                let stored = try await FluentCourse.query(on: db).filter(\.$id ~~ incoming.map(\.id)).all()
                let byID = Dictionary(stored.map { ($0.id!, $0) }, uniquingKeysWith: { a, _ in a })
                var new: [FluentCourse] = []
                for c in incoming {
                    if let existing = byID[c.id] {
                        existing.set(c)
                        try await existing.update(on: db)
                    } else {
                        new.append(FluentCourse(c))
                    }
                }
                try await new.create(on: db)
                start = end
            }
        }
    }

    func deleteUnpublished() async throws {
        try await FluentCourse.query(on: database).filter(\.$isPublished == false).delete()
    }
}
