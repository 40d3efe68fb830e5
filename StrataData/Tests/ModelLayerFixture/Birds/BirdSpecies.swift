import Foundation
import StrataData

/// What the app knows of a species, derived from its identifier (not stored).
public struct SpeciesProfile: Hashable, Codable, Sendable {
    public var name: String
    public var isMigratory: Bool

    public init(name: String, isMigratory: Bool) {
        self.name = name
        self.isMigratory = isMigratory
    }
}

@Model public class BirdSpecies {
    @Attribute(.unique) public var id: String
    public var wingspan: Double
    public var isRare: Bool

    @Relationship(deleteRule: .cascade, inverse: \Bird.species)
    public var birds: [Bird] = []

    public var profile: SpeciesProfile {
        SpeciesProfile(name: id.capitalized, isMigratory: id.hasSuffix("swallow"))
    }

    public init(id: String, wingspan: Double = 0.2, isRare: Bool = false) {
        self.id = id
        self.wingspan = wingspan
        self.isRare = isRare
    }
}
