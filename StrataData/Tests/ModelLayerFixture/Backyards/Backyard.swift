import Foundation
import StrataData

@Model public class Backyard {
    @Attribute(.unique) public var id: String
    public var name: String
    public var foodRefilled: Date
    public var birdFood: BirdFood?
    public var visits: [Visit] = []

    @Relationship(inverse: \Plant.backyard)
    public var plants: [Plant] = []

    public var currentVisit: Visit? { visits.first { $0.isHappening(at: .now) } }
    public var recentVisitors: [Bird] { visits.compactMap(\.bird) }

    public init(id: String, name: String) {
        self.id = id
        self.name = name
        self.foodRefilled = .now
    }
}
