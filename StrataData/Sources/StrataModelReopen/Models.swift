import Foundation
import StrataData

// The W8 benchmark's `Course` as SwiftData writes it: the same entity name, properties, unique
// attribute and index as Benchmarks' macro-free `StrataModel.Course`, so that this opens the
// store that one wrote (a stored schema does not depend on the spelling).
@Model final class Course {
    #Index<Course>([\.createdAt])

    @Attribute(.unique) var id: UUID
    var title: String
    var summary: String
    var duration: Double
    var createdAt: Date
    var isPublished: Bool
    var tags: [String]
    var authorID: Int?

    init(id: UUID, title: String, createdAt: Date) {
        self.id = id
        self.title = title
        summary = ""
        duration = 0
        self.createdAt = createdAt
        isPublished = false
        tags = []
        authorID = nil
    }
}

// Nineteen more models, for a 20-model schema: what an app's model layer looks like, and what
// schema discovery must get through on open (its cost grew with the types a process has).
@Model final class Author { @Attribute(.unique) var handle: String; var name: String; var joined: Date; var courses: [Lesson] = []
    init(handle: String) { self.handle = handle; name = handle; joined = .now } }
@Model final class Lesson { var title: String; var position: Int; var minutes: Double; var author: Author?
    init(title: String) { self.title = title; position = 0; minutes = 0 } }
@Model final class Tag { @Attribute(.unique) var name: String; var uses: Int
    init(name: String) { self.name = name; uses = 0 } }
@Model final class Review { var stars: Int; var text: String; var written: Date; var helpful: Bool
    init(stars: Int) { self.stars = stars; text = ""; written = .now; helpful = false } }
@Model final class Student { @Attribute(.unique) var email: String; var name: String; var credits: Int; var enrolments: [Enrolment] = []
    init(email: String) { self.email = email; name = email; credits = 0 } }
@Model final class Enrolment { var started: Date; var finished: Date?; var grade: Double?; var student: Student?
    init() { started = .now } }
@Model final class Category { @Attribute(.unique) var slug: String; var title: String; var order: Int
    init(slug: String) { self.slug = slug; title = slug; order = 0 } }
@Model final class Certificate { @Attribute(.unique) var serial: UUID; var issued: Date; var holder: String
    init() { serial = UUID(); issued = .now; holder = "" } }
@Model final class Quiz { var title: String; var questions: Int; var passMark: Double; var isTimed: Bool
    init(title: String) { self.title = title; questions = 0; passMark = 0.5; isTimed = false } }
@Model final class Attempt { var score: Double; var taken: Date; var passed: Bool; var answers: [Int]
    init() { score = 0; taken = .now; passed = false; answers = [] } }
@Model final class Coupon { @Attribute(.unique) var code: String; var discount: Decimal; var expires: Date?
    init(code: String) { self.code = code; discount = 0 } }
@Model final class Invoice { @Attribute(.unique) var number: Int; var total: Decimal; var paid: Bool; var lines: [InvoiceLine] = []
    init(number: Int) { self.number = number; total = 0; paid = false } }
@Model final class InvoiceLine { var label: String; var amount: Decimal; var quantity: Int; var invoice: Invoice?
    init(label: String) { self.label = label; amount = 0; quantity = 1 } }
@Model final class Venue { var name: String; var city: String; var capacity: Int; var website: URL?
    init(name: String) { self.name = name; city = ""; capacity = 0 } }
@Model final class Session { var starts: Date; var ends: Date; var room: String; var isOnline: Bool
    init() { starts = .now; ends = .now; room = ""; isOnline = true } }
@Model final class Announcement { var title: String; var body: String; var pinned: Bool; var posted: Date
    init(title: String) { self.title = title; body = ""; pinned = false; posted = .now } }
@Model final class Badge { @Attribute(.unique) var key: String; var title: String; var points: Int
    init(key: String) { self.key = key; title = key; points = 0 } }
@Model final class Message { var subject: String; var sent: Date; var read: Bool; var attachment: Data?
    init(subject: String) { self.subject = subject; sent = .now; read = false } }
@Model final class Setting { @Attribute(.unique) var key: String; var value: String; var changed: Date
    init(key: String) { self.key = key; value = ""; changed = .now } }

/// The 20 models.
var twentyModels: [any PersistentModel.Type] { [
    Course.self, Author.self, Lesson.self, Tag.self, Review.self, Student.self, Enrolment.self, Category.self,
    Certificate.self, Quiz.self, Attempt.self, Coupon.self, Invoice.self, InvoiceLine.self, Venue.self, Session.self,
    Announcement.self, Badge.self, Message.self, Setting.self,
] }
