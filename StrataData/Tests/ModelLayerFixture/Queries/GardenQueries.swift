import Foundation
import StrataData

/// Queries over plants and food, apart from the models.
public enum Garden {
    /// The names of the species of the flowering plants of a backyard.
    public static func floweringSpeciesNames(in backyard: Backyard) -> [String] {
        backyard.plants.filter { $0.species?.isFlowering ?? false }.compactMap { $0.species?.profile.name }
    }

    /// The birds among `birds` that dislike the food of `backyard`.
    public static func unhappyBirds(in backyard: Backyard, among birds: [Bird]) -> [Bird] {
        guard let food = backyard.birdFood else { return [] }
        return birds.filter { $0.dislikedFoods.contains(food) }
    }
}
