import Foundation
import Strata
import StrataEngine
import StrataRecords

/// The bench workloads on Strata objects: `Course` models through `ModelContext`, with
/// `#Predicate`, `SortDescriptor` and `enumerate`, as an application writes them.
enum ObjectBench {
    static func run(path: String, data: BenchData, plan: BenchPlan, emit: (JSONValue) -> Void) throws {
        let container = try ModelContainer(for: Course.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        guard let store = container.stores.first else { throw ToolError("the bench container has no store") }
        func measure(_ workload: String, _ id: String) -> BenchMeasurement {
            BenchMeasurement(workload: workload, id: id, system: "Strata", n: plan.n)
        }
        emit(try measure("bulk_insert", "W1").run(ops: plan.n, store: store) {
            let context = ModelContext(container)
            for c in data.courses {
                context.insert(Course(id: c.id, title: c.title, summary: c.summary, duration: c.duration, createdAt: c.createdAt,
                                      isPublished: c.isPublished, tags: c.tags, authorID: c.authorID))
            }
            try context.save()
            return [("file_bytes", .integer(Int64(try store.info().fileSize)))]
        })
        emit(try measure("point_fetch", "W3").run(ops: data.probes.count, store: store) {
            let context = ModelContext(container)
            var found = 0
            for id in data.probes {
                var descriptor = FetchDescriptor<Course>(predicate: #Predicate { $0.id == id })
                descriptor.fetchLimit = 1
                if let course = try context.fetch(descriptor).first, !course.title.isEmpty { found += 1 }
            }
            return [("found", .integer(Int64(found)))]
        })
        emit(try measure("count_where", "W4").run(ops: plan.countRepetitions, store: store) {
            let context = ModelContext(container)
            let threshold = plan.durationThreshold
            let descriptor = FetchDescriptor<Course>(predicate: #Predicate { $0.duration > threshold && $0.isPublished })
            var matches = 0
            for _ in 0..<plan.countRepetitions { matches = try context.fetchCount(descriptor) }
            return [("matches", .integer(Int64(matches)))]
        })
        emit(try measure("sorted_page", "W5").run(ops: plan.pageRepetitions, store: store) {
            let context = ModelContext(container)
            var descriptor = FetchDescriptor<Course>(sortBy: [SortDescriptor(\.createdAt, order: .reverse)])
            descriptor.fetchOffset = plan.pageOffset
            descriptor.fetchLimit = plan.pageSize
            var read = 0
            for _ in 0..<plan.pageRepetitions { read = try context.fetch(descriptor).count }
            return [("page_size", .integer(Int64(read))), ("offset", .integer(Int64(plan.pageOffset)))]
        })
        emit(try measure("enumerate", "W7").run(ops: plan.n, store: store) {
            let context = ModelContext(container)
            var visited = 0
            var characters = 0
            try context.enumerate(FetchDescriptor<Course>(), batchSize: 5000) { course in
                characters += course.title.utf8.count + course.summary.utf8.count + course.tags.count + (course.authorID ?? 0)
                if course.duration >= 0 && course.createdAt.timeIntervalSinceReferenceDate > 0 && course.id != course.id { characters += 1 }
                visited += 1
            }
            return [("visited", .integer(Int64(visited)))]
        })
    }
}
