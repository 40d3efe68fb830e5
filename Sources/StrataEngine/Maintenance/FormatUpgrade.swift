import Foundation

/// What `Store.upgrade(path:)` did.
public struct UpgradeReport: Sendable {
    /// The format version the store had; the same as `toVersion` when it needed nothing.
    public let fromVersion: Int
    public let toVersion: Int
    public let records: Int
    public let bytesBefore: Int
    public let bytesAfter: Int
}

extension Store {
    /// Converts a store written in an older file format to the current one, all or nothing:
    /// like a compaction, it writes the new file beside the old (`<store>.upgrade`), syncs it,
    /// and renames it over the store; a crash at any point leaves the old store or the new one,
    /// whole. Blob files stay as they are. A store already in the current format is left alone.
    /// `strata upgrade PATH` runs it.
    ///
    /// - Throws: `StoreError` `.locked` when another process has the store open for writing,
    ///   `.corrupt` for a store that cannot be read whole (nothing is changed then),
    ///   `.notAStore`, `.newerFormat`, `.ioFailure`, `.diskFull`.
    @discardableResult
    public static func upgrade(path: String) throws -> UpgradeReport {
        try upgrade(path: path, fileSystem: DiskFileSystem())
    }

    package static func upgrade(path: String, fileSystem: any FileSystem) throws -> UpgradeReport {
        guard fileSystem.fileExists(path) else {
            throw StoreError(.notFound, "There is no store at this path. Check the path.", path: path)
        }
        guard let lock = try LockFile.open(storePath: path, fileSystem: fileSystem, writable: true) else {
            throw StoreError(.ioFailure, "The store's lock file cannot be opened.", path: path)
        }
        guard try lock.lockWriter() else {
            throw StoreError(.locked, "Another process has this store open for writing. Close it there first.", path: path)
        }
        defer { lock.unlockWriter() }
        let io: any FileHandleIO
        do { io = try fileSystem.openFile(path, readOnly: true, create: false) }
        catch { throw StoreError.io(error, doing: "opening the store file", path: path) }
        defer { io.close() }
        let header: FileHeader
        do { header = try StoreOpening.readHeader(io: io, path: path) } catch let error as StoreError where error.code == .olderFormat {
            return try FormatUpgrade(path: path, io: io, fileSystem: fileSystem).run()
        }
        let size = Int(try io.size())
        return UpgradeReport(fromVersion: Int(header.version), toVersion: Int(FileHeader.currentVersion), records: 0, bytesBefore: size, bytesAfter: size)
    }
}

/// The conversion of a version-1 store: its one tree read in key order, each group of keys
/// (a collection's rows, an index's entries, the blobs and metadata) bulk-loaded into a tree of
/// its own in the new file.
private struct FormatUpgrade {
    let path: String
    let io: any FileHandleIO
    let fileSystem: any FileSystem

    func run() throws -> UpgradeReport {
        let temporary = path + ".upgrade"
        let bytesBefore = try io.size()
        let old = try readHeaderVersion1()
        guard let commit = try FormatVersion1.lastCommit(io: io, size: bytesBefore, salt: old.salt) else {
            throw StoreError.corrupt("no intact format-1 commit record was found; the store cannot be converted", path: path, offset: nil)
        }
        do {
            if fileSystem.fileExists(temporary) { try fileSystem.removeFile(temporary) }
            let out = try fileSystem.createFile(temporary, permissionsOf: path)
            var salt: UInt64 = 0
            while salt == 0 || salt == old.salt { salt = UInt64.random(in: 1...UInt64.max) }
            let file = StoreFile(io: out, path: path, salt: salt, counters: Counters())
            try out.write(FileHeader(salt: salt, createdMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000)).encode(), at: 0)
            let writer = AppendWriter(file: file, committedEnd: UInt64(FileHeader.size), syncedEnd: UInt64(FileHeader.size))
            var catalog = commit.catalog
            let records = try copyTrees(commit, into: writer, catalog: &catalog)
            let offset = writer.end
            let record = CommitRecord(sequence: commit.sequence, offset: offset, previousOffset: 0, bodyStart: UInt64(FileHeader.size),
                                      bodyChecksum: writer.bodyChecksum, flags: CommitRecord.flagBodySynced,
                                      timeMilliseconds: UInt64(Date().timeIntervalSince1970 * 1000), salt: salt, catalog: catalog).encode()
            writer.appendCommitRecord(record)
            try writer.flush()
            try writer.sync()
            try fileSystem.rename(temporary, to: path)
            try fileSystem.syncDirectory(path.parentDirectory)
            return UpgradeReport(fromVersion: 1, toVersion: Int(FileHeader.currentVersion), records: records,
                                 bytesBefore: Int(bytesBefore), bytesAfter: Int(offset) + record.count)
        } catch {
            try? fileSystem.removeFile(temporary)
            throw StoreError.io(error, doing: "converting the store to format \(FileHeader.currentVersion)", path: path)
        }
    }

    private func readHeaderVersion1() throws -> FileHeader {
        guard case .failure(let box) = FileHeader.decode(try io.read(count: FileHeader.size, at: 0)), case .olderVersion(1) = box.failure,
              let header = box.header else {
            throw StoreError(.notAStore, "This store's format version cannot be converted.", path: path)
        }
        return header
    }

    /// Which new tree a version-1 key belongs to, and the key in it.
    private func place(_ key: [UInt8]) throws -> (TreeID, ArraySlice<UInt8>) {
        switch key.first {
        case 0x01 where key.count == 13: return (.rows(UInt32(bigEndianBytes: key[1..<5])), key[5...])
        case 0x02 where key.count >= 5: return (.index(UInt32(bigEndianBytes: key[1..<5])), key[5...])
        case TreeKey.blobTag, TreeKey.metadataTag: return (.system, key[...])
        default: throw StoreError.corrupt("a format-1 entry of unknown kind", path: path, offset: nil)
        }
    }

    /// Copies every entry; returns the number of records.
    private func copyTrees(_ commit: FormatVersion1.Commit, into writer: AppendWriter, catalog: inout Catalog) throws -> Int {
        guard let root = commit.root else { return 0 }
        var current: (tree: TreeID, loader: BulkLoader, frames: UInt64, cells: UInt64)?
        var records = 0
        func finish() throws {
            guard let (tree, loader, frames, cells) = current else { return }
            let root = try loader.finish()
            let bytes = loader.writtenBytes + frames
            switch tree {
            case .rows(let c):
                if let p = catalog.collectionPosition(c) {
                    catalog.collections[p].root = root; catalog.collections[p].liveBytes = bytes; catalog.collections[p].count = cells
                }
            case .index(let i):
                if let p = catalog.indexPosition(i) { catalog.indexes[p].root = root; catalog.indexes[p].liveBytes = bytes; catalog.indexes[p].entries = cells }
            case .system:
                catalog.systemRoot = root; catalog.systemBytes = bytes
            }
            current = nil
        }
        try FormatVersion1.walk(io: io, root: root, limit: commit.offset, path: path) { key, value in
            var (tree, newKey) = try place(key)
            if case .index(let i) = tree, catalog.index(i)?.unique == false {
                // Format 1 ends a non-unique entry's key with the row, 8 bytes big-endian.
                guard newKey.count >= 8 else { throw StoreError.corrupt("a malformed format-1 index entry", path: path, offset: nil) }
                var k = Array(newKey.dropLast(8))
                TreeKey.appendRow(Array(newKey.suffix(8)).loadBE64(0), to: &k)
                newKey = k[...]
            }
            if current?.tree != tree {
                try finish()
                current = (tree, BulkLoader(writer: writer, fill: PageLayout.targetSize(of: tree)), 0, 0)
            }
            let (cell, flags, frame) = try convert(tree, key: key, value: value, catalog: catalog, writer: writer)
            try Array(newKey).withUnsafeBytes { k in try cell.withUnsafeBytes { try current!.loader.add(k, $0, flags: flags) } }
            current!.frames += frame
            current!.cells += 1
            if case .rows = tree { records += 1 }
        }
        try finish()
        return records
    }

    /// A version-1 entry's value in the new format: its bytes, flags and the value frame bytes it wrote.
    private func convert(_ tree: TreeID, key: [UInt8], value: [UInt8], catalog: Catalog, writer: AppendWriter) throws -> ([UInt8], UInt8, UInt64) {
        switch tree {
        case .rows(let c):
            let (keys, payload) = try FormatVersion1.frame(io: io, location: value, limit: .max, path: path)
            // Keys of indexes dropped since the row was written are no longer the row's.
            let own = WriteTransaction.deduplicated(keys.filter { catalog.index($0.index.rawValue)?.collection == c })
            let digest = KeysDigest.of(own)
            return try stored(payload, digest: digest, writer: writer)
        case .index(let i):
            guard let info = catalog.index(i) else { throw StoreError.corrupt("an entry of a format-1 index the catalog does not list", path: path, offset: nil) }
            guard info.unique else { return ([], 0, 0) }
            guard value.count == 8 else { throw StoreError.corrupt("a malformed format-1 unique-index entry", path: path, offset: nil) }
            var row: [UInt8] = []
            Varint.append(value.loadLE64(0), to: &row)
            return (row, 0, 0)
        case .system:
            if key.first == TreeKey.blobTag {
                guard key.count == 9, value.count == 12 else { throw StoreError.corrupt("a malformed format-1 blob entry", path: path, offset: nil) }
                let checksum = try blobChecksum(id: key.loadBE64(1), length: value.loadLE64(0), crc: value.loadLE32(8))
                var v: [UInt8] = []
                v.appendLE(value.loadLE64(0))
                v.appendLE(checksum)
                return (v, 0, 0)
            }
            let (_, payload) = try FormatVersion1.frame(io: io, location: value, limit: .max, path: path)
            return try stored(payload, digest: 0, writer: writer)
        }
    }

    /// A value kept in the leaf, or (when long) in a value frame.
    private func stored(_ payload: [UInt8], digest: UInt32, writer: AppendWriter) throws -> ([UInt8], UInt8, UInt64) {
        var bytes: [UInt8] = []
        var flags: UInt8 = 0
        if digest != 0 { bytes.appendLE(digest); flags |= ValueFlags.keysDigest }
        guard payload.count > PageLayout.inlineValueLimit else { return (bytes + payload, flags, 0) }
        let frame = payload.withUnsafeBytes { ValueFrame.encode($0) }
        let offset = try writer.appendAligned(frame)
        ValueLocation(offset: offset, length: UInt32(frame.count)).encode(into: &bytes)
        return (bytes, flags | ValueFlags.inFrame, UInt64(frame.count))
    }

    /// Reads a blob file, checks its format-1 CRC-32C, and returns its new checksum.
    private func blobChecksum(id: UInt64, length: UInt64, crc: UInt32) throws -> UInt64 {
        let folder = BlobFolder(path: path + ".blobs", fileSystem: fileSystem, storePath: path)
        let file: any FileHandleIO
        do { file = try fileSystem.openFile(folder.filePath(id), readOnly: true, create: false) } catch {
            if fileSystem.fileExists(folder.filePath(id)) { throw StoreError.io(error, doing: "opening blob \(id)", path: path) }
            throw StoreError.corrupt("the file of blob \(id) is missing; the store cannot be converted whole", path: path, offset: nil)
        }
        defer { file.close() }
        guard length <= UInt64(Int.max / 2), try file.size() >= length else {
            throw StoreError.corrupt("the file of blob \(id) is cut short", path: path, offset: nil)
        }
        let bytes = try file.read(count: Int(length), at: 0)
        guard bytes.count == Int(length), CRC32C.checksum(bytes) == crc else {
            throw StoreError.corrupt("the file of blob \(id) fails its checksum", path: path, offset: nil)
        }
        return Checksum.hash(bytes)
    }
}

extension UInt32 {
    init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
