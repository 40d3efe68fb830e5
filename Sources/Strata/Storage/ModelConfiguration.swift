import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// Where and how a container keeps its models. Same as SwiftData's `ModelConfiguration`; its
/// CloudKit and app-group options are accepted and have no meaning on Linux. Strata adds
/// durability and cache size.
///
/// ```swift
/// let config = ModelConfiguration(url: URL(filePath: "/var/lib/app/trips.store"))
/// let memory = ModelConfiguration(isStoredInMemoryOnly: true)
/// ```
public struct ModelConfiguration: Hashable, Sendable {
    /// The configuration's name; also the default store's file name.
    public let name: String
    /// The models kept in this configuration's store (nil: all of the container's schema).
    public var schema: Schema?
    /// The store's data file. Side files (the blobs folder) sit next to it. Its folder must
    /// exist: a missing one is an error naming it, so a mistyped path never makes a new empty
    /// store elsewhere (the default location's folder is made on first use).
    public let url: URL
    /// Keep the store in memory only: nothing survives the container.
    public let isStoredInMemoryOnly: Bool
    /// False opens the store read-only: saves throw `StrataError` `.readOnly`.
    public let allowsSave: Bool
    /// Strata extra: how hard a save works to be durable. Default `.full` (one fdatasync per save).
    public var durability: Durability = .full
    /// Strata extra: bytes of pages and records cached in memory per store.
    public var cacheSize: Int = 32 << 20
    /// Strata extra: called as a migration plan's stages run (see `MigrationProgress`).
    public var migrationProgress: (@Sendable (MigrationProgress) -> Void)? = nil
    /// Strata extra: how much history the store keeps (`Docs/History.md`). Default: the last
    /// 10,000 transactions; `.off` records none.
    public var historyRetention: HistoryRetention = .default

    /// An app group's shared container, where SwiftData may keep a store on Apple platforms.
    /// Same as SwiftData's `ModelConfiguration.GroupContainer`; accepted and ignored on Linux,
    /// which has no app groups: a store without a `url` is in `defaultDirectory`.
    public struct GroupContainer: Hashable, Sendable {
        let identifier: String?
        /// The app's default group, if any. Same as SwiftData.
        public static let automatic = GroupContainer(identifier: nil)
        /// No group container. Same as SwiftData.
        public static let none = GroupContainer(identifier: nil)
        /// The group with this identifier. Same as SwiftData.
        public static func identifier(_ groupName: String) -> GroupContainer { GroupContainer(identifier: groupName) }
    }

    /// The CloudKit database SwiftData may sync a store with on Apple platforms. Same as
    /// SwiftData's `ModelConfiguration.CloudKitDatabase`; accepted and ignored on Linux, which
    /// has no CloudKit: Strata never syncs.
    public struct CloudKitDatabase: Hashable, Sendable {
        let container: String?
        /// The app's default container, if it has CloudKit. Same as SwiftData.
        public static let automatic = CloudKitDatabase(container: nil)
        /// No syncing. Same as SwiftData.
        public static let none = CloudKitDatabase(container: nil)
        /// The private database of this CloudKit container. Same as SwiftData.
        public static func `private`(_ container: String) -> CloudKitDatabase { CloudKitDatabase(container: container) }
    }

    /// A configuration at the default location (see `defaultDirectory`), or in memory. Same
    /// as SwiftData's `init(_:schema:isStoredInMemoryOnly:allowsSave:groupContainer:cloudKitDatabase:)`;
    /// `groupContainer` and `cloudKitDatabase` have no meaning on Linux and are ignored.
    public init(_ name: String? = nil, schema: Schema? = nil, isStoredInMemoryOnly: Bool = false, allowsSave: Bool = true,
                groupContainer: GroupContainer = .automatic, cloudKitDatabase: CloudKitDatabase = .automatic) {
        let name = name ?? "default"
        self.name = name
        self.schema = schema
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.url = isStoredInMemoryOnly
            ? URL(fileURLWithPath: "/dev/null/\(name)-\(UUID().uuidString).store")
            : ModelConfiguration.defaultDirectory.appendingPathComponent("\(name).store")
    }

    /// A configuration whose store is the file at `url`. Same as SwiftData's
    /// `init(_:schema:url:allowsSave:cloudKitDatabase:)`; `cloudKitDatabase` is ignored on Linux.
    public init(_ name: String? = nil, schema: Schema? = nil, url: URL, allowsSave: Bool = true,
                cloudKitDatabase: CloudKitDatabase = .automatic) {
        self.name = name ?? ModelConfiguration.storeName(of: url)
        self.schema = schema
        self.url = url
        self.isStoredInMemoryOnly = false
        self.allowsSave = allowsSave
    }

    /// The name a configuration without one takes from its file: `url.deletingPathExtension()
    /// .lastPathComponent`, worked out from the path, since those URL operations' first use cost
    /// a fresh process about 0.45M instructions (W8, Docs/Benchmarks.md). ConfigurationNameTests
    /// holds it to Foundation's answer.
    static func storeName(of url: URL) -> String {
        // Over the path's UTF-8 bytes, as Foundation reads it: a slash or a dot is one byte
        // wherever it stands (a dot before a combining mark too, which `Substring`'s steps by
        // character read as another character); and bytes cost a fresh process's open about
        // 10k instructions less than those steps (W8).
        var path = FilePaths.path(of: url)
        return path.withUTF8 { b -> String in
            let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
            var end = b.count
            while end > 1 && b[end - 1] == slash { end -= 1 }
            var start = end
            while start > 0 && b[start - 1] != slash { start -= 1 }
            if start == end { start = 0 }
            // An extension follows the last dot, when something other than dots comes before it.
            if let last = b[start..<end].lastIndex(of: dot), last + 1 < end, b[start..<last].contains(where: { $0 != dot }) {
                end = last
            }
            return String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self)
        }
    }

    /// A configuration for these models at the default location, or in memory. Same as
    /// SwiftData's `init(for:isStoredInMemoryOnly:)`.
    /// (At least one type: `ModelConfiguration()` stays the default configuration.)
    public init(for firstType: any PersistentModel.Type, _ otherTypes: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(schema: Schema([firstType] + otherTypes), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// Where stores without a `url` live on Linux: `$XDG_DATA_HOME/strata`, else
    /// `~/.local/share/strata` (SwiftData uses the app's Application Support folder).
    public static var defaultDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("strata")
        }
        let home = env["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/strata")
    }

    /// `defaultDirectory`'s path, worked out without `URL.path` (see `FilePaths`).
    /// (The environment read by `getenv`: `ProcessInfo.environment` copies all of it into a
    /// dictionary, about 0.35M instructions the first time.)
    static var defaultDirectoryPath: String {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        if let xdg = variable("XDG_DATA_HOME"), !xdg.isEmpty { return xdg + "/strata" }
        // An empty HOME is the working directory, as `URL(fileURLWithPath: "")` makes it.
        let home = variable("HOME").map { $0.isEmpty ? FileManager.default.currentDirectoryPath : $0 }
            ?? FilePaths.path(of: FileManager.default.homeDirectoryForCurrentUser)
        return home + "/.local/share/strata"
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.name == b.name && a.url == b.url && a.isStoredInMemoryOnly == b.isStoredInMemoryOnly && a.allowsSave == b.allowsSave && a.schema == b.schema
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
    }
}

/// How much history a store keeps. Strata extra, set on the configuration:
/// `configuration.historyRetention = .transactions(100_000)` or `.off` (no history is
/// recorded; `fetchHistory` returns what earlier saves recorded). Each save that records a
/// transaction past the limit prunes the oldest ones in the same commit, a batch at a time;
/// fetching after a pruned token throws `historyTokenExpired`.
public struct HistoryRetention: Hashable, Sendable, CustomStringConvertible {
    /// The most transactions kept (nil: no limit); 0 records none.
    public let limit: Int?

    /// The last 10,000 transactions (the default).
    public static let `default` = HistoryRetention(limit: 10_000)
    /// No history is recorded.
    public static let off = HistoryRetention(limit: 0)
    /// Every transaction is kept until `deleteHistory(_:)` deletes it.
    public static let unlimited = HistoryRetention(limit: nil)
    /// The last `count` transactions.
    public static func transactions(_ count: Int) -> HistoryRetention { HistoryRetention(limit: max(0, count)) }

    public var isRecording: Bool { limit != 0 }

    public var description: String { limit.map { $0 == 0 ? "off" : "last \($0) transactions" } ?? "unlimited" }
}
