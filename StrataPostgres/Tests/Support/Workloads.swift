import Foundation
import Strata
import StrataPostgres

/// An object keyed by a unique number: the writers upsert them.
public final class PGKeyed: PersistentModel {
    @Attribute(.unique) public var key: Int = 0
    @Attribute public var value: Int = 0
    @Attribute public var writer: Int = 0
    public init() {}
    public init(key: Int, value: Int, writer: Int) {
        self.key = key
        self.value = value
        self.writer = writer
    }
}

/// A plain object: each save of each writer inserts one.
public final class PGPlain: PersistentModel {
    @Attribute public var writer: Int = 0
    @Attribute public var save: Int = 0
    public init() {}
    public init(writer: Int, save: Int) {
        self.writer = writer
        self.save = save
    }
}

/// Many writers at once (issue 29's multi-process test): each save upserts 5 objects from 200
/// shared unique keys and inserts 1 plain object.
public enum ManyWriters {
    public static let keys = 200
    public static let upsertsPerSave = 5

    public static var models: [any PersistentModel.Type] { [PGKeyed.self, PGPlain.self] }

    public static func configuration(url: URL, namespace: String, allowsSave: Bool = true) -> PostgresConfiguration {
        PostgresConfiguration("writers", schema: Schema(models), url: url, namespace: namespace, allowsSave: allowsSave)
    }

    /// The keys save `save` of writer `writer` upserts: every key is upserted by some save once
    /// four writers have each made 300 saves (and by two writers at about the same time).
    public static func keys(writer: Int, save: Int) -> [Int] {
        (0..<upsertsPerSave).map { ((save * upsertsPerSave) + $0 + writer * 7) % keys }
    }

    /// Adds 1 to the value of the object keyed `counterKey`, read and saved by one context, and
    /// retried with a new context after each conflict (another writer changed it since the read).
    /// Between the read and the save, another context of the container reads the object again, as
    /// a server's other request would: that read must not hide a change another process made
    /// meanwhile. The number of conflicts met.
    public static func increment(_ container: ModelContainer) throws -> Int {
        var conflicts = 0
        while true {
            let context = ModelContext(container)
            let key = counterKey
            let descriptor = FetchDescriptor<PGKeyed>(predicate: #Predicate { $0.key == key })
            guard let counter = try context.fetch(descriptor).first else {
                throw StrataError(.storeFailure, "No counter (key \(counterKey)) to increment.")
            }
            // (A round trip first, which leaves the other processes time to save meanwhile.)
            _ = try ModelContext(container).fetchCount(FetchDescriptor<PGPlain>())
            _ = try ModelContext(container).fetch(descriptor)
            counter.value += 1
            do {
                try context.save()
                return conflicts
            } catch let error as StrataError where error.code == .saveConflict {
                conflicts += 1
            }
        }
    }

    /// The key of the counter `increment` adds to.
    public static let counterKey = -1

    /// One save of a writer.
    public static func save(_ context: ModelContext, writer: Int, save: Int) throws {
        for key in keys(writer: writer, save: save) { context.insert(PGKeyed(key: key, value: save, writer: writer)) }
        context.insert(PGPlain(writer: writer, save: save))
        try context.save()
    }
}
