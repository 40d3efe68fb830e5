import Foundation

/// Where a migration is, for `ModelConfiguration.migrationProgress` (a Strata extra; SwiftData
/// has no progress report). Reported at the start and end of each step, and as a step goes on
/// when it can count its work (bytes copied, records read or rewritten).
public struct MigrationProgress: Sendable {
    /// The part running (0-based) and the number of parts: in a plan's migration, copying the
    /// store is part 0 and each stage that runs is one more part.
    public let stage: Int
    public let stages: Int
    /// What the stage is doing, for a person: "copy the store", "from 1.0.0 to 2.0.0", "done".
    public let step: String
    /// Units of the step done so far, and how many there are (0 when the step cannot count).
    public let completedUnitCount: Int64
    public let totalUnitCount: Int64

    public init(stage: Int, stages: Int, step: String, completedUnitCount: Int64 = 0, totalUnitCount: Int64 = 0) {
        self.stage = stage
        self.stages = stages
        self.step = step
        self.completedUnitCount = completedUnitCount
        self.totalUnitCount = totalUnitCount
    }

    /// Fraction of the whole migration done, 0...1: whole stages, plus the part of the running
    /// stage its step has counted.
    public var fractionCompleted: Double {
        guard stages > 0 else { return 1 }
        let within = totalUnitCount > 0 ? Double(min(completedUnitCount, totalUnitCount)) / Double(totalUnitCount) : 0
        return min(1, (Double(stage) + within) / Double(stages))
    }
}
