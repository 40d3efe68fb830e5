/// A row's number within its collection. Row ids are chosen by the caller
/// (`WriteTransaction.allocateRowID(in:)` hands out fresh ones) and are never reused by the engine.
public typealias RowID = UInt64

/// A named collection of records, by number.
public struct CollectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "collection#\(rawValue)" }
}

/// A secondary index, by number.
public struct IndexID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "index#\(rawValue)" }
}

/// A blob (a large value in a file of its own beside the store), by number.
public struct BlobID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "blob#\(rawValue)" }
}

/// One secondary-index entry for a record: which index, and the encoded key (see `KeyEncoding`).
public struct IndexKey: Hashable, Sendable {
    public var index: IndexID
    public var key: [UInt8]
    public init(_ index: IndexID, _ key: [UInt8]) {
        self.index = index
        self.key = key
    }
}

/// What a collection's index is.
public struct IndexDescription: Hashable, Sendable {
    public let id: IndexID
    public let collection: CollectionID
    public let name: String
    /// A unique index holds each key for at most one row.
    public let isUnique: Bool
}

/// How hard a commit works to be durable.
public enum Durability: Sendable, Hashable {
    /// A commit is on disk when it returns: one `fdatasync` per commit (more for large ones).
    case full
    /// Commits are written but not synced; a power cut can lose the last commits (never
    /// corrupt the store: opening still finds the last complete commit). `Store.sync()` makes
    /// everything so far durable.
    case deferred
}

/// How to open a store.
public struct StoreOptions: Sendable {
    /// How hard a commit works to be durable. Default: `.full`.
    public var durability: Durability
    /// Bytes of changed pages a write transaction keeps in memory; past it they are written
    /// out before the commit record, so a large save does not grow memory. Reads keep no
    /// cache of their own: they read the mapped file, and the kernel's page cache is the cache.
    /// Default: 16 MiB.
    public var cacheSize: Int
    /// Open for reading only: no writes, and a damaged tail is left as it is. A read-only
    /// store may be opened while another process (or `Store`) writes: it reads the commits
    /// that writer publishes.
    public var readOnly: Bool
    /// Create the store when the file does not exist. Default: true.
    public var createIfMissing: Bool

    public init(durability: Durability = .full, cacheSize: Int = 16 << 20, readOnly: Bool = false, createIfMissing: Bool = true) {
        self.durability = durability
        self.cacheSize = cacheSize
        self.readOnly = readOnly
        self.createIfMissing = createIfMissing
    }
}
