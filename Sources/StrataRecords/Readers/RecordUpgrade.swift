import Foundation
import StrataEngine

// Rewriting records of older layouts into their entity's current layout: what `strata
// migrate` does. A lightweight change never rewrites records (Docs/Migrations.md); this does,
// once, when asked, without the model classes: from the schema stored in the store (layouts,
// former names, stored defaults). Values do not change, so neither do index keys: each row
// keeps the ones its record had.

/// What `upgradeRecords(in:progress:)` did.
package struct RecordUpgradeReport: Sendable, Equatable {
    /// One entity of the stored schema that has a collection in the store.
    package struct EntityCount: Sendable, Equatable {
        package let name: String
        /// The entity's records.
        package let records: Int
        /// Those rewritten from an older layout into the current one.
        package let rewritten: Int

        package init(name: String, records: Int, rewritten: Int) {
            self.name = name
            self.records = records
            self.rewritten = rewritten
        }
    }

    /// False for a store without an object schema (written with StrataEngine alone): it holds
    /// no object records, and nothing was done.
    package let hasSchema: Bool
    /// Every entity with a collection, in the stored schema's order.
    package let entities: [EntityCount]

    /// Records rewritten, over every entity.
    package var rewritten: Int { entities.reduce(0) { $0 + $1.rewritten } }
}

/// Rewrites every record of `store` still in an older layout of its entity into the current
/// one, in one write transaction: all of them, or (on any error) none.
///
/// A property is taken from the old record's field of the same name, or of a former name; a
/// property the old layout lacks takes the default stored when it was added. When no record
/// needs rewriting nothing is written. `progress` is called as each entity with older layouts
/// starts (one stage each), as its records go by (units: records visited of the entity's
/// records), before the commit ("commit") and at the end ("done").
///
/// - Throws: `StrataError` `.schemaMismatch` when a record lacks a property for which the
///   store keeps no default (a store written before Strata kept defaults and former names:
///   opening it once, writable, with the app's models records them); `.corruptRecord` for a
///   schema or record that does not decode; `.storeFailure` for the engine's errors (a
///   read-only store, I/O). The store is then as it was.
package func upgradeRecords(in store: Store, progress: ((MigrationProgress) -> Void)? = nil) throws -> RecordUpgradeReport {
    let path = store.path
    let tx: WriteTransaction
    do { tx = try store.beginWrite() } catch { throw StrataError.store(error, while: "begin rewriting the records of \(path)") }
    do {
        let report = try upgradeRecords(tx, path: path, progress: progress)
        if report.report.rewritten == 0 {
            tx.rollback()
        } else {
            let stages = report.stages
            progress?(MigrationProgress(stage: stages, stages: stages, step: "commit"))
            do { try tx.commit() } catch { throw StrataError.store(error, while: "commit the rewritten records of \(path)") }
        }
        progress?(MigrationProgress(stage: report.stages, stages: report.stages, step: "done"))
        return report.report
    } catch {
        tx.rollback()
        throw error
    }
}

private func upgradeRecords(_ tx: WriteTransaction, path: String,
                            progress: ((MigrationProgress) -> Void)?) throws -> (report: RecordUpgradeReport, stages: Int) {
    guard let bytes = try wrapped("read the schema of \(path)", { try tx.metadata(StoredSchema.metadataKey) }) else {
        return (RecordUpgradeReport(hasSchema: false, entities: []), 0)
    }
    let schema = try StoredSchema.decode(bytes, path: path)
    let work = schema.entities.compactMap { e in tx.collection(named: e.name).map { (entity: e, collection: $0) } }
    let stages = work.filter { $0.entity.allLayouts.count > 1 }.count
    var counts: [RecordUpgradeReport.EntityCount] = []
    var stage = 0
    for (entity, collection) in work {
        let records = try wrapped("count the records of \(entity.name)") { try tx.count(in: collection) }
        guard entity.allLayouts.count > 1 else {
            counts.append(.init(name: entity.name, records: records, rewritten: 0))
            continue
        }
        let upgrade = try LayoutUpgrade(entity, path: path)
        let step = "rewrite \(entity.name) records"
        progress?(MigrationProgress(stage: stage, stages: stages, step: step, totalUnitCount: Int64(records)))
        var visited = 0
        var rewritten = 0
        var start: RowID? = nil
        // In batches of bounded size: collect the new records with a cursor, then put them
        // (changing the tree invalidates a cursor), and go on after the last row visited.
        while true {
            var batch: [(row: RowID, record: [UInt8])] = []
            var batchBytes = 0
            var last: RowID?
            var ended = false
            try wrapped("read the records of \(entity.name)") {
                var cursor = try tx.rows(in: collection, from: start)
                while batch.count < 1024 && batchBytes < 8 << 20 {
                    let more = try cursor.next { row, raw in
                        last = row
                        visited += 1
                        if let record = try upgrade.rewrite(raw, row: row) {
                            batch.append((row, record))
                            batchBytes += record.count
                        }
                        if visited % 1024 == 0 {
                            progress?(MigrationProgress(stage: stage, stages: stages, step: step,
                                                        completedUnitCount: Int64(visited), totalUnitCount: Int64(records)))
                        }
                    }
                    if !more { ended = true; break }
                }
            }
            try wrapped("rewrite the records of \(entity.name)") {
                for (row, record) in batch { try tx.replaceRecord(record, row: row, in: collection) }
            }
            rewritten += batch.count
            guard !ended, let last, last < RowID.max else { break }   // RowID.max is no row id
            start = last + 1
        }
        progress?(MigrationProgress(stage: stage, stages: stages, step: step,
                                    completedUnitCount: Int64(visited), totalUnitCount: Int64(records)))
        counts.append(.init(name: entity.name, records: records, rewritten: rewritten))
        stage += 1
    }
    return (RecordUpgradeReport(hasSchema: true, entities: counts), stages)
}

/// Runs an engine operation, its errors in Strata's words.
private func wrapped<R>(_ what: String, _ body: () throws -> R) throws -> R {
    do { return try body() } catch { throw StrataError.store(error, while: what) }
}

/// How to rewrite one entity's records of older layouts into its current layout.
private struct LayoutUpgrade {
    /// Where each current property's bytes come from, in a record of one older layout.
    package enum Source {
        case field(Int)
        case value([UInt8])
        /// The layout lacks the property and the store keeps no default for it.
        case missing(String)
    }

    package let entity: String
    package let path: String
    package let current: UInt16
    /// Per layout version (the current one's unused): the field count, and the sources.
    package let layouts: [(count: Int, sources: [Source])]

    package init(_ stored: StoredEntity, path: String) throws {
        entity = stored.name
        self.path = path
        let all = stored.allLayouts
        let names = stored.properties.map(\.name)
        guard all.count <= Int(UInt16.max) + 1, names.count <= Int(UInt16.max), all.last == names else {
            throw StrataError(.corruptRecord, "The store's schema record at \(path) is inconsistent for \(stored.name): its last record layout is not its properties, or it has more layouts or properties than a record can name.")
        }
        current = UInt16(all.count - 1)
        layouts = all.map { layout in
            (layout.count, names.map { name -> Source in
                let candidates = [name] + (stored.formerNames?[name] ?? []).reversed()
                if let field = candidates.lazy.compactMap({ layout.firstIndex(of: $0) }).first { return .field(field) }
                if let value = stored.defaults?[name] { return .value(Array(value)) }
                return .missing(name)
            })
        }
    }

    /// The record rewritten in the current layout, or nil when it already is in it.
    package func rewrite(_ raw: UnsafeRawBufferPointer, row: RowID) throws -> [UInt8]? {
        do {
            let view = try RecordView(raw)
            let version = view.layoutVersion
            if version == current { return nil }
            guard Int(version) < layouts.count else {
                throw decodingFailure("a record of layout \(version), which the stored schema does not list")
            }
            let (count, sources) = layouts[Int(version)]
            guard view.count == count else {
                throw decodingFailure("a record with \(view.count) fields where layout \(version) has \(count)")
            }
            var fields: [[UInt8]] = []
            fields.reserveCapacity(sources.count)
            for source in sources {
                switch source {
                case .field(let i): fields.append(Array(try view.field(i)))
                case .value(let bytes): fields.append(bytes)
                case .missing(let name):
                    throw StrataError(.schemaMismatch, "\(entity).\(name) is missing from records of layout \(version) of the store at \(path) (row \(row)), and the store keeps no default for it (nor a former name it has in that layout): it was written before Strata kept them. Open the store once, writable, with the app's current models (Strata then records them), and run this again.")
                }
            }
            return RecordLayout.assemble(fields, version: current)
        } catch let failure as ValueDecodingFailure {
            throw StrataError(.corruptRecord, "Row \(row) of \(entity) in the store at \(path) does not decode with the stored schema: \(failure.message). Run `strata verify` on it.")
        }
    }
}
