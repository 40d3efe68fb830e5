/// The folder of blob files beside a store: `<store>.blobs/<id as 16 hex digits>.blob`.
///
/// A blob file is written and synced (with its folder) before the commit that refers to it,
/// so a commit never refers to a missing blob. Files that no commit refers to (from a
/// transaction that was rolled back or cut short) are removed by compaction.
struct BlobFolder: Sendable {
    let path: String
    let fileSystem: any FileSystem
    let storePath: String

    func filePath(_ id: UInt64) -> String {
        let hex = String(id, radix: 16)
        return path + "/" + String(repeating: "0", count: 16 - hex.count) + hex + ".blob"
    }

    static func id(fromFileName name: String) -> UInt64? {
        guard name.hasSuffix(".blob"), name.count == 21 else { return nil }
        return UInt64(name.prefix(16), radix: 16)
    }

    /// Writes a blob file and syncs it (the folder is synced at commit).
    func write(_ id: UInt64, _ bytes: [UInt8], sync: Bool) throws {
        if !fileSystem.isDirectory(path) {
            try fileSystem.createDirectory(path, permissionsOf: storePath)
            let parent = storePath.parentDirectory
            if sync { try fileSystem.syncDirectory(parent) }
        }
        // A blob holds the store's data: it takes the store's permissions.
        let file = try fileSystem.createFile(filePath(id), permissionsOf: storePath)
        defer { file.close() }
        try file.write(bytes, at: 0)
        if sync { try file.sync() }
    }

    func syncFolder() throws {
        try fileSystem.syncDirectory(path)
    }

    func read(_ id: UInt64, length: UInt64, checksum: UInt64) throws -> [UInt8] {
        try withContents(id, length: length, checksum: checksum) { Array($0) }
    }

    /// Calls `body` with a blob's bytes, checked against the length and checksum the store
    /// recorded: its file mapped, not read into memory (`keep` receives the mapping, for a
    /// caller that hands the bytes on).
    func withContents<R>(_ id: UInt64, length: UInt64, checksum: UInt64, keep: ((any FileMapping) -> Void)? = nil,
                         _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let count = Int(exactly: length), count <= Int.max / 2 else {
            throw StoreError.corrupt("blob \(id) is said to have \(length) bytes", path: storePath, offset: nil)
        }
        let file: any FileHandleIO
        do { file = try fileSystem.openFile(filePath(id), readOnly: true, create: false) }
        catch {
            // Only a file that is not there is damage; any other failure is the disk's.
            if fileSystem.fileExists(filePath(id)) { throw StoreError.io(error, doing: "opening blob \(id)", path: storePath) }
            throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is missing", path: storePath, offset: nil)
        }
        defer { file.close() }   // the mapping outlives the descriptor
        let mapping: any FileMapping
        do {
            // The length comes from the store: check it against the file before mapping that much.
            guard try file.size() >= length else {
                throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is damaged or cut short", path: storePath, offset: nil)
            }
            if count == 0 { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            mapping = try file.map(length: count, roomToGrow: false)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.io(error, doing: "reading blob \(id)", path: storePath)
        }
        let bytes = UnsafeRawBufferPointer(start: mapping.base, count: count)
        guard Checksum.hash(bytes) == checksum else {
            throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is damaged or cut short", path: storePath, offset: nil)
        }
        keep?(mapping)
        return try body(bytes)
    }

    func remove(_ id: UInt64) {
        try? fileSystem.removeFile(filePath(id))
    }

    /// The ids of every blob file in the folder.
    func fileIDs() -> [UInt64] {
        guard fileSystem.isDirectory(path), let names = try? fileSystem.listDirectory(path) else { return [] }
        return names.compactMap(BlobFolder.id(fromFileName:))
    }
}

/// Path arithmetic without Foundation's NSString.
struct NSStringLike {
    let value: String
    /// The folder holding this path ("." for a bare file name).
    var parent: String {
        guard let slash = value.lastIndex(of: "/") else { return "." }
        let head = String(value[..<slash])
        return head.isEmpty ? "/" : head
    }
}

extension String {
    /// The folder holding this path ("." for a bare file name, "/" for a file at the root).
    package var parentDirectory: String { NSStringLike(value: self).parent }
}
