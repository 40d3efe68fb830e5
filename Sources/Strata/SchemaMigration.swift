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

enum Migrator {
    static let versionKey = "strata.schema.version"

    /// Runs the stages of `plan` that lie between the store's version and the plan's last one.
    ///
    /// The stages run on a copy of the store (`<store>.migrating`, its blob files hard-linked
    /// into `<store>.migrating.blobs`: they are never changed in place). The copy replaces the
    /// store by one rename only when every stage succeeded, after the new blob files were
    /// linked into the store's blob folder and made durable; so an error or a crash at any
    /// point leaves the store as it was, or (from the rename on) migrated. The store stays
    /// locked for the whole run, so no other process writes to it meanwhile.
    static func migrate(configuration: ModelConfiguration, plan: any SchemaMigrationPlan.Type, fileSystem fs: any FileSystem) throws {
        guard !configuration.isStoredInMemoryOnly, configuration.allowsSave else { return }
        let path = configuration.url.path
        guard fs.fileExists(path) else { return }
        // Held (exclusively locked) until the migrated copy has replaced it.
        let original: Store
        do { original = try Store(path: path, options: StoreOptions(), fileSystem: fs) } catch {
            throw StrataError.store(error, while: "open the store at \(path) to migrate it")
        }
        defer { original.close() }
        // What an interrupted run left (a crash before or after its swap) goes first.
        let work = path + ".migrating"
        try removeLeftovers(of: work, fileSystem: fs)
        guard let stored = try storedVersion(original, plan: plan) else { return }
        let stages = try stagesToRun(plan: plan, from: stored, path: path)
        if stages.isEmpty { return }
        let report = configuration.migrationProgress
        let parts = stages.count + 1   // copying the store, then each stage
        let blobs = path + ".blobs", workBlobs = work + ".blobs"
        let folder = path.parentDirectory
        // Blob files linked into the store's folder for the migrated store, removed again if
        // the swap does not happen.
        var linked: [String] = []
        var swapped = false
        do {
            try copyFile(path, to: work, fileSystem: fs) { done, total in
                report?(MigrationProgress(stage: 0, stages: parts, step: "copy the store", completedUnitCount: done, totalUnitCount: total))
            }
            if fs.isDirectory(blobs) {
                try fs.createDirectory(workBlobs)
                for name in try fs.listDirectory(blobs) { try fs.linkFile(blobs + "/" + name, to: workBlobs + "/" + name) }
            }
            let workURL = URL(fileURLWithPath: work)
            for (i, stage) in stages.enumerated() {
                let step = "from \(stage.from.versionIdentifier) to \(stage.to.versionIdentifier)"
                report?(MigrationProgress(stage: i + 1, stages: parts, step: step))
                if case .custom(_, _, let will, _) = stage, let will {
                    try run(will, models: stage.from.models, url: workURL, configuration: configuration, fileSystem: fs)
                }
                // Opening with the next models applies the lightweight part of the change.
                try run({ _ in }, models: stage.to.models, url: workURL, configuration: configuration, fileSystem: fs)
                if case .custom(_, _, _, let did) = stage, let did {
                    try run(did, models: stage.to.models, url: workURL, configuration: configuration, fileSystem: fs)
                }
                try setVersion(stage.to.versionIdentifier, path: work, fileSystem: fs)
            }
            report?(MigrationProgress(stage: parts, stages: parts, step: "replace the store"))
            // The migrated store's new blob files go into the store's folder, durably, before
            // the store that refers to them: a power cut after the rename must not leave it
            // pointing at missing files.
            if fs.isDirectory(workBlobs) {
                if !fs.isDirectory(blobs) { try fs.createDirectory(blobs) }
                for name in try fs.listDirectory(workBlobs) where !fs.fileExists(blobs + "/" + name) {
                    try fs.linkFile(workBlobs + "/" + name, to: blobs + "/" + name)
                    linked.append(blobs + "/" + name)
                }
                try fs.syncDirectory(blobs)
                try fs.syncDirectory(folder)
            }
            // The version's commit was deferred: make the whole copy durable, then swap.
            let copy = try Store(path: work, options: StoreOptions(), fileSystem: fs)
            try copy.sync()
            copy.close()
            try fs.rename(work, to: path)
            swapped = true
            try fs.syncDirectory(folder)
        } catch {
            // Before the rename the store is untouched; take away what the migration added.
            if !swapped {
                for file in linked { try? fs.removeFile(file) }
                try? removeLeftovers(of: work, fileSystem: fs)
            }
            if swapped {
                throw StrataError(.storeFailure, "The store at \(path) was migrated, but making the change durable failed: \(error). Reopen it; if the disk lost the change, the migration runs again.", underlying: error)
            }
            if error is SystemError || error is StoreError {
                throw StrataError(.storeFailure, "Strata could not migrate the store at \(path): \(error). The store was left as it was; free space or fix the cause and open it again.", underlying: error)
            }
            throw error
        }
        // Blob files in the store's folder that the copy's folder no longer has are those the
        // stages deleted: the migrated store does not refer to them. (A crash before this
        // leaves them for the next compaction.)
        if fs.isDirectory(workBlobs), fs.isDirectory(blobs), let kept = try? Set(fs.listDirectory(workBlobs)) {
            for name in (try? fs.listDirectory(blobs)) ?? [] where name.hasSuffix(".blob") && !kept.contains(name) {
                try? fs.removeFile(blobs + "/" + name)
            }
        }
        // The links of the copy's blob files; the store's folder has its own now.
        try? removeLeftovers(of: work, fileSystem: fs)
        report?(MigrationProgress(stage: parts, stages: parts, step: "done"))
    }

    /// The stages from version `stored` to the plan's last version, in order.
    private static func stagesToRun(plan: any SchemaMigrationPlan.Type, from stored: Schema.Version, path: String) throws -> [MigrationStage] {
        let schemas = plan.schemas
        guard let start = schemas.firstIndex(where: { $0.versionIdentifier == stored }) else {
            throw StrataError(.schemaMismatch, "The store at \(path) has schema version \(stored), which \(plan) does not list. Add that version to its schemas.")
        }
        var stages: [MigrationStage] = []
        var version = start
        while version < schemas.count - 1 {
            let from = schemas[version].versionIdentifier
            guard let stage = plan.stages.first(where: { $0.from.versionIdentifier == from }) else {
                throw StrataError(.schemaMismatch, "\(plan) has no stage from version \(from); add a MigrationStage from it to the next version.")
            }
            guard let next = schemas.firstIndex(where: { $0.versionIdentifier == stage.to.versionIdentifier }), next > version else {
                throw StrataError(.schemaMismatch, "\(plan)'s stage from \(from) goes to a version not after it.")
            }
            stages.append(stage)
            version = next
        }
        return stages
    }

    /// Removes what an interrupted migration left: the copy and its blob links.
    private static func removeLeftovers(of work: String, fileSystem fs: any FileSystem) throws {
        if fs.fileExists(work) { try fs.removeFile(work) }
        let workBlobs = work + ".blobs"
        if fs.isDirectory(workBlobs) {
            for name in try fs.listDirectory(workBlobs) { try fs.removeFile(workBlobs + "/" + name) }
            try fs.removeDirectory(workBlobs)
        }
    }

    /// Copies the file at `from` to a new file `to`, synced, in 1 MiB pieces.
    private static func copyFile(_ from: String, to: String, fileSystem fs: any FileSystem, progress: (Int64, Int64) -> Void) throws {
        let source = try fs.openFile(from, readOnly: true, create: false)
        defer { source.close() }
        let target = try fs.openFile(to, readOnly: false, create: true)
        defer { target.close() }
        let size = try source.size()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try target.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: offset) }
            offset += UInt64(n)
            progress(Int64(offset), Int64(size))
        }
        try target.sync()
    }

    private static func run(_ body: (ModelContext) throws -> Void, models: [any PersistentModel.Type], url: URL,
                            configuration: ModelConfiguration, fileSystem: any FileSystem) throws {
        var config = ModelConfiguration(configuration.name, url: url)
        config.durability = .deferred
        let container = try ModelContainer(for: Schema(models), configurations: [config], fileSystem: fileSystem)
        let context = ModelContext(container)
        try body(context)
        try context.save()
        // One sync for the whole step (its saves were deferred); it also lets the engine remove
        // the files of blobs the step deleted, so the copy's blob folder holds exactly its blobs.
        for handle in container.handles { try handle.store.sync() }
    }

    /// The version the store was written with: recorded, or found by its entities' shape.
    private static func storedVersion(_ store: Store, plan: any SchemaMigrationPlan.Type) throws -> Schema.Version? {
        let (recorded, schema) = try store.read { tx -> (Data?, Data?) in
            (try tx.metadata(versionKey).map { Data($0) }, try tx.metadata(StoreHandle.schemaKey).map { Data($0) })
        }
        if let recorded, let version = try? JSONDecoder().decode(Schema.Version.self, from: recorded) { return version }
        guard let schema, let stored = try? JSONDecoder().decode(StoredSchema.self, from: schema) else { return nil }
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

    /// The version recorded in the store, if any.
    static func recordedVersion(_ store: Store) throws -> Schema.Version? {
        try store.read { tx in try tx.metadata(versionKey).flatMap { try? JSONDecoder().decode(Schema.Version.self, from: Data($0)) } }
    }

    static func setVersion(_ version: Schema.Version, path: String, fileSystem: any FileSystem) throws {
        let store = try Store(path: path, options: StoreOptions(durability: .deferred), fileSystem: fileSystem)
        defer { store.close() }
        try setVersion(version, in: store)
    }

    static func setVersion(_ version: Schema.Version, in store: Store) throws {
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

    /// The same for a schema and any number of configurations (one, typically). Same as
    /// SwiftData's `ModelContainer(for:migrationPlan:configurations:)`.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: ModelConfiguration...) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// The same with the configurations in an array.
    public convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration]) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations, fileSystem: DiskFileSystem())
    }

    /// The same, with every file operation going through `fileSystem` (the engine's fault seam).
    package convenience init(for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?, configurations: [ModelConfiguration],
                             fileSystem: any FileSystem) throws {
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        if let migrationPlan {
            for configuration in configurations { try Migrator.migrate(configuration: configuration, plan: migrationPlan, fileSystem: fileSystem) }
        }
        try self.init(for: givenSchema, configurations: configurations, fileSystem: fileSystem is DiskFileSystem ? nil : fileSystem)
        self.migrationPlan = migrationPlan
        // Record the plan's last version, so the next open knows where the store stands
        // without comparing shapes (written once, not at every open).
        if let last = migrationPlan?.schemas.last?.versionIdentifier {
            for handle in handles where handle.configuration.allowsSave && !handle.configuration.isStoredInMemoryOnly {
                if (try? Migrator.recordedVersion(handle.store)) != last { try? Migrator.setVersion(last, in: handle.store) }
            }
        }
    }
}
