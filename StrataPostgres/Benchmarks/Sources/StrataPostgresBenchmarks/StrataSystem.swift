import Foundation
import PostgresNIO
import Strata
import StrataPostgres

/// The model, as an app declares it (macro-free, as StrataPostgres's tests do). In a namespace
/// so that its entity (and table) name is "Course" beside the harness's `Course` struct.
enum StrataModel {
    final class Course: PersistentModel {
        @Attribute(.unique) var id: UUID
        @Attribute var title: String
        @Attribute var summary: String
        @Attribute var duration: Double
        @Attribute var createdAt: Date
        @Attribute var isPublished: Bool
        @Attribute var tags: [String]
        @Attribute var authorID: Int?

        static var indexes: [[PartialKeyPath<Course>]] { [[\.createdAt]] }

        init() {}

        init(_ c: StrataPostgresBenchmarks.Course) {
            id = c.id
            title = c.title
            summary = c.summary
            duration = c.duration
            createdAt = c.createdAt
            isPublished = c.isPublished
            tags = c.tags
            authorID = c.authorID
        }

        /// The same digest as `Course.checksum`, reading every field of the object.
        var checksum: Int {
            var sum = title.utf8.count &+ summary.utf8.count &* 3 &+ Int(duration * 10) &+ Int(createdAt.timeIntervalSince1970)
            sum &+= (isPublished ? 7 : 0) &+ tags.count &* 11 &+ (authorID ?? -1) &+ Int(id.uuid.0) &+ Int(id.uuid.15) << 8
            return sum
        }
    }
}

extension Outcome {
    mutating func add(_ object: StrataModel.Course) {
        count += 1
        checksum &+= object.checksum
    }
}

/// Strata on PostgreSQL: `PostgresConfiguration`, `ModelContainer`, `ModelContext`,
/// `FetchDescriptor`, `#Predicate`, `save()`, `enumerate`, `delete(model:where:)`. The tables
/// are the store's own, in the namespace `strata_bench` (Docs/Postgres.md). One container,
/// opened when the tables are made (before any clock starts) and kept; a new `ModelContext`
/// for each run of a workload, as a request would make one.
@MainActor
final class StrataSystem: BenchSystem {
    let name = "strata"
    let server: Server
    private var container: ModelContainer?

    nonisolated static let namespace = "strata_bench"

    init(server: Server) { self.server = server }

    private func openContainer() throws -> ModelContainer {
        if let container { return container }
        // Without TLS, as the hand-written SQL and Fluent connect (`tls: .disable`): the
        // server `run.sh` starts takes TLS, which Strata, as libpq, uses unless told not to.
        var components = URLComponents(url: server.url, resolvingAgainstBaseURL: false)!
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "sslmode" } + [URLQueryItem(name: "sslmode", value: "disable")]
        let configuration = PostgresConfiguration(schema: Schema([StrataModel.Course.self]), url: components.url!, namespace: Self.namespace)
        let c = try ModelContainer(for: StrataModel.Course.self, configurations: configuration)
        container = c
        return c
    }

    func close() async { container = nil }

    func reset() async throws {
        container = nil
        let c = try await server.connect()
        do {
            try await c.run("DROP SCHEMA IF EXISTS \(Self.namespace) CASCADE")
            try await c.close()
        } catch {
            try? await c.close()
            throw error
        }
        _ = try openContainer()   // makes the tables
    }

    func insert(_ n: Int, data: Dataset) async throws {
        let context = ModelContext(try openContainer())
        for i in 0..<n { context.insert(StrataModel.Course(data.course(i))) }
        try context.save()
    }

    func load(_ n: Int, data: Dataset, saveSize: Int?) async throws {
        let size = saveSize ?? n
        var start = 0
        while start < n {
            let context = ModelContext(try openContainer())
            for i in start..<min(n, start + size) { context.insert(StrataModel.Course(data.course(i))) }
            try context.save()
            start += size
        }
    }

    func saveEach(_ range: Range<Int>, data: Dataset) async throws {
        let context = ModelContext(try openContainer())
        for i in range {
            context.insert(StrataModel.Course(data.course(i)))
            try context.save()
        }
    }

    func total() async throws -> Int {
        try ModelContext(try openContainer()).fetchCount(FetchDescriptor<StrataModel.Course>())
    }

    func pointFetch(_ ids: [UUID]) async throws -> Outcome {
        let context = ModelContext(try openContainer())
        var outcome = Outcome()
        for key in ids {
            let found = try context.fetch(FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.id == key }))
            guard let c = found.first else { throw BenchError("strata: \(key) not found") }
            outcome.add(c)
        }
        return outcome
    }

    func count(above x: Double, times: Int) async throws -> Outcome {
        let context = ModelContext(try openContainer())
        let descriptor = FetchDescriptor<StrataModel.Course>(predicate: #Predicate { $0.duration > x && $0.isPublished })
        var outcome = Outcome()
        for _ in 0..<times { outcome.count += try context.fetchCount(descriptor) }
        return outcome
    }

    func page(limit: Int, offset: Int, pages: Int) async throws -> Outcome {
        let context = ModelContext(try openContainer())
        var descriptor = FetchDescriptor<StrataModel.Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
        descriptor.fetchLimit = limit
        descriptor.fetchOffset = offset
        var outcome = Outcome()
        for _ in 0..<pages { for c in try context.fetch(descriptor) { outcome.add(c) } }
        return outcome
    }

    func enumerateAll(batchSize: Int) async throws -> Outcome {
        let context = ModelContext(try openContainer())
        var outcome = Outcome()
        try context.enumerate(FetchDescriptor<StrataModel.Course>(), batchSize: batchSize) { outcome.add($0) }
        return outcome
    }

    /// `insert` of objects whose unique `id` is stored already is an upsert (SwiftData's rule).
    func upsert(_ n: Int, data: Dataset) async throws {
        let context = ModelContext(try openContainer())
        for i in 0..<n { context.insert(StrataModel.Course(upsertedCourse(i, n: n, data: data))) }
        try context.save()
    }

    func deleteUnpublished() async throws {
        let context = ModelContext(try openContainer())
        try context.delete(model: StrataModel.Course.self, where: #Predicate { !$0.isPublished })
        try context.save()
    }
}
