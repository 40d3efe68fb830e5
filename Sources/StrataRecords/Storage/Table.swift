import Foundation
import StrataEngine

/// How one model (entity) is kept in a store: its collection and indexes, and how to read
/// records written with older layouts of the model. The model's entity itself (`owner`) is the
/// object layer's, which computes index keys with it (Strata's `Storage/Table+Entity.swift`).
///
/// A class, though nothing of it changes: the save and the fetch pass it around per object,
/// and a struct of this many references cost a retain and a release of each per copy.
package final class Table: @unchecked Sendable {
    /// The object layer's entity of the model (opaque here; Strata reads it as `entity`).
    package let owner: AnyObject
    /// Nil only in a read-only store that has never held this model.
    package let collection: CollectionID?
    package let uniqueIndexes: [IndexID]
    package let indexes: [IndexID]
    /// For each property with a one-property index: the index and whether it is unique.
    package let singleIndex: SingleIndexes
    /// How to read records written with older layouts of the model (lightweight migration).
    package let layouts: EntityLayouts
    /// The properties the index keys are made of, each once.
    package let indexedProperties: [Int]
    /// Each index key's properties and its index, side by side, unique indexes first (the
    /// order of `indexKeys`). (Two lists, not a list of pairs: an array of a new element type
    /// costs a fresh process's open its metadata, W8.)
    package let keyGroups: [[Int]]
    package let keyIndexes: [IndexID]

    /// `uniqueGroups` and `indexGroups`: the properties of each unique index and each other
    /// index, in the order of `uniqueIndexes` and `indexes`.
    package init(owner: AnyObject, uniqueGroups: [[Int]], indexGroups: [[Int]], collection: CollectionID?,
                 uniqueIndexes: [IndexID], indexes: [IndexID], singleIndex: SingleIndexes,
                 layouts: EntityLayouts = .identity) {
        self.owner = owner
        self.collection = collection
        self.uniqueIndexes = uniqueIndexes
        self.indexes = indexes
        self.singleIndex = singleIndex
        self.layouts = layouts
        let uniqueCount = min(uniqueGroups.count, uniqueIndexes.count), indexCount = min(indexGroups.count, indexes.count)
        keyGroups = Array(uniqueGroups.prefix(uniqueCount)) + Array(indexGroups.prefix(indexCount))
        keyIndexes = Array(uniqueIndexes.prefix(uniqueCount)) + Array(indexes.prefix(indexCount))
        // Sorted and made unique without a `Set<Int>`: the first hashed collection of a key
        // type costs a fresh process a scan of every conformance loaded (W8, Docs/Benchmarks.md).
        let properties = keyGroups.flatMap { $0 }.sorted()
        var unique: [Int] = []
        for p in properties where unique.last != p { unique.append(p) }
        indexedProperties = unique
    }

    package var hasIndexes: Bool { !uniqueIndexes.isEmpty || !indexes.isEmpty }

    /// True when two records (read as the current layout) hold the same bytes in every field
    /// an index key is made of: their index keys are then the same, as keys are computed from
    /// those bytes alone.
    package func sameIndexedFields(_ a: RecordView, _ b: RecordView) throws -> Bool {
        for p in indexedProperties where !sameBytes(try a.field(p), try b.field(p)) { return false }
        return true
    }

}

extension StorageReader {
    /// Calls `body` with a row's record of `table`, read as the current layout; nil if there
    /// is no such row.
    package func withRecord<R>(_ row: RowID, in table: Table, _ body: (RecordView) throws -> R) throws -> R? {
        guard let collection = table.collection else { return nil }
        return try withRecord(row, in: collection) { try body(try RecordView($0, layouts: table.layouts)) }
    }
}


/// For each property, its one-property index and whether it is unique, if it has one. A list by
/// property, not a dictionary: the first dictionary keyed by `Int` a process makes costs it a
/// scan of every protocol conformance loaded (W8, Docs/Benchmarks.md).
package struct SingleIndexes: Sendable {
    /// Per property: 0 for none; else the index's raw value, with bit 32 set, and bit 33 set
    /// for a unique index. (Packed in a `UInt64`: a list of optional pairs was three more
    /// metadata, the pair's, its optional's and the list's, for a fresh process's first open
    /// to make, W8.)
    private var entries: [UInt64] = []

    package init() {}

    package subscript(property: Int) -> (id: IndexID, unique: Bool)? {
        get {
            guard property >= 0 && property < entries.count else { return nil }
            let entry = entries[property]
            guard entry & Self.present != 0 else { return nil }
            return (IndexID(rawValue: UInt32(truncatingIfNeeded: entry)), entry & Self.unique != 0)
        }
        set {
            guard property >= 0 else { return }
            if property >= entries.count { entries += Array(repeating: 0, count: property + 1 - entries.count) }
            entries[property] = newValue.map { UInt64($0.id.rawValue) | Self.present | ($0.unique ? Self.unique : 0) } ?? 0
        }
    }

    private static var present: UInt64 { 1 << 32 }
    private static var unique: UInt64 { 1 << 33 }
}
