import Foundation
import StrataData

/// A keeper's badge, derived from the keeper (not stored).
public struct Badge: Hashable, Sendable {
    public var name: String
}

@Model public class Keeper {
    public var name: String
    @Relationship(inverse: \Aviary.keeper) public var aviaries: [Aviary] = []
    public var badge: Badge { Badge(name: name.uppercased()) }

    public init(name: String) { self.name = name }
}

@Model public final class Resident {
    public var name: String
    public var aviary: Aviary?
    @Relationship(inverse: \Perch.favoriteOf) public var perches: [Perch]?

    public var aviaryKeeper: String { aviary?.keeper?.badge.name ?? "-" }

    public init(name: String) {
        self.name = name
        self.perches = []
    }
}
