import Foundation
import StrataData

// Code that reads through the relationships of models declared in other files, in files of its
// own, as an app's queries and data generation are. These files reach a species only through a
// bird (`bird.species?.profile`): compiled in a frontend job where no other file names
// `BirdSpecies`, that is the shape `@Model` refused when the storage of `Bird.species` took its
// type from overload resolution ("'_modelProperty' is unavailable"), as in Backyard Birds.

extension Bird {
    /// The names of the species of the migratory birds among `birds`, in order.
    public static func migratorySpeciesNames(_ birds: [Bird]) -> [String] {
        birds.filter { $0.species?.profile.isMigratory ?? false }.map { $0.species?.profile.name ?? "" }
    }

    /// The birds of a rare species.
    public static func rare(_ birds: [Bird]) -> [Bird] {
        birds.filter { $0.species?.isRare ?? false }
    }
}
