import Foundation
import StrataData

@Model public class PlantSpecies {
    @Attribute(.unique) public var id: String
    public var isFlowering: Bool

    @Relationship(deleteRule: .cascade, inverse: \Plant.species)
    public var plants: [Plant] = []

    public var profile: SpeciesProfile { SpeciesProfile(name: id.capitalized, isMigratory: false) }

    public init(id: String, isFlowering: Bool = false) {
        self.id = id
        self.isFlowering = isFlowering
    }
}
