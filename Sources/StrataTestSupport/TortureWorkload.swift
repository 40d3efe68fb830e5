// The work of the process-kill torture test (`StrataTestHelper torture`, Docs/Durability.md).
//
// Save number n of a level is a pure function of (seed, level, n): the helper process that
// saves and the driver that checks after each kill both derive it, so the driver knows exactly
// what the store must hold after any number of saves without being told. Every save also
// writes its own number (engine: metadata "torture.saves"; objects: the `TortureCounter`
// object), in the same transaction, so the reopened store says which save it ends with.
//
// Two stores in one directory, saved alternately:
// - `engine.strata` (StrataEngine): rows with a unique and a non-unique index, single puts,
//   large batches (some past the single-sync body limit), updates, deletes, blobs, compaction.
// - `objects.store` (Strata): `TortureItem` with a unique key (so inserts upsert), an index,
//   changes of fetched objects, deletes, batch deletes (`delete(model:where:)`), values in
//   external storage (blob files), folders whose parts go with them (a cascade), compaction.

import Foundation
import Strata
import StrataEngine

/// Which store of the torture directory a save goes to.
public enum TortureLevel: String, Sendable, CaseIterable {
    case engine = "E"
    case objects = "O"

    /// The store's file in the torture directory.
    public func path(in directory: String) -> String {
        directory + (self == .engine ? "/engine.strata" : "/objects.store")
    }
}

/// The durability a torture run uses: from the seed, so both kinds are tried over many seeds.
public func tortureDurability(seed: UInt64) -> Durability { seed % 2 == 0 ? .full : .deferred }

/// A generator for save `n` of `level` in the run with `seed`.
func tortureRandom(seed: UInt64, level: TortureLevel, n: UInt64, salt: UInt64 = 0) -> SeededGenerator {
    var mix = SeededGenerator(seed: seed ^ (level == .engine ? 0x45 : 0x4F) &* 0x9E37_79B9_7F4A_7C15 ^ n &* 0xD6E8_FEB8_6659_FD93 ^ salt)
    return SeededGenerator(seed: mix.next())
}

/// `count` pseudo-random bytes, the same for the same `seed`.
func tortureBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var random = SeededGenerator(seed: seed)
    var bytes = [UInt8](repeating: 0, count: count)
    var i = 0
    while i < count {
        var word = random.next()
        for _ in 0..<8 where i < count {
            bytes[i] = UInt8(truncatingIfNeeded: word)
            word >>= 8
            i += 1
        }
    }
    return bytes
}

// MARK: Engine level

/// One save of the engine-level store.
public struct EngineSave: Sendable {
    public struct Put: Sendable {
        public var key: UInt64
        public var length: Int
        public var blobLength: Int?
    }
    public var n: UInt64
    public var kind: String
    /// Applied first.
    public var deletes: [UInt64] = []
    /// Applied after the deletes; keys are distinct.
    public var puts: [Put] = []
    /// Compact the store after this save.
    public var compactAfter = false

    static let keySpace: UInt64 = 1500
    static let collection = "items"
    static let savesMetadata = "torture.saves"

    public init(seed: UInt64, n: UInt64) {
        self.n = n
        var random = tortureRandom(seed: seed, level: .engine, n: n)
        func length() -> Int {
            random.next() % 20 == 0 ? Int.random(in: 2000..<20000, using: &random) : Int.random(in: 16..<300, using: &random)
        }
        func keys(_ count: Int) -> [UInt64] {
            var seen = Set<UInt64>()
            var list: [UInt64] = []
            while list.count < count {
                let k = UInt64.random(in: 0..<Self.keySpace, using: &random)
                if seen.insert(k).inserted { list.append(k) }
            }
            return list
        }
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<30:
            kind = "single"
            puts = keys(1).map { Put(key: $0, length: length()) }
        case 30..<42:
            // Some batches pass 256 KiB, so their body is synced before their commit record.
            kind = "batch"
            puts = keys(Int.random(in: 100..<900, using: &random)).map { Put(key: $0, length: Int.random(in: 100..<500, using: &random)) }
        case 42..<62:
            kind = "update"
            puts = keys(Int.random(in: 1..<50, using: &random)).map { Put(key: $0, length: length()) }
        case 62..<77:
            kind = "delete"
            deletes = keys(Int.random(in: 1..<80, using: &random))
        case 77..<90:
            kind = "blob"
            puts = keys(Int.random(in: 1..<4, using: &random)).map {
                Put(key: $0, length: length(), blobLength: Int.random(in: 1..<(random.next() % 4 == 0 ? 200_000 : 4000), using: &random))
            }
        default:
            kind = "mixed"
            let all = keys(Int.random(in: 2..<120, using: &random))
            let cut = all.count / 3
            deletes = Array(all[..<cut])
            puts = all[cut...].map { Put(key: $0, length: length(), blobLength: random.next() % 10 == 0 ? 100 : nil) }
        }
        compactAfter = n % 37 == 0
    }

    /// The record of `put`: `[u64 save][u64 key][u64 blob id or 0][filler]`.
    func record(_ put: Put, seed: UInt64, blob: UInt64) -> [UInt8] { Self.record(put, n: n, seed: seed, blob: blob) }

    static func record(_ put: Put, n: UInt64, seed: UInt64, blob: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24 + put.length)
        for v in [n, put.key, blob] { withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) } }
        bytes += tortureBytes(put.length, seed: seed ^ n &* 31 ^ put.key &* 1_000_003)
        return bytes
    }

    static func blobBytes(_ length: Int, seed: UInt64, n: UInt64, key: UInt64) -> [UInt8] {
        tortureBytes(length, seed: ~seed ^ n &* 977 ^ key &* 7919)
    }

    /// The unique index key of a row: changes with the save, so updates move unique entries.
    static func tag(key: UInt64, n: UInt64) -> [UInt8] { KeyEncoding.encode("k\(key)", Int64(n % 3)) }
    /// The non-unique index key of a row.
    static func group(key: UInt64, n: UInt64) -> [UInt8] { KeyEncoding.encode(Int64((key &+ n) % 8)) }

    /// Performs the save on `store` (one write transaction).
    public func apply(to store: Store, seed: UInt64) throws {
        try store.write { tx in
            let c = try tx.createCollection(named: Self.collection)
            let tag = try tx.createIndex(named: "tag", on: c, unique: true)
            let group = try tx.createIndex(named: "group", on: c, unique: false)
            func keys(key: UInt64, n: UInt64) -> [IndexKey] {
                [IndexKey(tag, Self.tag(key: key, n: n)), IndexKey(group, Self.group(key: key, n: n))]
            }
            /// Drops the blob of the stored row `key`; returns the keys the row was saved with.
            func dropBlob(of key: UInt64) throws -> [IndexKey] {
                guard let old = try tx.record(key, in: c), old.count >= 24 else { return [] }
                let blob = old.loadLE64(16)
                if blob != 0 { try tx.deleteBlob(BlobID(rawValue: blob)) }
                return keys(key: key, n: old.loadLE64(0))
            }
            for key in deletes {
                try tx.delete(key, in: c, indexKeys: try dropBlob(of: key))
            }
            for put in puts {
                let previous = try dropBlob(of: put.key)
                var blob: UInt64 = 0
                if let length = put.blobLength {
                    blob = try tx.putBlob(Self.blobBytes(length, seed: seed, n: n, key: put.key)).rawValue
                }
                try tx.put(record(put, seed: seed, blob: blob), row: put.key, in: c, indexKeys: keys(key: put.key, n: n), previousKeys: previous)
            }
            var count: [UInt8] = []
            withUnsafeBytes(of: n.littleEndian) { count.append(contentsOf: $0) }
            try tx.setMetadata(Self.savesMetadata, count)
        }
    }
}

/// What the engine-level store must hold after some number of saves: per row, the save that
/// wrote it last and that put's shape.
public struct EngineModel: Sendable {
    public private(set) var saves: UInt64 = 0
    var rows: [UInt64: (n: UInt64, put: EngineSave.Put)] = [:]
    let seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    /// Applies saves until `saves == n`.
    public mutating func advance(to n: UInt64) {
        while saves < n {
            saves += 1
            let save = EngineSave(seed: seed, n: saves)
            for key in save.deletes { rows[key] = nil }
            for put in save.puts { rows[put.key] = (saves, put) }
        }
    }
}

extension Array where Element == UInt8 {
    func loadLE64(_ offset: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in (0..<8).reversed() { v = v << 8 | UInt64(self[offset + i]) }
        return v
    }
}

// MARK: Object level

/// The model of the object-level torture store: a unique key (inserts upsert), an index.
public final class TortureItem: PersistentModel {
    @Attribute(.unique) public var key: Int = 0
    /// The save that wrote the object last.
    @Attribute public var save: Int = 0
    @Attribute public var group: Int = 0
    @Attribute public var payload: String = ""
    @Attribute public var data: Data = Data()
    /// Empty (kept inline) or a blob file of its own.
    @Attribute(.externalStorage) public var photo: Data = Data()
    public init() {}
    public static var indexes: [[PartialKeyPath<TortureItem>]] { [[\.group]] }
}

/// A folder of parts: deleting it deletes its parts (a cascading relationship).
public final class TortureFolder: PersistentModel {
    @Attribute public var number: Int = 0
    @Relationship(deleteRule: .cascade, inverse: \TorturePart.folder) public var parts: [TorturePart] = []
    public init() {}
}

public final class TorturePart: PersistentModel {
    @Attribute public var name: String = ""
    @Relationship public var folder: TortureFolder? = nil
    public init() {}
}

/// The models of the object-level torture store.
public var tortureModels: [any PersistentModel.Type] { [TortureItem.self, TortureCounter.self, TortureFolder.self, TorturePart.self] }

/// One object per name, upserted by every save: which save the store ends with.
public final class TortureCounter: PersistentModel {
    @Attribute(.unique) public var name: String = ""
    @Attribute public var value: Int = 0
    public init() {}
}

/// One save of the object-level store.
public struct ObjectSave: Sendable {
    public var n: Int
    public var kind: String
    /// New objects (upserts when the key is stored); keys distinct from every other list.
    /// A photo length above 0 puts a blob file in the save.
    public var inserts: [(key: Int, length: Int, photo: Int)] = []
    /// Stored objects to fetch and change (skipped when absent).
    public var changes: [Int] = []
    /// Stored objects to fetch and delete (skipped when absent).
    public var deletes: [Int] = []
    /// A range of keys deleted with `delete(model:where:)`.
    public var batchDelete: Range<Int>?
    /// New folders (numbers never used before) with their number of parts.
    public var folderCreates: [(number: Int, parts: Int)] = []
    /// Folders to fetch and delete, with their parts (skipped when absent).
    public var folderDeletes: [Int] = []
    public var compactAfter = false

    static let keySpace = 600
    static let counterName = "saves"

    public init(seed: UInt64, n: Int) {
        self.n = n
        var random = tortureRandom(seed: seed, level: .objects, n: UInt64(n))
        var used = Set<Int>()
        func keys(_ count: Int) -> [Int] {
            var list: [Int] = []
            while list.count < count {
                let k = Int.random(in: 0..<Self.keySpace, using: &random)
                if used.insert(k).inserted { list.append(k) }
            }
            return list
        }
        func length() -> Int { random.next() % 25 == 0 ? Int.random(in: 5000..<80000, using: &random) : Int.random(in: 0..<200, using: &random) }
        func photo() -> Int { random.next() % 5 == 0 ? Int.random(in: 1..<3000, using: &random) : 0 }
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<30:
            kind = "single"
            inserts = keys(1).map { ($0, length(), photo()) }
        case 30..<42:
            kind = "batch"
            inserts = keys(Int.random(in: 50..<400, using: &random)).map { ($0, Int.random(in: 0..<300, using: &random), 0) }
        case 42..<62:
            kind = "change"
            changes = keys(Int.random(in: 1..<30, using: &random))
        case 62..<77:
            kind = "delete"
            deletes = keys(Int.random(in: 1..<40, using: &random))
            folderDeletes = [Int.random(in: 0..<(4 * n), using: &random)]
        case 77..<85:
            kind = "batchDelete"
            let start = Int.random(in: 0..<Self.keySpace, using: &random)
            batchDelete = start..<Swift.min(Self.keySpace, start + Int.random(in: 1..<20, using: &random))
            for k in batchDelete! { used.insert(k) }
        default:
            kind = "mixed"
            inserts = keys(Int.random(in: 1..<40, using: &random)).map { ($0, length(), photo()) }
            changes = keys(Int.random(in: 1..<20, using: &random))
            deletes = keys(Int.random(in: 1..<20, using: &random))
            folderCreates = (0..<Int.random(in: 1...2, using: &random)).map { (4 * n + $0, Int.random(in: 0...4, using: &random)) }
            folderDeletes = [Int.random(in: 0..<(4 * n), using: &random)]
        }
        compactAfter = n % 41 == 0
    }

    static func payload(seed: UInt64, n: Int, key: Int) -> String { "s\(n)-k\(key)-\(seed % 1000)" }
    static func group(n: Int, key: Int) -> Int { (key + n) % 8 }
    static func data(seed: UInt64, n: Int, key: Int, length: Int) -> Data {
        Data(tortureBytes(length, seed: seed ^ UInt64(n) &* 131 ^ UInt64(key) &* 65_537))
    }
    static func photo(seed: UInt64, n: Int, key: Int, length: Int) -> Data {
        Data(tortureBytes(length, seed: ~seed ^ UInt64(n) &* 257 ^ UInt64(key) &* 8191))
    }

    /// Performs the save through a fresh `ModelContext` (one `save()`).
    public func apply(to container: ModelContainer, seed: UInt64) throws {
        let context = ModelContext(container)
        for k in changes {
            guard let item = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key == k })).first else { continue }
            item.save = n
            item.group = Self.group(n: n, key: k)
            item.payload = Self.payload(seed: seed, n: n, key: k)
        }
        for k in deletes {
            guard let item = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.key == k })).first else { continue }
            context.delete(item)
        }
        if let range = batchDelete {
            let low = range.lowerBound, high = range.upperBound
            try context.delete(model: TortureItem.self, where: #Predicate { $0.key >= low && $0.key < high })
        }
        for (k, length, photo) in inserts {
            let item = TortureItem()
            item.key = k
            item.save = n
            item.group = Self.group(n: n, key: k)
            item.payload = Self.payload(seed: seed, n: n, key: k)
            item.data = Self.data(seed: seed, n: n, key: k, length: length)
            item.photo = Self.photo(seed: seed, n: n, key: k, length: photo)
            context.insert(item)
        }
        for number in folderDeletes {
            guard let folder = try context.fetch(FetchDescriptor<TortureFolder>(predicate: #Predicate { $0.number == number })).first else { continue }
            context.delete(folder)
        }
        for (number, count) in folderCreates {
            let folder = TortureFolder()
            folder.number = number
            context.insert(folder)
            folder.parts = (0..<count).map { i in
                let part = TorturePart()
                part.name = "f\(number)-p\(i)"
                return part
            }
        }
        let counter = TortureCounter()
        counter.name = Self.counterName
        counter.value = n
        context.insert(counter)
        try context.save()
    }
}

/// What the object-level store must hold after some number of saves.
public struct ObjectModel: Sendable {
    public struct Item: Equatable, Sendable {
        public var save: Int
        public var group: Int
        public var payload: String
        /// The save and lengths that made `data` and `photo`.
        public var dataSave: Int
        public var dataLength: Int
        public var photoLength: Int
    }
    public private(set) var saves = 0
    public private(set) var items: [Int: Item] = [:]
    /// Folder number: how many parts it has.
    public private(set) var folders: [Int: Int] = [:]
    let seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    public mutating func advance(to n: Int) {
        while saves < n {
            saves += 1
            let save = ObjectSave(seed: seed, n: saves)
            let s = saves
            for k in save.changes where items[k] != nil {
                items[k]!.save = s
                items[k]!.group = ObjectSave.group(n: s, key: k)
                items[k]!.payload = ObjectSave.payload(seed: seed, n: s, key: k)
            }
            for k in save.deletes { items[k] = nil }
            if let range = save.batchDelete { for k in range { items[k] = nil } }
            for number in save.folderDeletes { folders[number] = nil }
            for (number, parts) in save.folderCreates { folders[number] = parts }
            for (k, length, photo) in save.inserts {
                items[k] = Item(save: s, group: ObjectSave.group(n: s, key: k), payload: ObjectSave.payload(seed: seed, n: s, key: k),
                                dataSave: s, dataLength: length, photoLength: photo)
            }
        }
    }
}
