import Foundation
import StrataData

// Here the to-many side (PlantSpecies.plants) is the one that names its inverse, and the model
// that holds the to-one (this one) is declared in the file that sorts first.

@Model public class Plant {
    @Attribute(.unique) public var id: String
    public var species: PlantSpecies?
    public var backyard: Backyard?
    public var height: Double

    public var speciesName: String { species?.profile.name ?? "unknown plant" }

    public init(id: String, height: Double = 1) {
        self.id = id
        self.height = height
    }
}
