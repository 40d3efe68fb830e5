import Foundation
import StrataEngine

/// A copy of a StrataEngine store that a migration changes before it takes the store's place:
/// what the storage seam gives a migration (`PreparedStoreCopy`).
///
/// The copy is `<store>.migrating`, its blob files hard-linked into `<store>.migrating.blobs`
/// (blob files are never changed in place). It replaces the store by one rename, after the
/// copy's new blob files were linked into the store's blob folder and made durable; so an error
/// or a crash at any point leaves the store as it was, or (from the rename on) migrated. The
/// store stays locked from `prepare` to `finish`, so no other process writes to it meanwhile.
///
/// When this process has the store open for writing already (a container of the old models,
/// as SQLite lets a second connection migrate), the migration goes on through that store:
/// a write transaction held from `prepare` to `finish` keeps its containers from saving
/// meanwhile, and once the copy is in place they may fetch and save no more
/// (`StrataError.schemaChanged`).
package final class EngineStoreCopy: PreparedStoreCopy {
    package let path: String
    private let fs: any FileSystem
    /// Held (exclusively locked) until the copy has replaced it.
    private let original: Store
    /// The registry's key of a store this process had open already (nil: opened here).
    private let sharedKey: String?
    /// The write transaction that keeps the shared store's other writers waiting.
    private var hold: WriteTransaction?
    private let work: String
    private var blobs: String { path + ".blobs" }
    private var workBlobs: String { work + ".blobs" }
    /// Blob files linked into the store's folder for the copy, removed again if the swap does
    /// not happen.
    private var linked: [String] = []
    package private(set) var replaced = false

    /// Opens (and locks) the store at `path`; nil when there is no store there. `shared`: the
    /// store may be one this process has open (the real disk).
    package init?(path: String, fileSystem fs: any FileSystem, shared: Bool) throws {
        guard fs.fileExists(path) else { return nil }
        self.path = path
        self.fs = fs
        self.work = path + ".migrating"
        let key = OpenStores.key(for: path)
        if shared, let open = OpenStores.shared.writableStore(at: key), open.store.pathNamesItsFile {
            original = open.store
            sharedKey = key
            do { hold = try original.beginWrite() } catch {
                throw StrataError.store(error, while: "hold the store at \(path) to migrate it")
            }
        } else {
            sharedKey = nil
            do { original = try Store(path: path, options: StoreOptions(), fileSystem: fs) } catch {
                throw StrataError.store(error, while: "open the store at \(path) to migrate it")
            }
        }
        // What an interrupted run left (a crash before or after its swap) goes first.
        try removeWork()
    }

    deinit {
        hold?.rollback()
        if sharedKey == nil { original.close() }
    }

    package var url: URL { URL(fileURLWithPath: work) }

    package func read(_ body: (any StorageReader) throws -> Void) throws { try body(try original.beginRead()) }

    /// Copies the store's file (in 1 MiB pieces, synced) and links its blob files.
    package func make(progress: (Int64, Int64) -> Void) throws {
        let source = try fs.openFile(path, readOnly: true, create: false)
        defer { source.close() }
        let target = try fs.createFile(work, permissionsOf: path)
        defer { target.close() }
        let size = try source.size()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: UInt64 = 0
        while offset < size {
            let n = try buffer.withUnsafeMutableBytes { try source.read(into: $0, at: offset) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try target.write(UnsafeRawBufferPointer(rebasing: $0[0..<n]), at: offset) }
            offset += UInt64(n)
            progress(Int64(offset), Int64(size))
        }
        try target.sync()
        if fs.isDirectory(blobs) {
            try fs.createDirectory(workBlobs, permissionsOf: path)
            for name in try fs.listDirectory(blobs) { try fs.linkFile(blobs + "/" + name, to: workBlobs + "/" + name) }
        }
    }

    /// Makes the copy durable and puts it in the store's place: its new blob files go into the
    /// store's folder first (a power cut after the rename must not leave the store pointing at
    /// missing files), then one rename.
    package func replaceOriginal() throws {
        let folder = path.parentDirectory
        if fs.isDirectory(workBlobs) {
            if !fs.isDirectory(blobs) { try fs.createDirectory(blobs, permissionsOf: path) }
            for name in try fs.listDirectory(workBlobs) where !fs.fileExists(blobs + "/" + name) {
                try fs.linkFile(workBlobs + "/" + name, to: blobs + "/" + name)
                linked.append(blobs + "/" + name)
            }
            try fs.syncDirectory(blobs)
            try fs.syncDirectory(folder)
        }
        // The stages' commits were deferred: make the whole copy durable, then swap.
        let copy = try Store(path: work, options: StoreOptions(), fileSystem: fs)
        try copy.sync()
        copy.close()
        try fs.rename(work, to: path)
        replaced = true
        // This process's containers of the old models stop here; the migrated file takes the lock.
        if let sharedKey { OpenStores.shared.markMigrated(at: sharedKey) }
        hold?.rollback()
        hold = nil
        try fs.syncDirectory(folder)
    }

    /// After a failure before the swap: takes away what the migration added.
    package func discard() {
        guard !replaced else { return }
        for file in linked { try? fs.removeFile(file) }
        try? removeWork()
    }

    /// After the swap: blob files in the store's folder that the copy's folder no longer has
    /// are those the stages deleted (the migrated store does not refer to them; a crash before
    /// this leaves them for the next compaction), and the copy's links go.
    package func finish() {
        if fs.isDirectory(workBlobs), fs.isDirectory(blobs), let kept = try? Set(fs.listDirectory(workBlobs)) {
            for name in (try? fs.listDirectory(blobs)) ?? [] where name.hasSuffix(".blob") && !kept.contains(name) {
                try? fs.removeFile(blobs + "/" + name)
            }
        }
        try? removeWork()
    }

    /// Writes `name` in the copy's metadata (not synced: `replaceOriginal` syncs).
    package func setMetadata(_ name: String, _ value: [UInt8]) throws {
        let store = try Store(path: work, options: StoreOptions(durability: .deferred), fileSystem: fs)
        defer { store.close() }
        try store.write { try $0.setMetadata(name, value) }
    }

    private func removeWork() throws {
        if fs.fileExists(work) { try fs.removeFile(work) }
        if fs.isDirectory(workBlobs) {
            for name in try fs.listDirectory(workBlobs) { try fs.removeFile(workBlobs + "/" + name) }
            try fs.removeDirectory(workBlobs)
        }
    }
}
