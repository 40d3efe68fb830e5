import Foundation
import StrataEngine

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
}

/// Where a migration is, for `ModelConfiguration.migrationProgress`.
public struct MigrationProgress: Sendable {
    /// The stage running (0-based) and the number of stages.
    public let stage: Int
    public let stages: Int
    /// What the stage is doing.
    public let step: String
    /// Fraction of the whole migration done, 0...1.
    public var fractionCompleted: Double { stages == 0 ? 1 : min(1, Double(stage) / Double(stages)) }
}

enum Migrator {
    static let versionKey = "strata.schema.version"

    /// Runs the stages of `plan` that lie between the store's version and the plan's last one,
    /// on a copy of the store; the copy replaces the store only when every stage succeeded, so
    /// an error or a crash at any point leaves the store as it was.
    static func migrate(configuration: ModelConfiguration, plan: any SchemaMigrationPlan.Type) throws {
        guard !configuration.isStoredInMemoryOnly, configuration.allowsSave else { return }
        let path = configuration.url.path
        guard FileManager.default.fileExists(atPath: path) else { return }
        guard let stored = try storedVersion(path: path, plan: plan) else { return }
        let schemas = plan.schemas.map { $0 }
        guard let start = schemas.firstIndex(where: { $0.versionIdentifier == stored }) else {
            throw StrataError(.schemaMismatch, "The store at \(path) has schema version \(stored), which \(plan) does not list. Add that version to its schemas.")
        }
        let target = schemas.count - 1
        if start == target { return }
        var stages: [MigrationStage] = []
        var version = start
        while version < target {
            let from = schemas[version].versionIdentifier
            guard let stage = plan.stages.first(where: { $0.from.versionIdentifier == from }) else {
                throw StrataError(.schemaMismatch, "\(plan) has no stage from version \(from); add a MigrationStage from it to the next version.")
            }
            stages.append(stage)
            guard let next = schemas.firstIndex(where: { $0.versionIdentifier == stage.to.versionIdentifier }), next > version else {
                throw StrataError(.schemaMismatch, "\(plan)'s stage from \(from) goes to a version not after it.")
            }
            version = next
        }
        // Work on a copy: hard links for the blob files (they are never changed in place).
        let work = path + ".migrating"
        let fm = FileManager.default
        try? fm.removeItem(atPath: work)
        try? fm.removeItem(atPath: work + ".blobs")
        do {
            try fm.copyItem(atPath: path, toPath: work)
            if fm.fileExists(atPath: path + ".blobs") {
                try fm.createDirectory(atPath: work + ".blobs", withIntermediateDirectories: true)
                for name in try fm.contentsOfDirectory(atPath: path + ".blobs") {
                    try fm.linkItem(atPath: path + ".blobs/" + name, toPath: work + ".blobs/" + name)
                }
            }
            let workURL = URL(fileURLWithPath: work)
            for (i, stage) in stages.enumerated() {
                configuration.migrationProgress?(MigrationProgress(stage: i, stages: stages.count, step: "from \(stage.from.versionIdentifier) to \(stage.to.versionIdentifier)"))
                if case .custom(_, _, let will, _) = stage, let will {
                    try run(will, models: stage.from.models, url: workURL, configuration: configuration)
                }
                // Opening with the next models applies the lightweight part of the change.
                try run({ _ in }, models: stage.to.models, url: workURL, configuration: configuration)
                if case .custom(_, _, _, let did) = stage, let did {
                    try run(did, models: stage.to.models, url: workURL, configuration: configuration)
                }
                try setVersion(stage.to.versionIdentifier, path: work)
            }
            // Swap: new blob files into the store's folder, then the file itself, atomically.
            if fm.fileExists(atPath: work + ".blobs") {
                try? fm.createDirectory(atPath: path + ".blobs", withIntermediateDirectories: true)
                for name in try fm.contentsOfDirectory(atPath: work + ".blobs") where !fm.fileExists(atPath: path + ".blobs/" + name) {
                    try fm.linkItem(atPath: work + ".blobs/" + name, toPath: path + ".blobs/" + name)
                }
                // The new names must be on disk before the store that refers to them: a power cut
                // after the rename must not leave the migrated store pointing at missing blobs.
                try DiskFileSystem().syncDirectory(path + ".blobs")
                try DiskFileSystem().syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            }
            let store = try Store(path: work)
            try store.sync()
            store.close()
            let disk = DiskFileSystem()
            try disk.rename(work, to: path)
            try disk.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
            try? fm.removeItem(atPath: work + ".blobs")
            configuration.migrationProgress?(MigrationProgress(stage: stages.count, stages: stages.count, step: "done"))
        } catch {
            try? fm.removeItem(atPath: work)
            try? fm.removeItem(atPath: work + ".blobs")
            throw error
        }
    }

    private static func run(_ body: (ModelContext) throws -> Void, models: [any PersistentModel.Type], url: URL, configuration: ModelConfiguration) throws {
        var config = ModelConfiguration(configuration.name, url: url)
        config.durability = .deferred
        let container = try ModelContainer(for: Schema(models), configurations: [config])
        let context = ModelContext(container)
        try body(context)
        try context.save()
    }

    /// The version the store was written with: recorded, or found by its entities' shape.
    private static func storedVersion(path: String, plan: any SchemaMigrationPlan.Type) throws -> Schema.Version? {
        let store = try Store(path: path, options: StoreOptions(readOnly: true))
        defer { store.close() }
        let (recorded, schema) = try store.read { tx -> (Data?, Data?) in
            (try tx.metadata(versionKey).map { Data($0) }, try tx.metadata(StoreHandle.schemaKey).map { Data($0) })
        }
        if let recorded, let version = try? JSONDecoder().decode(Schema.Version.self, from: recorded) { return version }
        guard let schema, let stored = try? JSONDecoder().decode(StoredSchema.self, from: schema) else { return nil }
        for versioned in plan.schemas {
            let entities = try Schema(versioned.models).entities(includingRelated: false).map(StoredEntity.init)
            let matches = entities.allSatisfy { e in
                stored.entities.contains { $0.name == e.name && $0.properties == e.properties }
            }
            if matches { return versioned.versionIdentifier }
        }
        return nil
    }

    static func setVersion(_ version: Schema.Version, path: String) throws {
        let store = try Store(path: path)
        defer { store.close() }
        try store.write { tx in try tx.setMetadata(versionKey, Array(try JSONEncoder().encode(version))) }
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

    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration]) throws {
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        if let migrationPlan {
            for configuration in configurations { try Migrator.migrate(configuration: configuration, plan: migrationPlan) }
        }
        try self.init(for: givenSchema, configurations: configurations)
        if let last = migrationPlan?.schemas.last {
            for handle in handles where handle.configuration.allowsSave {
                try? handle.store.write { tx in try tx.setMetadata(Migrator.versionKey, Array(try JSONEncoder().encode(last.versionIdentifier))) }
            }
        }
    }
}
