import Foundation
import StrataData

// A model layer shaped like a real app's (and like Apple's Backyard Birds sample): public
// models, one per file, that refer to each other across files in both directions, with and
// without `@Relationship`, to-one and to-many, and code in other files that reads through
// those relationships. Compiled in the Swift 5 language mode, as such a package often is.

@Model public class Bird {
    @Attribute(.unique) public var id: String
    public var creationDate: Date
    public var species: BirdSpecies?
    public var favoriteFood: BirdFood?
    public var dislikedFoods: [BirdFood] = []
    public var tag: String?
    public var lastSeen: Date?

    public var speciesName: String { species?.profile.name ?? "unknown species" }

    public init(id: String, creationDate: Date = .now, tag: String? = nil) {
        self.id = id
        self.creationDate = creationDate
        self.tag = tag
    }

    public func noteVisit(on date: Date) {
        if let lastSeen, lastSeen >= date { return }
        lastSeen = date
    }
}
