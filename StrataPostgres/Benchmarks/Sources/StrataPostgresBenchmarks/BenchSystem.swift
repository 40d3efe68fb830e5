import Foundation

/// One way of doing the workloads on the server: Strata, hand-written postgres-nio, or Fluent.
/// Each has its own tables (its own PostgreSQL schema).
@MainActor
protocol BenchSystem: AnyObject {
    var name: String { get }
    /// Drops the system's tables and makes them again, empty.
    func reset() async throws
    /// W1: courses 0..<n inserted in one transaction (Strata: one `save()`).
    func insert(_ n: Int, data: Dataset) async throws
    /// Courses 0..<n inserted untimed, in saves of `saveSize` where the system has saves.
    func load(_ n: Int, data: Dataset, saveSize: Int?) async throws
    /// How many courses the table holds.
    func total() async throws -> Int
    /// W2: courses `range` inserted one by one, each in a transaction of its own (Strata: a
    /// `save()` each), on the table W1 filled: a save's round trips and commit.
    func saveEach(_ range: Range<Int>, data: Dataset) async throws
    /// W3: one fetch by the unique id per id.
    func pointFetch(_ ids: [UUID]) async throws -> Outcome
    /// W4: `times` counts of duration > x && isPublished.
    func count(above x: Double, times: Int) async throws -> Outcome
    /// W5: `pages` times the page of `limit` by createdAt descending at `offset`.
    func page(limit: Int, offset: Int, pages: Int) async throws -> Outcome
    /// W7: every course, every field read.
    func enumerateAll(batchSize: Int) async throws -> Outcome
    /// W6: `upsertedCourse(0..<n)` upserted by id in one transaction (Strata: one `save()`).
    func upsert(_ n: Int, data: Dataset) async throws
    /// W9: every unpublished course deleted, in one transaction (Strata: one `save()`).
    func deleteUnpublished() async throws
    func close() async
}

extension BenchSystem {
    func load(_ n: Int, data: Dataset, saveSize: Int?) async throws {
        try await insert(n, data: data)
    }
}

/// W6's i-th upserted course (of n): the stored course i with its duration changed, for the
/// first half; new courses after it.
func upsertedCourse(_ i: Int, n: Int, data: Dataset) -> Course {
    if i < n / 2 {
        var c = data.course(i)
        c.duration += 1
        return c
    }
    return data.course(n + i)
}
