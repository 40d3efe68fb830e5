import Foundation
import Strata
import Testing
import StrataTestSupport

enum Status: String, Codable, CaseIterable { case planned, active, done }

struct Address: Codable, Hashable {
    var street: String
    var city: String
}

final class Trip: PersistentModel {
    @Attribute(.unique) var id: UUID
    @Attribute var name: String
    @Attribute var startDate: Date
    @Attribute var budget: Double? = nil
    @Attribute var tags: [String] = []
    @Attribute var status: Status = .planned
    @Attribute var address: Address? = nil
    @Attribute var rating: Int = 0
    @Transient var isExpanded = false

    init() {}
    init(name: String, startDate: Date, budget: Double? = nil) {
        id = UUID()
        self.name = name
        self.startDate = startDate
        self.budget = budget
    }

    static var indexes: [[PartialKeyPath<Trip>]] { [[\.startDate], [\.rating]] }
}

/// Every value type API.md lists.
final class Everything: PersistentModel {
    @Attribute var bool: Bool = false
    @Attribute var int: Int = 0
    @Attribute var int8: Int8 = 0
    @Attribute var int16: Int16 = 0
    @Attribute var int32: Int32 = 0
    @Attribute var int64: Int64 = 0
    @Attribute var uint: UInt = 0
    @Attribute var uint8: UInt8 = 0
    @Attribute var uint16: UInt16 = 0
    @Attribute var uint32: UInt32 = 0
    @Attribute var uint64: UInt64 = 0
    @Attribute var float: Float = 0
    @Attribute var double: Double = 0
    @Attribute var decimal: Decimal = 0
    @Attribute var string: String = ""
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data: Data = Data()
    @Attribute var uuid: UUID = UUID(uuid: (0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0))
    @Attribute var url: URL = URL(string: "https://example.com")!
    @Attribute var optionalString: String? = nil
    @Attribute var optionalInt: Int? = nil
    @Attribute var strings: [String] = []
    @Attribute var intSet: Set<Int> = []
    @Attribute var dictionary: [String: Double] = [:]
    @Attribute var status: Status = .planned
    @Attribute var address: Address = Address(street: "", city: "")
    @Attribute var addresses: [Address] = []
    init() {}
}

final class Person: PersistentModel {
    @Attribute var first: String = ""
    @Attribute var last: String = ""
    @Attribute var email: String = ""
    init() {}
    init(first: String, last: String, email: String) { self.first = first; self.last = last; self.email = email }
    static var uniqueConstraints: [[PartialKeyPath<Person>]] { [[\.first, \.last]] }
}

final class Unmarked: PersistentModel {
    @Attribute var name: String = ""
    var forgotten: Int = 0
    init() {}
}

/// A fresh folder for one test's stores: each store left in it is verified (its index keys
/// too) when the folder goes, and a problem is an issue of the test (`TestStore`).
final class TemporaryDirectory: TestStore, @unchecked Sendable {
    init(_ name: String = #function) { super.init(name, report: { Issue.record(Comment(rawValue: $0)) }) }
}
