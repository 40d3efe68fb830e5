import Foundation
@_spi(FaultInjection) import Strata
import StrataEngine

// The object layer's fault-injection SPI takes the engine's file system wrapped
// (`AnyFileSystem`, so that the seam's protocol stays inside the package); the tests pass a
// `SimulatedFileSystem` as it is.

extension ModelContainer {
    /// A container whose stores do all their I/O through `fileSystem` (nil: the real disk).
    package convenience init(for schema: Schema, configurations: [ModelConfiguration], fileSystem: (any FileSystem)?) throws {
        try self.init(for: schema, configurations: configurations, fileSystem: fileSystem.map(AnyFileSystem.init))
    }

    /// The same, migrating the store with `migrationPlan`.
    package convenience init(for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration],
                             fileSystem: any FileSystem) throws {
        try self.init(for: schema, migrationPlan: migrationPlan, configurations: configurations, fileSystem: AnyFileSystem(fileSystem))
    }
}
