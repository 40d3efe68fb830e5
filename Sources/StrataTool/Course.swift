import Foundation
import Strata
import StrataRecords

/// A course in the demo catalogue (the record BENCH.md measures).
final class Course: PersistentModel {
    @Attribute(.unique) var id: UUID
    @Attribute var title: String
    @Attribute var summary: String
    @Attribute var duration: Double
    @Attribute var createdAt: Date
    @Attribute var isPublished: Bool
    @Attribute var tags: [String]
    @Attribute var authorID: Int?

    init() {}
    init(id: UUID, title: String, summary: String, duration: Double, createdAt: Date, isPublished: Bool, tags: [String], authorID: Int?) {
        self.id = id
        self.title = title
        self.summary = summary
        self.duration = duration
        self.createdAt = createdAt
        self.isPublished = isPublished
        self.tags = tags
        self.authorID = authorID
    }

    static var indexes: [[PartialKeyPath<Course>]] { [[\.createdAt]] }
}
