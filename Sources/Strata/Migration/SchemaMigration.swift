import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// One version of an app's models. Same as SwiftData's `VersionedSchema`.
///
/// ```swift
/// enum TripsV1: VersionedSchema {
///     static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
///     static var models: [any PersistentModel.Type] { [Trip.self] }
///     final class Trip: PersistentModel { @Attribute var name: String = ""; init() {} }
/// }
/// ```
public protocol VersionedSchema {
    static var versionIdentifier: Schema.Version { get }
    static var models: [any PersistentModel.Type] { get }
}

/// The versions of a schema, oldest first, and how to go from each to the next.
/// Same as SwiftData's `SchemaMigrationPlan`.
public protocol SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { get }
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan. Same as SwiftData's `MigrationStage`.
public enum MigrationStage: @unchecked Sendable {
    /// A change Strata makes by itself (see `Docs/Migrations.md`).
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A change with code: `willMigrate` runs on a context of the old models before the
    /// change, `didMigrate` on a context of the new models after it. Each may insert, change
    /// and delete objects; what they leave unsaved is saved.
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)

    var from: any VersionedSchema.Type {
        switch self { case .lightweight(let f, _), .custom(let f, _, _, _): f }
    }
    var to: any VersionedSchema.Type {
        switch self { case .lightweight(_, let t), .custom(_, let t, _, _): t }
    }

    /// The version the stage starts from, for a store that migrates itself.
    /// Strata-only: SwiftData gives it in the case alone.
    public var fromVersion: any VersionedSchema.Type { from }
    /// The version the stage ends at. Strata-only, as `fromVersion`.
    public var toVersion: any VersionedSchema.Type { to }
}

extension SchemaMigrationPlan {
    /// The stages that take a store written with version `stored` to the plan's last version,
    /// in order (none: it is there). For a custom store that migrates itself in
    /// `DataStore.init(_:migrationPlan:)`, by the same rules as a file; `location` names the
    /// store in the errors.
    ///
    /// - Throws: `StrataError` `.schemaMismatch` when the plan does not list `stored`, or lacks a
    ///   stage from a version on the way.
    ///
    /// Strata-only: SwiftData runs a plan's stages for its own stores alone.
    public static func stages(from stored: Schema.Version, location: String) throws -> [MigrationStage] {
        let plan: any SchemaMigrationPlan.Type = Self.self
        guard let start = schemas.firstIndex(where: { $0.versionIdentifier == stored }) else {
            throw StrataError(.schemaMismatch, "The store at \(location) has schema version \(stored), which \(plan) does not list. Add that version to its schemas.")
        }
        var found: [MigrationStage] = []
        var version = start
        while version < schemas.count - 1 {
            let from = schemas[version].versionIdentifier
            guard let stage = stages.first(where: { $0.from.versionIdentifier == from }) else {
                throw StrataError(.schemaMismatch, "\(plan) has no stage from version \(from); add a MigrationStage from it to the next version.")
            }
            guard let next = schemas.firstIndex(where: { $0.versionIdentifier == stage.to.versionIdentifier }), next > version else {
                throw StrataError(.schemaMismatch, "\(plan)'s stage from \(from) goes to a version not after it.")
            }
            found.append(stage)
            version = next
        }
        return found
    }
}

enum Migrator {
    static let versionKey = "strata.schema.version"

    /// Runs the stages of `plan` that lie between the store's version and the plan's last one,
    /// on a copy of the store that then takes its place (`PreparedStoreCopy`: the storage makes
    /// the copy and swaps it in; an error or a crash at any point leaves the store as it was,
    /// or migrated).
    static func migrate(configuration: ModelConfiguration, plan: any SchemaMigrationPlan.Type, storage: any StorageProvider) throws {
        guard !configuration.isStoredInMemoryOnly, configuration.allowsSave else { return }
        let path = configuration.url.path
        guard let copy = try storage.prepareCopy(of: configuration) else { return }
        guard let stored = try storedVersion(copy, plan: plan) else { return }
        let stages = try plan.stages(from: stored, location: path)
        if stages.isEmpty { return }
        let report = configuration.migrationProgress
        let parts = stages.count + 1   // copying the store, then each stage
        do {
            try copy.make { done, total in
                report?(MigrationProgress(stage: 0, stages: parts, step: "copy the store", completedUnitCount: done, totalUnitCount: total))
            }
            for (i, stage) in stages.enumerated() {
                report?(MigrationProgress(stage: i + 1, stages: parts, step: "from \(stage.from.versionIdentifier) to \(stage.to.versionIdentifier)"))
                try run(stage, on: copy, configuration: configuration, storage: storage)
            }
            report?(MigrationProgress(stage: parts, stages: parts, step: "replace the store"))
            try copy.replaceOriginal()
        } catch {
            copy.discard()
            throw failure(error, path: path, swapped: copy.replaced)
        }
        copy.finish()
        report?(MigrationProgress(stage: parts, stages: parts, step: "done"))
    }

    /// One stage on the copy: `willMigrate` with the old models, opening with the new ones
    /// (which applies the lightweight part of the change), `didMigrate`, then the version.
    private static func run(_ stage: MigrationStage, on copy: any PreparedStoreCopy, configuration: ModelConfiguration, storage: any StorageProvider) throws {
        if case .custom(_, _, let will, _) = stage, let will {
            try run(will, models: stage.from.models, url: copy.url, configuration: configuration, storage: storage)
        }
        try run({ _ in }, models: stage.to.models, url: copy.url, configuration: configuration, storage: storage)
        if case .custom(_, _, _, let did) = stage, let did {
            try run(did, models: stage.to.models, url: copy.url, configuration: configuration, storage: storage)
        }
        try copy.setMetadata(versionKey, Array(try JSONEncoder().encode(stage.to.versionIdentifier)))
    }

    private static func failure(_ error: any Error, path: String, swapped: Bool) -> any Error {
        if swapped {
            return StrataError(.storeFailure, "The store at \(path) was migrated, but making the change durable failed: \(error). Reopen it; if the disk lost the change, the migration runs again.", underlying: error)
        }
        if error is SystemError || error is StoreError {
            return StrataError(.storeFailure, "Strata could not migrate the store at \(path): \(error). The store was left as it was; free space or fix the cause and open it again.", underlying: error)
        }
        return error
    }

    private static func run(_ body: (ModelContext) throws -> Void, models: [any PersistentModel.Type], url: URL,
                            configuration: ModelConfiguration, storage: any StorageProvider) throws {
        var config = ModelConfiguration(configuration.name, url: url)
        config.durability = .deferred
        let container = try ModelContainer(for: Schema(models), configurations: [config], storage: storage)
        let context = ModelContext(container)
        try body(context)
        try context.save()
        // One sync for the whole step (its saves were deferred); it also lets the storage remove
        // the files of blobs the step deleted, so the copy's blob folder holds exactly its blobs.
        for handle in container.handles { try handle.storage.sync() }
    }

    /// The version the store was written with: recorded, or found by its entities' shape.
    private static func storedVersion(_ copy: any PreparedStoreCopy, plan: any SchemaMigrationPlan.Type) throws -> Schema.Version? {
        let (recorded, stored) = try copy.read { reader -> (Data?, StoredSchema?) in
            (try reader.metadata(versionKey).map { Data($0) }, try? StoredSchema.read(from: reader, path: copy.url.path))
        }
        if let recorded, let version = try? JSONDecoder().decode(Schema.Version.self, from: recorded) { return version }
        guard let stored else { return nil }
        // The latest version whose models the store matches: all of them (the store was
        // written with exactly that version), else those the store holds (a store of one
        // configuration, with a subset of the models). Oldest-first would take a store written
        // with V2 for V1 whenever V2 only added a model, and run V1 -> V2 on it again.
        var partial: Schema.Version?
        for versioned in plan.schemas.reversed() {
            let entities = try Schema(versioned.models).entities(includingRelated: false).map(StoredEntity.init)
            let held = entities.filter { e in stored.entities.contains { $0.name == e.name } }
            guard !held.isEmpty, held.allSatisfy({ e in stored.entities.contains { $0.name == e.name && $0.properties == e.properties } }) else { continue }
            if held.count == entities.count { return versioned.versionIdentifier }
            if partial == nil { partial = versioned.versionIdentifier }
        }
        return partial
    }

    /// The version recorded in a store, if any.
    static func recordedVersion(_ storage: any StorageBackend) throws -> Schema.Version? {
        try storage.read { reader in try reader.metadata(versionKey).flatMap { try? JSONDecoder().decode(Schema.Version.self, from: Data($0)) } }
    }

    static func setVersion(_ version: Schema.Version, in storage: any StorageBackend) throws {
        let writer = try storage.beginWrite()
        do {
            try writer.setMetadata(versionKey, Array(try JSONEncoder().encode(version)))
            try writer.commit()
        } catch {
            writer.rollback()
            throw error
        }
    }
}

extension ModelContainer {
    /// Opens the stores, first migrating them with `migrationPlan` from the version they were
    /// written with to its last version. Same as SwiftData's
    /// `ModelContainer(for:migrationPlan:configurations:)`.
    ///
    /// - Throws: `StrataError` `.schemaMismatch` (a version or stage the plan lacks), or what a
    ///   stage throws; the store is then as it was before.
    public convenience init(for forTypes: any PersistentModel.Type..., migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: ModelConfiguration...) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// The same for a schema and any number of configurations (one, typically). Same as
    /// SwiftData's `ModelContainer(for:migrationPlan:configurations:)`.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: ModelConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// The same with the configurations in an array.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration]) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations, storage: EngineStorageProvider())
    }

    /// The same, with every file operation going through `fileSystem` (the engine's fault seam).
    /// SPI (`@_spi(FaultInjection) import Strata`), for fault tests; SwiftData has no such seam.
    @_spi(FaultInjection)
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration],
                             fileSystem: AnyFileSystem) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations,
                      storage: EngineStorageProvider(fileSystem: fileSystem.base is DiskFileSystem ? nil : fileSystem.base))
    }

    /// The same, with the stores of another storage backend (the storage seam).
    @_spi(StorageBackend)
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration],
                            storage: any StorageProvider) throws {
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        if let migrationPlan {
            for configuration in configurations { try Migrator.migrate(configuration: configuration, plan: migrationPlan, storage: storage) }
        }
        try self.init(for: givenSchema, configurations: configurations, storage: storage)
        self.migrationPlan = migrationPlan
        // Record the plan's last version, so the next open knows where the store stands
        // without comparing shapes (written once, not at every open).
        if let last = migrationPlan?.schemas.last?.versionIdentifier {
            for handle in handles where handle.configuration.allowsSave && !handle.configuration.isStoredInMemoryOnly {
                if (try? Migrator.recordedVersion(handle.storage)) != last { try? Migrator.setVersion(last, in: handle.storage) }
            }
        }
    }
}

extension Schema {
    /// A schema made of a versioned schema's models, with its version. Same as SwiftData's
    /// `Schema(versionedSchema:)`.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }
}
