import Foundation
import StrataData

// Public models that refer to each other across files, in both directions (this file's models
// name CrossFileModelsB.swift's and back), optional and not, to-one and to-many, with and
// without `@Relationship`, and a relationship renamed with `@Attribute(originalName:)`. The
// Swift 6 half of the multi-file shapes (ModelLayerFixture is the Swift 5 half).

@Model public class Aviary {
    @Attribute(.unique) public var code: String
    public var keeper: Keeper?
    public var residents: [Resident] = []
    @Relationship(deleteRule: .cascade, inverse: \Perch.aviary) public var perches: [Perch]
    @Attribute(originalName: "formerKeeper") public var deputy: Keeper?

    public var keeperName: String { keeper?.badge.name ?? "nobody" }

    public init(code: String) {
        self.code = code
        self.perches = []
    }
}

@Model public final class Perch {
    public var height: Double
    public var aviary: Aviary?
    public var favoriteOf: Resident?

    public init(height: Double) { self.height = height }
}
