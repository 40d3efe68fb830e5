import Foundation
import StrataData

// The models of Tests/StrataTests/TestModels.swift as SwiftData writes them: the same
// classes, the same stored properties in the same order, with @Model instead of the
// PersistentModel conformance, `init()` and `@Attribute` on each property; optionals without
// `= nil`; #Index and #Unique instead of the static properties.

enum Status: String, Codable, CaseIterable { case planned, active, done }

struct Address: Codable, Hashable {
    var street: String
    var city: String
}

@Model final class Trip {
    #Index<Trip>([\.startDate], [\.rating])

    @Attribute(.unique) var id: UUID
    var name: String
    var startDate: Date
    var budget: Double?
    var tags: [String] = []
    var status: Status = .planned
    var address: Address?
    var rating: Int = 0
    @Transient var isExpanded = false

    init(name: String, startDate: Date, budget: Double? = nil) {
        id = UUID()
        self.name = name
        self.startDate = startDate
        self.budget = budget
    }
}

@Model final class Person {
    #Unique<Person>([\.first, \.last])

    var first: String = ""
    var last: String = ""
    var email: String = ""

    init(first: String, last: String, email: String) { self.first = first; self.last = last; self.email = email }
}
