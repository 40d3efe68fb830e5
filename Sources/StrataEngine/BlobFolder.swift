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
            try fileSystem.createDirectory(path)
            let parent = storePath.parentDirectory
            if sync { try fileSystem.syncDirectory(parent) }
        }
        let file = try fileSystem.openFile(filePath(id), readOnly: false, create: true)
        defer { file.close() }
        try file.truncate(to: 0)
        try file.write(bytes, at: 0)
        if sync { try file.sync() }
    }

    func syncFolder() throws {
        try fileSystem.syncDirectory(path)
    }

    func read(_ id: UInt64, length: UInt64, checksum: UInt64) throws -> [UInt8] {
        try withContents(id, length: length, checksum: checksum) { Array($0) }
    }

    /// Reads a blob file into memory once (no zeroing, no copy), checks it and hands the
    /// memory to `adopt`, which owns it from then on (it must free it with `Syscalls.release`).
    func readOwned<R>(_ id: UInt64, length: UInt64, checksum: UInt64, adopt: (UnsafeMutableRawPointer, Int) -> R) throws -> R {
        guard let count = Int(exactly: length), count <= Int.max / 2 else {
            throw StoreError.corrupt("blob \(id) is said to have \(length) bytes", path: storePath, offset: nil)
        }
        guard let memory = Syscalls.allocate(count) else {
            throw StoreError(.ioFailure, "There is no memory for blob \(id) (\(count) bytes).", path: storePath)
        }
        do {
            try fill(id, UnsafeMutableRawBufferPointer(start: memory, count: count), checksum: checksum)
        } catch {
            Syscalls.release(memory)
            throw error
        }
        return adopt(memory, count)
    }

    private func withContents<R>(_ id: UInt64, length: UInt64, checksum: UInt64, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try readOwned(id, length: length, checksum: checksum) { memory, count in
            defer { Syscalls.release(memory) }
            return Result { try body(UnsafeRawBufferPointer(start: memory, count: count)) }
        }.get()
    }

    /// Reads the whole blob file into `buffer` and checks it against the length and checksum
    /// the store recorded.
    private func fill(_ id: UInt64, _ buffer: UnsafeMutableRawBufferPointer, checksum: UInt64) throws {
        let file: any FileHandleIO
        do { file = try fileSystem.openFile(filePath(id), readOnly: true, create: false) }
        catch {
            // Only a file that is not there is damage; any other failure is the disk's.
            if fileSystem.fileExists(filePath(id)) { throw StoreError.io(error, doing: "opening blob \(id)", path: storePath) }
            throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is missing", path: storePath, offset: nil)
        }
        defer { file.close() }
        let n: Int
        do {
            // The length comes from the store: check it against the file before reading that much.
            guard try file.size() >= UInt64(buffer.count) else {
                throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is damaged or cut short", path: storePath, offset: nil)
            }
            n = try file.read(into: buffer, at: 0)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.io(error, doing: "reading blob \(id)", path: storePath)
        }
        guard n == buffer.count, Checksum.hash(UnsafeRawBufferPointer(buffer)) == checksum else {
            throw StoreError.corrupt("the file of blob \(id) (\(filePath(id))) is damaged or cut short", path: storePath, offset: nil)
        }
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
