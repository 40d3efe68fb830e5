// The writer of HistoryProcessTests: a second process saving batches to a store while the
// test process follows them read-only (ResultsObserver, HistoryChanges, fetchHistory).
import Foundation
import Strata

/// One event of a batch; deleting one keeps its label in the history's tombstone.
public final class HistoryEvent: PersistentModel {
    @Attribute(.unique) public var key: Int = 0
    @Attribute public var batch: Int = 0
    @Attribute(.preserveValueOnDeletion) public var label: String = ""
    public init() {}
}

public enum HistoryWorkload {
    /// Objects per save: an observer that ever sees a count that is not a multiple of it saw
    /// part of a save.
    public static let perSave = 5
    public static let author = "history-writer"

    public static func label(_ key: Int) -> String { "event \(key)" }

    /// Saves batch `batch` (keys `batch * perSave ..< (batch + 1) * perSave`).
    public static func saveBatch(_ batch: Int, in context: ModelContext) throws {
        for key in (batch * perSave)..<((batch + 1) * perSave) {
            let event = HistoryEvent()
            event.key = key
            event.batch = batch
            event.label = label(key)
            context.insert(event)
        }
        try context.save()
    }

    /// The label `rename` gives an event.
    public static func renamed(_ key: Int) -> String { "renamed \(key)" }

    /// Changes event `key`'s label in one save.
    public static func rename(_ key: Int, in context: ModelContext) throws {
        for event in try context.fetch(FetchDescriptor<HistoryEvent>(predicate: #Predicate { $0.key == key })) { event.label = renamed(key) }
        try context.save()
    }

    /// Deletes batch `batch`'s objects in one save.
    public static func deleteBatch(_ batch: Int, in context: ModelContext) throws {
        try context.delete(model: HistoryEvent.self, where: #Predicate { $0.batch == batch })
        try context.save()
    }
}
