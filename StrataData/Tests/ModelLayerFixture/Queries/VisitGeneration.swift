import Foundation
import StrataData

extension Visit {
    /// One visit of each bird to each backyard, leaving out the birds of rare species (setting
    /// the visit's backyard puts it in the backyard's `visits`).
    @discardableResult
    public static func generate(birds: [Bird], backyards: [Backyard], start: Date, in context: ModelContext) -> [Visit] {
        var visits: [Visit] = []
        let common = birds.filter { !($0.species?.isRare ?? false) }
        for backyard in backyards {
            for (n, bird) in common.enumerated() {
                let visit = Visit(id: "\(backyard.id)/\(bird.id)", start: start.addingTimeInterval(Double(n) * 600), minutes: 5)
                context.insert(visit)
                visit.backyard = backyard
                visit.bird = bird
                bird.noteVisit(on: visit.start)
                visits.append(visit)
            }
        }
        return visits
    }

    /// The visitor's species name, read through two relationships of models of other files.
    public var visitorSpeciesName: String { bird?.species?.profile.name ?? "nobody" }
}
