import Foundation
import StrataData

@Model public class BirdFood {
    @Attribute(.unique) public var id: String
    public var name: String
    public var portions: Int

    public init(id: String, name: String, portions: Int = 0) {
        self.id = id
        self.name = name
        self.portions = portions
    }
}
