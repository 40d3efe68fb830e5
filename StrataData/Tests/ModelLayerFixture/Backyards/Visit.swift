import Foundation
import StrataData

// No @Relationship on either side of Backyard.visits / Visit.backyard: the inverse is inferred.

@Model public class Visit {
    @Attribute(.unique) public var id: String
    public var backyard: Backyard?
    public var bird: Bird?
    public var start: Date
    public var end: Date

    public func isHappening(at date: Date) -> Bool { start <= date && date < end }

    public init(id: String, start: Date, minutes: Double) {
        self.id = id
        self.start = start
        self.end = start.addingTimeInterval(minutes * 60)
    }
}
