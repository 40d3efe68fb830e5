// After a kill: reopen each torture store as the next process would, and compare it with the
// model after the saves it says it holds. That count must be the last acknowledged save or the
// one in flight; every record, index entry and blob must be exactly the model's (so every
// acknowledged save is there and no half of any save is), and `verify()` must be clean.

import Foundation
import Strata
import StrataEngine

/// What one check of a torture store found.
public struct TortureCheckResult: Sendable {
    /// How many saves the reopened store holds.
    public var saves: Int
    public var problems: [String]
}

public enum TortureCheck {
    /// Checks the engine-level store at `path`, which must hold `acknowledged` or
    /// `acknowledged + 1` saves; advances `model` to what it holds.
    public static func engine(path: String, seed: UInt64, model: inout EngineModel, acknowledged: Int) -> TortureCheckResult {
        var problems: [String] = []
        func problem(_ text: String) { if problems.count < 20 { problems.append("engine store: \(text)") } }
        let store: Store
        do { store = try Store(path: path, options: StoreOptions(durability: tortureDurability(seed: seed))) } catch {
            return TortureCheckResult(saves: Int(model.saves), problems: ["engine store: does not open: \(error)"])
        }
        defer { store.close() }
        do {
            let saves = try store.read { tx in try tx.metadata(EngineSave.savesMetadata).map { $0.count == 8 ? Int($0.loadLE64(0)) : -1 } ?? 0 }
            guard saves == acknowledged || saves == acknowledged + 1 else {
                problem("holds \(saves) saves, but \(acknowledged) were acknowledged (and at most one more was in flight)")
                return TortureCheckResult(saves: Int(model.saves), problems: problems)
            }
            guard UInt64(saves) >= model.saves else {
                problem("holds \(saves) saves, fewer than the \(model.saves) an earlier check found")
                return TortureCheckResult(saves: Int(model.saves), problems: problems)
            }
            model.advance(to: UInt64(saves))
            try store.read { tx in
                guard let c = tx.collection(named: EngineSave.collection) else {
                    if !model.rows.isEmpty { problem("has no collection but the model has \(model.rows.count) rows") }
                    return
                }
                var seen = Set<UInt64>()
                var referencedBlobs = Set<UInt64>()
                var cursor = try tx.rows(in: c)
                while let (row, record) = try cursor.next() {
                    seen.insert(row)
                    guard let expected = model.rows[row] else { problem("row \(row) exists but the model deleted it (or never wrote it)"); continue }
                    guard record.count >= 24 else { problem("row \(row) has a \(record.count)-byte record"); continue }
                    let blob = record.loadLE64(16)
                    if record != EngineSave.record(expected.put, n: expected.n, seed: seed, blob: blob) {
                        problem("row \(row) holds save \(record.loadLE64(0))'s record, the model save \(expected.n)'s")
                    }
                    if let length = expected.put.blobLength {
                        referencedBlobs.insert(blob)
                        let bytes = try tx.blob(BlobID(rawValue: blob))
                        if bytes != EngineSave.blobBytes(length, seed: seed, n: expected.n, key: row) { problem("row \(row)'s blob \(blob) is not the one its save wrote") }
                    } else if blob != 0 {
                        problem("row \(row) names blob \(blob) but its save wrote none")
                    }
                }
                for row in model.rows.keys where !seen.contains(row) { problem("row \(row) is missing (written by save \(model.rows[row]!.n))") }
                if try tx.count(in: c) != model.rows.count { problem("count says \(try tx.count(in: c)), the model has \(model.rows.count) rows") }
                // Indexes agree with the records, both ways.
                if let tag = tx.index(named: "tag", in: c), let group = tx.index(named: "group", in: c) {
                    var tags: [[UInt8]: RowID] = [:], groups = Set<[UInt8]>()
                    var ic = try tx.entries(in: tag.id)
                    while let (key, row) = try ic.next() { tags[key] = row }
                    ic = try tx.entries(in: group.id)
                    while let (key, row) = try ic.next() { groups.insert(key + KeyEncoding.encode(row)) }
                    var expectedTags: [[UInt8]: RowID] = [:], expectedGroups = Set<[UInt8]>()
                    for (row, e) in model.rows {
                        expectedTags[EngineSave.tag(key: row, n: e.n)] = row
                        expectedGroups.insert(EngineSave.group(key: row, n: e.n) + KeyEncoding.encode(row))
                    }
                    if tags != expectedTags { problem("the unique index has \(tags.count) entries, \(tags.filter { expectedTags[$0.key] != $0.value }.count) of them wrong; the model has \(expectedTags.count)") }
                    if groups != expectedGroups { problem("the group index has \(groups.count) entries, \(groups.subtracting(expectedGroups).count) of them wrong; the model has \(expectedGroups.count)") }
                } else if !model.rows.isEmpty {
                    problem("an index is missing")
                }
                let blobs = Set(try tx.blobIDs().map(\.rawValue))
                if blobs != referencedBlobs { problem("holds \(blobs.count) blobs, the records name \(referencedBlobs.count)") }
            }
            let report = try store.verify()
            if !report.isClean { problem("verify: \(report)") }
            return TortureCheckResult(saves: saves, problems: problems)
        } catch {
            problem("reading failed: \(error)")
            return TortureCheckResult(saves: Int(model.saves), problems: problems)
        }
    }

    /// Checks the object-level store at `path`, which must hold `acknowledged` or
    /// `acknowledged + 1` saves; advances `model` to what it holds.
    ///
    /// With `fileSystem`, the store is opened through it (a `SimulatedFileSystem`) rather than the disk.
    package static func objects(path: String, seed: UInt64, model: inout ObjectModel, acknowledged: Int,
                               fileSystem: (any FileSystem)? = nil) -> TortureCheckResult {
        var problems: [String] = []
        func problem(_ text: String) { if problems.count < 20 { problems.append("object store: \(text)") } }
        do {
            var configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
            configuration.durability = tortureDurability(seed: seed)
            let container = try ModelContainer(for: Schema(tortureModels), configurations: [configuration], fileSystem: fileSystem)
            let context = ModelContext(container)
            let counters = try context.fetch(FetchDescriptor<TortureCounter>())
            guard counters.count <= 1 else {
                problem("holds \(counters.count) counters for one unique name")
                return TortureCheckResult(saves: model.saves, problems: problems)
            }
            let saves = counters.first?.value ?? 0
            guard saves == acknowledged || saves == acknowledged + 1 else {
                problem("holds \(saves) saves, but \(acknowledged) were acknowledged (and at most one more was in flight)")
                return TortureCheckResult(saves: model.saves, problems: problems)
            }
            guard saves >= model.saves else {
                problem("holds \(saves) saves, fewer than the \(model.saves) an earlier check found")
                return TortureCheckResult(saves: model.saves, problems: problems)
            }
            model.advance(to: saves)
            // History and data agree: one transaction per save held (tokens up to `saves`, in
            // the same commits, none missing), the newest recording that save's counter. The
            // stores keep the default retention: every transaction up to 10,000 saves, then at
            // least the last 10,000 (pruned a sixteenth of it at a time), so a seed that saves
            // more than that starts its history after token 1.
            let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            let tokens = history.map(\.token.tokenValue)
            let kept = min(saves, HistoryRetention.default.limit ?? saves)
            // Contiguous, ending at `saves` (so none is missing and none is extra).
            let contiguous = tokens.isEmpty ? saves == 0
                : tokens.first == Int64(saves - tokens.count + 1) && tokens.last == Int64(saves)
                  && zip(tokens, tokens.dropFirst()).allSatisfy { $1 == $0 + 1 }
            if !contiguous || history.count < kept {
                problem("holds \(saves) saves but history transactions \(tokens.prefix(2))…\(tokens.suffix(5)) (\(history.count) in all; at least the last \(kept) must be there)")
            } else if let last = history.last, let counter = counters.first,
                      !last.changes.contains(where: { $0.changedPersistentIdentifier == counter.persistentModelID }) {
                problem("the newest history transaction (\(last.token)) does not record save \(saves)'s counter")
            }
            let items = try context.fetch(FetchDescriptor<TortureItem>())
            var byKey: [Int: TortureItem] = [:]
            for item in items {
                if byKey[item.key] != nil { problem("two objects have the unique key \(item.key)") }
                byKey[item.key] = item
            }
            for (key, expected) in model.items {
                guard let item = byKey[key] else { problem("object \(key) (save \(expected.save)) is missing"); continue }
                if item.save != expected.save || item.group != expected.group || item.payload != expected.payload {
                    problem("object \(key) holds save \(item.save)'s values, the model save \(expected.save)'s")
                }
                if item.data != ObjectSave.data(seed: seed, n: expected.dataSave, key: key, length: expected.dataLength) {
                    problem("object \(key)'s data is not what save \(expected.dataSave) wrote")
                }
                if item.photo != ObjectSave.photo(seed: seed, n: expected.dataSave, key: key, length: expected.photoLength) {
                    problem("object \(key)'s photo (external storage) is not what save \(expected.dataSave) wrote")
                }
            }
            for key in byKey.keys where model.items[key] == nil { problem("object \(key) exists but the model deleted it (or never wrote it)") }
            // The indexes answer as the records do.
            for g in 0..<8 {
                let count = try context.fetchCount(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.group == g }))
                let expected = model.items.values.filter { $0.group == g }.count
                if count != expected { problem("the group index counts \(count) objects in group \(g), the model \(expected)") }
            }
            for key in stride(from: saves % 7, to: ObjectSave.keySpace, by: 23) {
                let found = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key == key }))
                if found.count != (model.items[key] == nil ? 0 : 1) || found.first.map({ $0.save != model.items[key]?.save }) == true {
                    problem("looking up key \(key) by the unique index finds \(found.map(\.save)), the model \(model.items[key]?.save.description ?? "nothing")")
                }
            }
            // Folders hold exactly their parts; a deleted folder took its parts with it.
            let folders = try context.fetch(FetchDescriptor<TortureFolder>())
            if folders.count != model.folders.count { problem("holds \(folders.count) folders, the model \(model.folders.count)") }
            for folder in folders {
                let names = folder.parts.map(\.name).sorted()
                let expected = (0..<(model.folders[folder.number] ?? -1)).map { "f\(folder.number)-p\($0)" }.sorted()
                if model.folders[folder.number] == nil { problem("folder \(folder.number) exists but the model deleted it (or never made it)") }
                else if names != expected { problem("folder \(folder.number) holds parts \(names), the model \(expected)") }
            }
            let parts = try context.fetch(FetchDescriptor<TorturePart>())
            if parts.count != model.folders.values.reduce(0, +) { problem("holds \(parts.count) parts, the model \(model.folders.values.reduce(0, +))") }
            if parts.contains(where: { $0.folder == nil }) { problem("a part outlived its folder (the cascade left it)") }
            for store in container.stores {
                let report = try store.verify()
                if !report.isClean { problem("verify: \(report)") }
                // Every blob is some object's photo: none leaks when objects are replaced or deleted.
                let blobs = try store.read { try $0.blobIDs().count }
                let photos = model.items.values.filter { $0.photoLength > 16 }.count   // up to 16 bytes stay in the record
                if blobs != photos { problem("holds \(blobs) blobs for \(photos) photos in external storage") }
            }
            return TortureCheckResult(saves: saves, problems: problems)
        } catch {
            problem("does not open or read: \(error)")
            return TortureCheckResult(saves: model.saves, problems: problems)
        }
    }
}
