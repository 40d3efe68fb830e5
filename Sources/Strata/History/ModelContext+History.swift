import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// The history transactions `descriptor` selects, from every store of the container, in
    /// commit order unless it sorts them. Same as SwiftData's `fetchHistory(_:)`.
    ///
    /// ```swift
    /// let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > lastToken })
    /// for transaction in try context.fetchHistory(descriptor) {
    ///     for change in transaction.changes { ... }
    ///     lastToken = transaction.token
    /// }
    /// ```
    /// - Throws: `StrataError` `.historyTokenExpired` when the predicate names a token of a
    ///   store older than the oldest transaction it keeps (pruned by the retention or by
    ///   `deleteHistory`): fetch everything again, then go on from the newest token.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        guard T.self == DefaultHistoryTransaction.self else {
            throw StrataError(.unknownModel, "Strata's stores record DefaultHistoryTransaction history; \(T.self) is not one Strata knows.")
        }
        let predicate = descriptor.predicate.map { unsafeBitCast($0, to: Predicate<DefaultHistoryTransaction>.self) }
        var found: [DefaultHistoryTransaction] = []
        // A predicate that does not read `changes` is evaluated on the transaction without
        // them, so that a transaction it rejects never has its changes made.
        let readsChanges = predicate.map { HistoryReading.readsChanges($0) } ?? false
        do {
            for handle in container.handles {
                try handle.storage.read { reader in
                    try HistoryReading.checkNotExpired(predicate, handle: handle, reader: reader)
                    try HistoryStore.forEach(reader, from: 1) { token, record in
                        if let predicate, !readsChanges {
                            let shell = HistoryReading.transaction(record, token: token, handle: handle, container: container, withChanges: false)
                            guard try predicate.evaluate(shell) else { return true }
                        }
                        let transaction = HistoryReading.transaction(record, token: token, handle: handle, container: container)
                        if readsChanges, let predicate, try !predicate.evaluate(transaction) { return true }
                        found.append(transaction)
                        return true
                    }
                }
            }
        } catch let error as StrataError {
            throw error
        } catch {
            throw StrataError.store(error, while: "fetch history")
        }
        if descriptor.sortBy.isEmpty && container.handles.count > 1 { found.sort { $0.timestamp < $1.timestamp } }
        var sorted = found.compactMap { $0 as? T }
        if !descriptor.sortBy.isEmpty { sorted.sort(using: descriptor.sortBy) }
        if let limit = descriptor.fetchLimit, limit >= 0, sorted.count > limit { sorted.removeSubrange(limit...) }
        return sorted
    }

    /// Deletes the history transactions `descriptor` selects (its sort and limit apply), each
    /// in the store it belongs to; tokens up to the oldest transaction left have expired from
    /// then on. Same as SwiftData's `deleteHistory(_:)`.
    ///
    /// ```swift
    /// try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token < oldest }))
    /// ```
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let doomed = try fetchHistory(descriptor).compactMap { $0 as? DefaultHistoryTransaction }
        guard !doomed.isEmpty else { return }
        do {
            for handle in container.handles where handle.configuration.allowsSave {
                let tokens = doomed.filter { $0.storeIdentifier == handle.storeIdentifier }.map { RowID($0.token.tokenValue) }
                guard !tokens.isEmpty else { continue }
                let writer = try handle.storage.beginWrite()
                do {
                    if let collection = writer.collection(named: HistoryRecord.collection) {
                        for token in tokens { try writer.delete(token, in: collection, indexKeys: []) }
                        // Expired: every token below the oldest transaction left.
                        var oldest: RowID? = nil
                        try writer.forEachRecord(in: collection, from: nil) { row, _ in oldest = row; return false }
                        let next = try writer.nextRowID(in: collection)
                        let watermark = (oldest ?? next) - 1
                        if watermark > (try HistoryStore.pruned(writer)) { try HistoryStore.setPruned(watermark, writer) }
                    }
                    try writer.commit()
                } catch {
                    writer.rollback()
                    throw error
                }
            }
        } catch {
            throw StrataError.store(error, while: "delete history")
        }
    }
}

/// Turning history records into SwiftData's transaction values.
enum HistoryReading {
    static func transaction(_ record: HistoryRecord, token: RowID, handle: StoreHandle, container: ModelContainer,
                            withChanges: Bool = true) -> DefaultHistoryTransaction {
        let value = Int64(token)
        var changes: [HistoryChange] = []
        if withChanges { changes.reserveCapacity(record.changeCount) }
        for run in record.runs where withChanges {
            guard let (runHandle, table) = container.location(ofEntityNamed: run.entity), runHandle === handle else { continue }
            let entity = table.entity
            let scope = handle.identifierScope(for: entity)
            let tombstones = run.tombstones.map { fields in
                fields.compactMap { field -> (name: String, value: any Sendable)? in
                    guard let index = entity.propertyIndex[field.name] else { return nil }
                    let property = entity.properties[index]
                    guard let decoded: Any = try? field.bytes.withUnsafeBytes({ (raw: UnsafeRawBufferPointer) -> Any in try property.fieldValue(raw) }) else { return nil }
                    // A value decoded afresh from the record's bytes (a value type, or a new
                    // object nobody else holds); `Sendable` is a marker with no run-time form.
                    var copy = decoded
                    let value = withUnsafeMutablePointer(to: &copy) {
                        UnsafeMutableRawPointer($0).assumingMemoryBound(to: (any Sendable).self).pointee
                    }
                    return (field.name, value)
                }
            }
            for i in 0..<run.count {
                let row = run.firstRow + RowID(i)
                let id = handle.custom?.identifier(entity, row) ?? PersistentIdentifier(scope: scope, rowID: Int64(row))
                changes.append(change(entity.type, run, id: id, position: changes.count, transaction: value,
                                      tombstone: i < tombstones.count ? tombstones[i] : []))
            }
        }
        return DefaultHistoryTransaction(transactionIdentifier: value, token: DefaultHistoryToken(tokenValue: value, storeIdentifier: handle.storeIdentifier),
                                         changes: changes, timestamp: record.timestamp, author: record.author, storeIdentifier: handle.storeIdentifier,
                                         bundleIdentifier: record.bundleIdentifier, processIdentifier: record.processIdentifier)
    }

    private static func change<M: PersistentModel>(_ type: M.Type, _ run: HistoryRecord.Run, id: PersistentIdentifier, position: Int,
                                                   transaction: Int64, tombstone: [(name: String, value: any Sendable)]) -> HistoryChange {
        switch run.kind {
        case .insert:
            .insert(DefaultHistoryInsert<M>(changedPersistentIdentifier: id, changeIdentifier: position, transactionIdentifier: transaction))
        case .update:
            .update(DefaultHistoryUpdate<M>(changedPersistentIdentifier: id, changeIdentifier: position, transactionIdentifier: transaction,
                                            updatedAttributes: run.attributes.map { HistoryAttribute(name: $0) }))
        case .delete:
            .delete(DefaultHistoryDelete<M>(changedPersistentIdentifier: id, changeIdentifier: position, transactionIdentifier: transaction,
                                            tombstone: HistoryTombstone(tombstone)))
        }
    }

    /// Throws `historyTokenExpired` when `predicate` names a token of this store that is older
    /// than what the store keeps. (The tokens are found among the predicate's constants.)
    static func checkNotExpired(_ predicate: Predicate<DefaultHistoryTransaction>?, handle: StoreHandle, reader: any StorageReader) throws {
        guard let predicate else { return }
        let pruned = Int64(try HistoryStore.pruned(reader))
        guard pruned > 0 else { return }
        var tokens: [DefaultHistoryToken] = []
        collectTokens(in: predicate.expression, into: &tokens, depth: 0)
        if let old = tokens.first(where: { $0.storeIdentifier == handle.storeIdentifier && $0.tokenValue < pruned }) {
            throw StrataError(.historyTokenExpired, "The history token \(old) is older than the oldest transaction the store keeps (transactions up to \(pruned) were deleted). Fetch the objects again, then follow the history from the newest token.")
        }
    }

    /// True when the predicate reads the transaction's `changes` (found among its key paths).
    static func readsChanges(_ predicate: Predicate<DefaultHistoryTransaction>) -> Bool {
        func walk(_ value: Any, depth: Int) -> Bool {
            if let keyPath = value as? AnyKeyPath { return keyPath == \DefaultHistoryTransaction.changes }
            guard depth < 64 else { return true }
            return Mirror(reflecting: value).children.contains { walk($0.value, depth: depth + 1) }
        }
        return walk(predicate.expression, depth: 0)
    }

    private static func collectTokens(in value: Any, into tokens: inout [DefaultHistoryToken], depth: Int) {
        if let token = value as? DefaultHistoryToken { return tokens.append(token) }
        guard depth < 64 else { return }
        for child in Mirror(reflecting: value).children { collectTokens(in: child.value, into: &tokens, depth: depth + 1) }
    }
}
