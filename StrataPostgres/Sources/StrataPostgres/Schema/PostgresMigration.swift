import Foundation
import Strata

/// A migration plan's stages on a namespace, all in ONE transaction (Docs/Postgres.md,
/// "Migrations"): a failure anywhere, or a process that dies, leaves the tables as they were.
///
/// The version the tables were written with is the one `strata_meta` records ('version', set
/// whenever a container opens them with a plan), or else the newest of the plan's versions
/// whose tables are exactly those stored. Then, for each stage from there to the plan's last
/// version, as on a file:
/// 1. `willMigrate` on a context of the stage's old models, its changes saved;
/// 2. the tables made those of the new models (lightweight changes, `ALTER TABLE`);
/// 3. `didMigrate` on a context of the new models, its changes saved;
/// 4. the new version recorded (the next stage goes on from it).
///
/// The stages' containers run their statements on the migration's connection, their saves as
/// savepoints of its transaction. The namespace's advisory lock is held throughout, so a
/// process opening the namespace meanwhile waits, then finds it migrated.
struct PostgresMigration {
    let configuration: PostgresConfiguration
    let plan: any SchemaMigrationPlan.Type

    var namespace: String { configuration.namespace }
    var meta: String { PostgresTable.qualified(namespace, "strata_meta") }

    func run(_ session: PostgresSession) throws {
        let connection = try configuration.connectionConfiguration()
        try session.transaction(retries: 0) { c in
            let exists = try c.query("SELECT to_regclass($1::text)::text", ["\(SQL.identifier(namespace)).\"strata_meta\""])
            guard exists.first?.first??.isEmpty == false else { return }   // no tables yet: made as they are
            try c.execute("SELECT pg_advisory_xact_lock(hashtext($1::text))", [namespace])
            guard let stored = try storedVersion(c) else { return }
            let stages = try plan.stages(from: stored, location: configuration.location)
            guard !stages.isEmpty else { return }
            var pinned = configuration
            pinned.migration = MigrationTransaction(session: PostgresSession(pinnedTo: c, configuration: connection))
            pinned.migrationProgress = nil
            let report = configuration.migrationProgress
            for (i, stage) in stages.enumerated() {
                report?(MigrationProgress(stage: i, stages: stages.count, step: "from \(stage.fromVersion.versionIdentifier) to \(stage.toVersion.versionIdentifier)"))
                do {
                    try run(stage, pinned)
                    let version = String(decoding: try JSONEncoder().encode(stage.toVersion.versionIdentifier), as: UTF8.self)
                    try c.execute("INSERT INTO \(meta) (\"name\", \"value\") VALUES ('version', $1::text) ON CONFLICT (\"name\") DO UPDATE SET \"value\" = EXCLUDED.\"value\"", [version])
                } catch {
                    throw failure(error, stage)
                }
            }
            report?(MigrationProgress(stage: stages.count, stages: stages.count, step: "done"))
        }
    }

    private func run(_ stage: MigrationStage, _ configuration: PostgresConfiguration) throws {
        if case .custom(_, _, let will, _) = stage, let will {
            try run(will, models: stage.fromVersion.models, configuration)
        }
        // Opening with the new models makes their tables (the lightweight part of the change).
        try run({ _ in }, models: stage.toVersion.models, configuration)
        if case .custom(_, _, _, let did) = stage, let did {
            try run(did, models: stage.toVersion.models, configuration)
        }
    }

    private func run(_ body: (ModelContext) throws -> Void, models: [any PersistentModel.Type], _ configuration: PostgresConfiguration) throws {
        var configuration = configuration
        let schema = Schema(models)
        configuration.schema = schema
        let container = try ModelContainer(for: schema, configurations: [configuration] as [any DataStoreConfiguration])
        let context = ModelContext(container)
        try body(context)
        try context.save()
    }

    /// The version recorded, or the newest of the plan's versions whose tables are those stored.
    private func storedVersion(_ c: SQLConnection) throws -> Schema.Version? {
        let rows = try c.query("SELECT \"name\", \"value\" FROM \(meta) WHERE \"name\" IN ('version', 'schema')")
        let values = Dictionary(rows.compactMap { row -> (String, String)? in
            guard row.count == 2, let name = row[0], let value = row[1] else { return nil }
            return (name, value)
        }, uniquingKeysWith: { a, _ in a })
        if let recorded = values["version"], let version = try? JSONDecoder().decode(Schema.Version.self, from: Data(recorded.utf8)) {
            return version
        }
        guard let json = values["schema"], let stored = try? JSONDecoder().decode(StoredTables.self, from: Data(json.utf8)) else { return nil }
        for versioned in plan.schemas.reversed() {
            let tables = StoredTables(try PostgresTable.tables(of: Schema(versioned.models), namespace: namespace))
            if tables == stored { return versioned.versionIdentifier }
        }
        return nil
    }

    private func failure(_ error: any Error, _ stage: MigrationStage) -> any Error {
        let step = "from \(stage.fromVersion.versionIdentifier) to \(stage.toVersion.versionIdentifier)"
        if let strata = error as? StrataError {
            return StrataError(strata.code, "The migration of the PostgreSQL store at \(configuration.location) \(step) failed, and the tables were left as they were: \(strata.message)",
                               underlying: strata.underlying, objects: strata.objects)
        }
        return StrataError(.storeFailure, "The migration of the PostgreSQL store at \(configuration.location) \(step) failed, and the tables were left as they were: \(error)", underlying: error)
    }
}
