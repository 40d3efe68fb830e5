import Foundation
import PostgresNIO
import Strata
import Synchronization

/// The store of a `PostgresConfiguration`: a container's models in PostgreSQL tables that
/// people and other tools can read (Docs/Postgres.md), driven by the context through SwiftData's
/// custom store API.
///
/// - `fetch` pushes the predicate, the sort, the limit and the offset down as SQL where they
///   translate (`PredicateSQL`), and asks the context to do the rest in memory
///   (`DataStoreError.preferInMemoryFilter`, `.preferInMemorySort`); `fetchCount` is `COUNT(*)`;
///   `enumerate` reads through a server-side cursor, a batch at a time.
/// - `save` is one SQL transaction: identifiers from the server's sequence in one round trip (a
///   small save takes a block, and the next small saves take theirs from it with none),
///   rows written in bulk (`unnest`), upserts by `INSERT … ON CONFLICT … RETURNING`, updates and
///   deletions checked against each row's version (a row another writer changed or deleted
///   since the saving context read it is a typed conflict), retried on serialization failures and
///   deadlocks.
/// - Other processes' saves wake this process's observers through LISTEN/NOTIFY, or by polling
///   the save counter where an engine has no LISTEN (a standby, CockroachDB).
///
/// Strata-only: SwiftData has no PostgreSQL store.
public final class PostgresStore: DataStore, DataStoreBatchedFetching, ObservableDataStore, @unchecked Sendable {
    public typealias Configuration = PostgresConfiguration
    public typealias Snapshot = DefaultSnapshot

    public let configuration: PostgresConfiguration
    public let schema: Schema
    /// The identifier written in the namespace when its tables were made: the same for every
    /// process and every replica of the database.
    public let identifier: String
    let session: PostgresSession
    /// Each model's table, by model (entity) name.
    let tables: [String: PostgresTable]
    /// The same tables by the schema's model types (a type's name is found without
    /// `String(describing:)` each time: a query asks several times).
    let tablesByType: [ObjectIdentifier: PostgresTable]
    /// Notifications of other processes' saves (LISTEN), this store's own saves, and the moves
    /// of the save counter read while not listening (`changeToken`).
    private let changes = Atomic<UInt64>(0)
    private let listener: Mutex<PostgresConnection?> = Mutex(nil)
    /// True while `listener` is up: the token is then `changes` alone, with no round trip.
    private let listening = Atomic<Bool>(false)
    /// While not listening: the save counter last read (nil before the first read), and when
    /// the store may next try to listen again (only a store whose first LISTEN worked does).
    private let polling = Mutex<(commits: String?, nextListen: ContinuousClock.Instant?)>((nil, nil))
    /// How long a store that lost its listener waits between two tries to listen again.
    static let relistenInterval: Duration = .milliseconds(500)
    /// Identifiers taken from the server's sequence and not yet given, in the order taken: a
    /// save of fewer objects than `idBlock` takes a block of them, so the saves after it need no
    /// round trip for theirs (`SaveRun.allocateIdentifiers`).
    private let spareIDs = Mutex<[Int64]>([])
    /// The text of each model's one-statement save (`SaveRun.runAsOneStatement`), made at its
    /// first: made at every save, it was 7% of the client's time in W2 (one-object saves).
    private let oneStatementSaves = Mutex<[String: String]>([:])

    /// The one-statement save's text under `key` (a model's name, and the kind of change),
    /// made by `make` at its first.
    func oneStatementSave(_ key: String, _ make: () -> String) -> String {
        if let made = oneStatementSaves.withLock({ $0[key] }) { return made }
        let made = make()
        oneStatementSaves.withLock { $0[key] = made }
        return made
    }
    /// The identifiers a small save takes from the sequence at once.
    static let idBlock = 64
    var namespace: String { configuration.namespace }
    /// The LISTEN/NOTIFY channel of the namespace (`channel(of:)`), made once: made at each
    /// save, its test for a double quote (Foundation's `range(of:)`) was 3.4% of the client's
    /// time in W2 (one-object saves).
    let channel: String
    /// The key of the advisory lock a save that records history takes (`closingExpressions`).
    let historyLockKey: String
    /// The LISTEN/NOTIFY channel of the namespace: `strata_<namespace>`, or `strata_` and a
    /// digest of the namespace (FNV-1a, the same in every process) where that name would not
    /// do: longer than a PostgreSQL name's 63 bytes (LISTEN cuts it, `pg_notify` refuses it),
    /// or with a double quote, which postgres-nio's own `LISTEN "<channel>"` does not escape.
    /// Its LISTEN then failed while this store's succeeded, and the first notification stopped
    /// the process (postgres-nio 1.33's `ListenStateMachine`: "Invalid state: initialized").
    static func channel(of namespace: String) -> String {
        let plain = "strata_" + namespace
        if plain.utf8.count <= 63 && !plain.contains("\"") { return plain }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in namespace.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "strata_" + String(hash, radix: 16)
    }

    public init(_ configuration: PostgresConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        try configuration.validate()
        guard let schema = configuration.schema else {
            throw StrataError(.invalidSchema, "A PostgresConfiguration made into a store needs a schema.")
        }
        self.configuration = configuration
        self.schema = schema
        channel = Self.channel(of: configuration.namespace)
        historyLockKey = configuration.namespace + "#history"
        session = try configuration.migration?.session
            ?? { () throws -> PostgresSession in
                let recipe = try configuration.connectionRecipe()
                return PostgresSession(configuration: recipe.configuration, tcp: recipe.tcp, target: recipe.target, location: configuration.location,
                                       preparesStatements: configuration.preparesStatements)
            }()
        if let migrationPlan, configuration.allowsSave, configuration.migration == nil {
            try PostgresMigration(configuration: configuration, plan: migrationPlan).run(session)
        }
        let tables = try PostgresTable.tables(of: schema, namespace: configuration.namespace)
        self.tables = tables
        tablesByType = Dictionary(schema.entities.compactMap { entity in
            tables[String(describing: entity.modelType)].map { (ObjectIdentifier(entity.modelType), $0) }
        }, uniquingKeysWith: { a, _ in a })
        identifier = try PostgresSchemaSetup(tables: tables, namespace: configuration.namespace, schema: schema,
                                             writable: configuration.allowsSave, location: configuration.location,
                                             version: migrationPlan?.schemas.last?.versionIdentifier).run(session)
        startListening()
    }

    deinit {
        if let connection = listener.withLock({ $0 }) { connection.closeSoon() }
    }

    // MARK: Observing

    /// Grows with every save of the namespace's tables: this process's, and another's once it
    /// committed. Told by NOTIFY while the store listens; read from the save counter the saves
    /// raise where LISTEN is not there (a standby, an engine without it) and while the listening
    /// connection is lost (a restart, a failover, a proxy's timeout), until it listens again.
    public func changeToken() throws -> UInt64 {
        if listening.load(ordering: .acquiring) {
            if let connection = listener.withLock({ $0 }), !connection.isClosed {
                return changes.load(ordering: .acquiring)
            }
            // The listener is gone, and the notifications of saves since with it: poll.
            listening.store(false, ordering: .releasing)
            polling.withLock { $0 = (nil, ContinuousClock.now) }
        }
        let token = try pollCommits()
        if polling.withLock({ $0.nextListen.map { $0 <= ContinuousClock.now } ?? false }) { listenAgain() }
        return token
    }

    /// Reads the save counter; when it moved since the last read (or was never read), counts a
    /// change. Returns the token.
    private func pollCommits() throws -> UInt64 {
        let rows = try session.withConnection { c in
            try c.query("SELECT \"value\" FROM \(PostgresTable.qualified(namespace, "strata_meta")) WHERE \"name\" = 'commits'")
        }
        let commits = rows.first?.first??.trimmingCharacters(in: .whitespaces) ?? ""
        return polling.withLock { state in
            if state.commits != commits {
                state.commits = commits
                changes.add(1, ordering: .acquiringAndReleasing)
            }
            return changes.load(ordering: .acquiring)
        }
    }

    /// (Not behind a transaction-mode pooler, `preparesStatements == false`: there the LISTEN
    /// runs on a server connection the pooler hands to others after it, and the notifications
    /// never reach this store. It reads the save counter instead, as on a standby.)
    private func startListening() {
        guard configuration.allowsSave, configuration.preparesStatements, let connection = listen() else { return }
        listener.withLock { $0 = connection }
        listening.store(true, ordering: .releasing)
    }

    private func listen() -> PostgresConnection? {
        session.listen(channel) { [weak self] _ in
            self?.changes.add(1, ordering: .acquiringAndReleasing)
        }
    }

    /// After the listener was lost: listens on a new connection, then reads the counter once
    /// more (a save committed before the LISTEN took effect sent its notification to no one),
    /// and only then trusts notifications alone. On failure, tries again after
    /// `relistenInterval`, polling meanwhile.
    private func listenAgain() {
        // One thread tries; the others poll meanwhile.
        let mine = polling.withLock { state -> Bool in
            guard let next = state.nextListen, next <= ContinuousClock.now else { return false }
            state.nextListen = ContinuousClock.now + Self.relistenInterval
            return true
        }
        guard mine, let connection = listen() else { return }
        guard (try? pollCommits()) != nil else {
            connection.closeSoon()
            return
        }
        let old = listener.withLock { held in
            defer { held = connection }
            return held
        }
        old?.closeSoon()
        polling.withLock { $0 = (nil, nil) }
        listening.store(true, ordering: .releasing)
    }

    /// True while the store's LISTEN connection is up (then `changeToken` needs no round trip).
    var isListening: Bool { listening.load(ordering: .acquiring) }

    /// After a save of this store: observers of this process see it at once.
    func savedHere() { changes.add(1, ordering: .acquiringAndReleasing) }

    /// `count` identifiers kept from an earlier save's block, the oldest first; nil when fewer
    /// are kept (then none is taken).
    func takeSpareIDs(_ count: Int) -> [Int64]? {
        spareIDs.withLock { spare in
            guard spare.count >= count else { return nil }
            defer { spare.removeFirst(count) }
            return Array(spare.prefix(count))
        }
    }

    /// Keeps identifiers just taken from the sequence and not given, in place of those kept
    /// before: those are dropped (a gap), so that a store gives its identifiers in increasing
    /// order, as its saves are made. (An identifier is never given twice, even when its save
    /// fails: the sequence is not transactional.)
    func keepSpareIDs(_ ids: ArraySlice<Int64>) {
        spareIDs.withLock { $0 = Array(ids) }
    }

    // MARK: Rows

    func table<T>(_ model: T.Type) throws -> PostgresTable {
        if let table = tablesByType[ObjectIdentifier(model)] { return table }
        let name = String(describing: model)
        guard let table = tables[name] else {
            throw StrataError(.unknownModel, "\(name) is not in the schema of the PostgreSQL store at \(configuration.location).")
        }
        return table
    }

    /// The identifier of a row.
    func identifier(_ entity: String, _ id: Int64) throws -> PersistentIdentifier {
        try PersistentIdentifier.identifier(for: identifier, entityName: entity, primaryKey: id)
    }

    /// The row id a permanent identifier of this store names.
    func primaryKey(_ id: PersistentIdentifier) -> Int64? {
        guard !id.isTemporary, id.storeIdentifier == identifier else { return nil }
        // An integer key is the identifier's row (`identifier(for:entityName:primaryKey:)`),
        // read without writing it out as text.
        if id.rowID > 0 { return id.rowID }
        return id.primaryKey.flatMap { Int64($0) }
    }

    public func erase() throws {
        guard configuration.allowsSave else { throw StrataError(.readOnly, "The PostgreSQL store at \(configuration.location) was opened with allowsSave: false.") }
        let names = tables.values.flatMap { [$0.qualified] + $0.toManys.map(\.table) + ($0.externals.isEmpty ? [] : [$0.externalTable]) }
        try session.transaction { c in
            if !names.isEmpty { try c.execute("TRUNCATE \(names.joined(separator: ", "))") }
            try announceCommit(history: nil, c)
        }
        savedHere()
    }
}
