import Foundation
import StrataEngine
import Strata
import StrataRecords

/// A folder of its own for one test's stores, which checks every store it holds before it
/// removes them, the way bbolt's test DB runs its consistency check at cleanup: when the
/// folder goes (the test's last use of it), each store file in it (a file with its `.lock`
/// beside it) is opened read-only and verified, every page, record, blob and index entry, and,
/// for an object store, every row's index keys against its entries (`Store.verify`, as
/// `strata verify` does). What it finds goes to `report`, which the test modules point at
/// `Issue.record`, so a test that leaves a broken store fails even if it checked nothing.
///
/// A test that damages a store on purpose says so (`expectDamage(at:)`, or `verifies = false`
/// for the whole folder).
open class TestStore: @unchecked Sendable {
    // @unchecked: the damaged set is guarded by `lock`; the rest is set once.
    public let url: URL
    /// Whether the folder's stores are verified when it goes.
    public var verifies: Bool {
        get { lock.withLock { verifying } }
        set { lock.withLock { verifying = newValue } }
    }
    private let report: @Sendable (String) -> Void
    private let lock = NSLock()
    private var verifying = true
    private var damaged: Set<String> = []

    /// - Parameters:
    ///   - name: a word for the folder's name (the test's, by default).
    ///   - report: where each problem found at teardown goes, one message each.
    public init(_ name: String = #function, report: @escaping @Sendable (String) -> Void) {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(safe)-\(UUID().uuidString)")
        self.report = report
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of a file in the folder.
    public func path(_ name: String = "test.strata") -> String { url.appendingPathComponent(name).path }

    /// The url of a store file `name.store` in the folder.
    public func store(_ name: String = "test") -> URL { url.appendingPathComponent("\(name).store") }

    /// The store at `path` is damaged on purpose: it is not verified.
    public func expectDamage(at path: String) {
        let resolved = URL(fileURLWithPath: path).standardizedFileURL.path
        lock.withLock { _ = damaged.insert(resolved) }
    }

    /// The problems of every store in the folder (not those expected to be damaged), each
    /// naming its store.
    public func problems() -> [String] {
        let skipped = lock.withLock { damaged }
        var found: [String] = []
        for path in Self.storeFiles(in: url) where !skipped.contains(URL(fileURLWithPath: path).standardizedFileURL.path) {
            found += Self.verify(path).map { "\((path as NSString).lastPathComponent): \($0)" }
        }
        return found
    }

    deinit {
        if verifies { for problem in problems() { report("store left by the test: \(problem)") } }
        try? FileManager.default.removeItem(at: url)
    }

    /// Store files below `folder`: the files with a `.lock` file beside them.
    static func storeFiles(in folder: URL) -> [String] {
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        var stores: [String] = []
        for case let file as URL in walk where file.pathExtension != "lock" {
            let isFile = (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) ?? false
            if isFile, FileManager.default.fileExists(atPath: file.path + ".lock") { stores.append(file.path) }
        }
        return stores.sorted()
    }

    /// What `strata verify` finds wrong with the store at `path` (none: clean), read-only.
    public static func verify(_ path: String) -> [String] {
        do {
            let store = try Store(path: path, options: StoreOptions(readOnly: true, createIfMissing: false))
            defer { store.close() }
            let keys = try store.read { tx in try StoredModelSchema(tx)?.indexKeys(tx) }
            return try store.verify(indexKeys: keys).problems.map(\.description)
        } catch {
            return ["cannot be verified: \(error)"]
        }
    }
}
