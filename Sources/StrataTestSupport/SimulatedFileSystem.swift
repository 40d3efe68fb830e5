// A simulated file system behind the engine's fault seam (`FileSystem`, `FileHandleIO`).
//
// Files and folders live in memory. Every file keeps two states: what reads see now
// (the page cache) and what a power cut would leave (the disk). The durability rules are
// the ones the engine must assume (Docs, "Durability assumptions"; SQLite's `atomiccommit`):
//
// - A write reaches the disk only when its file is synced. Until then a power cut may drop
//   it, keep it, or keep any subset of its 512-byte sectors (writes may be reordered and a
//   write may tear at sector edges, never inside a sector; each sector holds what some
//   prefix of the writes to it left).
// - A new, renamed or removed directory entry is durable only once its folder is synced.
//   Until then a power cut keeps some prefix of the unsynced changes, in order (a rename is
//   atomic: either the old name or the new one, never both, never neither).
// - A failed sync loses the writes it was meant to flush (the 'fsyncgate' behaviour of
//   Linux: the kernel marks the pages clean although they never reached the disk); reads
//   still see them until the power goes.
//
// Tests can fail the Nth write, sync, rename, map (or any other operation) with a chosen
// errno, once or from then on, cut the power at the Nth operation, and read, replace or damage
// a file's bytes.
//
// A mapping is a view of a file's bytes as reads see them: every write and truncate shows in
// it at once, as in a shared `mmap`. Byte-range locks belong to the open file (handle), as
// Linux's open-file-description locks do.

import Foundation
import StrataEngine

/// An in-memory file system that can fail operations and lose power; see the file comment.
///
/// ```swift
/// let fs = SimulatedFileSystem()
/// let store = try Store(path: "/s.strata", options: StoreOptions(), fileSystem: fs)
/// fs.fail(.sync, at: 1, errno: SystemError.ioError)     // the next sync fails
/// // ... commit, expect .ioFailure ...
/// let afterCut = fs.powerLoss(.dropUnsynced)              // what the disk holds
/// ```
public final class SimulatedFileSystem: FileSystem, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `mutex`.

    /// What a power cut leaves of the writes and directory changes that were not synced.
    public enum PowerLoss: Sendable, Hashable, CustomStringConvertible {
        /// Only what was synced.
        case dropUnsynced
        /// Everything written (except writes that a failed sync lost).
        case keepUnsynced
        /// A random choice, replayable from `seed`: per file, a prefix of its unsynced writes
        /// with the next one torn at a sector edge, or any subset of their sectors, each as
        /// some prefix of the writes to it left it (with or without the file's new length);
        /// of the directory changes, a prefix in order.
        case tearUnsynced(seed: UInt64)

        public var description: String {
            switch self {
            case .dropUnsynced: "dropUnsynced"
            case .keepUnsynced: "keepUnsynced"
            case .tearUnsynced(let seed): "tearUnsynced(seed: \(seed))"
            }
        }
    }

    /// The operations that can be counted, failed, or interrupted by a power cut.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case open, write, sync, syncDirectory, rename, truncate, remove, createDirectory, link, removeDirectory, map
    }

    /// The unit a disk writes atomically.
    public static let sectorSize = 512

    // Linux errno values for the failures the simulation reports on its own.
    static let noEntry: Int32 = 2        // ENOENT
    static let badDescriptor: Int32 = 9  // EBADF
    static let notDirectory: Int32 = 20  // ENOTDIR
    static let isDirectory: Int32 = 21   // EISDIR
    static let exists: Int32 = 17        // EEXIST
    static let notEmpty: Int32 = 39      // ENOTEMPTY

    // MARK: State

    final class Inode {
        let id: Int
        /// What reads see.
        var current: [UInt8]
        /// What the disk holds for sure.
        var durable: [UInt8]
        /// Changes since the last sync that may or may not reach the disk, in order.
        var pending: [FileChange] = []
        /// Byte-range locks: which handle holds which range, shared or exclusive.
        var locks: [(handle: Int, range: Range<UInt64>, exclusive: Bool)] = []
        /// The live mappings of this file, which see every change.
        var views: [WeakView] = []
        /// A writable shared mapping of the file's first bytes: what is stored in it is the
        /// file's content there (reads see it at once).
        var shared: SimulatedSharedMapping?
        /// Counts the changes of the file's bytes (its `modified` time, in `status`).
        var changes: Int64 = 0
        var permissions = FilePermissions(mode: 0o644, owner: 0, group: 0)

        init(id: Int, bytes: [UInt8]) {
            self.id = id
            self.current = bytes
            self.durable = bytes
        }
    }

    enum FileChange {
        case write(offset: Int, bytes: [UInt8])
        case truncate(Int)
    }

    enum EntryChange {
        case link(String, Inode)
        case unlink(String)
        case rename(from: String, to: String, Inode)
        case makeDirectory(String)
        case removeDirectory(String)

        var folders: [String] {
            switch self {
            case .link(let p, _), .unlink(let p), .makeDirectory(let p), .removeDirectory(let p): [SimulatedFileSystem.parent(of: p)]
            case .rename(let f, let t, _): [SimulatedFileSystem.parent(of: f), SimulatedFileSystem.parent(of: t)]
            }
        }
    }

    struct Fault {
        let operation: Operation
        let n: Int
        let errno: Int32
        let persistent: Bool
        var seen = 0
    }

    struct PowerCut {
        let operation: Operation
        let n: Int
        let mode: PowerLoss
        var seen = 0
    }

    private let mutex = NSLock()
    private var files: [String: Inode] = [:]
    private var directories: Set<String> = ["/", "."]
    private var directoryPermissions: [String: FilePermissions] = [:]
    private var durableFiles: [String: Inode] = [:]
    private var durableDirectories: Set<String> = ["/", "."]
    /// Directory changes not yet synced, in the order they were made.
    private var pendingEntries: [EntryChange] = []
    private var nextInode = 1
    private var nextHandle = 1
    private var faults: [Fault] = []
    /// Handles whose sync failed, and how many syncs went through one of them afterwards.
    private var failedSyncHandles = Set<Int>()
    private var syncRetries = 0
    private var cut: PowerCut?
    private var image: SimulatedFileSystem?
    private var poweredOff = false
    private var counts: [Operation: Int] = [:]
    private var triggered = 0
    private var failed: [String] = []
    private var partialWrites = true
    private var syncLosesWrites = true

    public init() {}

    private func locked<R>(_ body: () throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body()
    }

    // MARK: Faults and power cuts

    /// Fails the `n`th `operation` counted from now (1 is the next one) with `errno`; with
    /// `persistent`, every later one fails too. Several faults may be armed at once.
    ///
    /// A failed write leaves a sector-aligned first half of its bytes written (as a short
    /// `pwrite` followed by an error does) unless `partialWritesOnFailure` is false; a failed
    /// sync loses the unsynced writes of its file unless `failedSyncLosesWrites` is false.
    public func fail(_ operation: Operation, at n: Int, errno: Int32 = SystemError.ioError, persistent: Bool = false) {
        precondition(n >= 1, "operations are counted from 1")
        locked { faults.append(Fault(operation: operation, n: n, errno: errno, persistent: persistent)) }
    }

    /// Cuts the power during the `n`th `operation` counted from now: the operation takes
    /// effect as an unsynced change (a sync does nothing), `powerLossImage` becomes what the
    /// disk holds after a `mode` power cut, and every later change fails with EIO.
    public func cutPower(at operation: Operation, n: Int, mode: PowerLoss) {
        precondition(n >= 1, "operations are counted from 1")
        locked { cut = PowerCut(operation: operation, n: n, mode: mode) }
    }

    /// What the disk held after the power cut armed with `cutPower(at:n:mode:)`, once it happened.
    public var powerLossImage: SimulatedFileSystem? { locked { image } }

    /// True once an armed power cut has happened.
    public var isPoweredOff: Bool { locked { poweredOff } }

    /// Removes every armed fault and power cut (a power cut that happened stays happened).
    public func disarm() {
        locked {
            faults.removeAll()
            cut = nil
        }
    }

    /// How many operations have failed because of an armed fault (or power cut).
    public var faultsTriggered: Int { locked { triggered } }

    /// The paths of the operations that failed because of an armed fault (or power cut), in order.
    public var failedPaths: [String] { locked { failed } }

    /// How many syncs went through a handle whose earlier sync had failed: the engine must
    /// never do that (a failed sync may have dropped the writes it was meant to flush, so a
    /// second one on that descriptor proves nothing).
    public var syncsRetriedAfterFailure: Int { locked { syncRetries } }

    /// How many times `operation` was called since this file system was made (or counts reset).
    public func count(_ operation: Operation) -> Int { locked { counts[operation, default: 0] } }

    /// Sets every operation count to zero.
    public func resetCounts() { locked { counts.removeAll() } }

    /// Whether a failed write leaves part of its bytes written. Default: true.
    public var partialWritesOnFailure: Bool {
        get { locked { partialWrites } }
        set { locked { partialWrites = newValue } }
    }

    /// Whether a failed sync loses the writes it should have flushed. Default: true.
    public var failedSyncLosesWrites: Bool {
        get { locked { syncLosesWrites } }
        set { locked { syncLosesWrites = newValue } }
    }

    private enum Decision { case proceed, fail(Int32), cutPower(PowerLoss) }

    /// Counts an operation and decides its fate. Call with the mutex held.
    private func decide(_ operation: Operation, path: String) -> Decision {
        counts[operation, default: 0] += 1
        if poweredOff { return .fail(SystemError.ioError) }
        if var c = cut, c.operation == operation {
            c.seen += 1
            cut = c
            if c.seen == c.n {
                cut = nil
                triggered += 1
                failed.append(path)
                return .cutPower(c.mode)
            }
        }
        var decision = Decision.proceed
        for i in faults.indices where faults[i].operation == operation {
            faults[i].seen += 1
            let f = faults[i]
            if f.seen == f.n || (f.persistent && f.seen > f.n) {
                if case .proceed = decision {
                    triggered += 1
                    failed.append(path)
                    decision = .fail(f.errno)
                }
            }
        }
        return decision
    }

    /// Takes the power-loss image and switches the machine off. Call with the mutex held,
    /// after the interrupted operation has taken effect.
    private func powerOff(_ mode: PowerLoss, call: String, path: String) -> SystemError {
        image = makeImage(mode)
        poweredOff = true
        return SystemError(call: call, path: path, errno: SystemError.ioError)
    }

    // MARK: Power loss

    /// A new file system holding what a power cut in `mode` leaves of this one: no open
    /// files, no locks, no faults. This one is unchanged.
    public func powerLoss(_ mode: PowerLoss) -> SimulatedFileSystem {
        locked { makeImage(mode) }
    }

    /// An exact copy of this file system, unsynced changes included (no open files, no faults).
    public func clone() -> SimulatedFileSystem {
        locked {
            let copy = SimulatedFileSystem()
            var map: [Int: Inode] = [:]
            func twin(_ inode: Inode) -> Inode {
                if let t = map[inode.id] { return t }
                let t = Inode(id: inode.id, bytes: inode.durable)
                t.current = inode.current
                t.changes = inode.changes
                t.permissions = inode.permissions
                t.pending = inode.pending
                map[inode.id] = t
                return t
            }
            copy.files = files.mapValues(twin)
            copy.durableFiles = durableFiles.mapValues(twin)
            copy.directories = directories
            copy.durableDirectories = durableDirectories
            copy.pendingEntries = pendingEntries.map { change in
                switch change {
                case .link(let p, let i): .link(p, twin(i))
                case .rename(let f, let t, let i): .rename(from: f, to: t, twin(i))
                case .unlink, .makeDirectory, .removeDirectory: change
                }
            }
            copy.nextInode = nextInode
            return copy
        }
    }

    private func makeImage(_ mode: PowerLoss) -> SimulatedFileSystem {
        var random = SeededGenerator(seed: 0)
        var names = durableFiles
        var folders = durableDirectories
        let changes: ArraySlice<EntryChange>
        switch mode {
        case .dropUnsynced: changes = []
        case .keepUnsynced: changes = pendingEntries[...]
        case .tearUnsynced(let seed):
            random = SeededGenerator(seed: seed)
            changes = pendingEntries.prefix(Int.random(in: 0...pendingEntries.count, using: &random))
        }
        for change in changes { Self.apply(change, files: &names, directories: &folders) }
        // Entries in a directory whose own entry the disk lost are lost with it (fsck finds
        // them orphaned), however durable they were inside it.
        var orphans = folders.filter { $0 != "/" && $0 != "." && !folders.contains(Self.parent(of: $0)) }
        while !orphans.isEmpty {
            folders.subtract(orphans)
            orphans = folders.filter { $0 != "/" && $0 != "." && !folders.contains(Self.parent(of: $0)) }
        }
        names = names.filter { folders.contains(Self.parent(of: $0.key)) }

        let result = SimulatedFileSystem()
        var made: [Int: Inode] = [:]
        for (path, inode) in names.sorted(by: { $0.key < $1.key }) {
            if made[inode.id] == nil {
                let bytes: [UInt8]
                switch mode {
                case .dropUnsynced: bytes = inode.durable
                case .keepUnsynced: bytes = Self.applying(inode.pending, to: inode.durable)
                case .tearUnsynced: bytes = Self.torn(inode, using: &random)
                }
                made[inode.id] = Inode(id: inode.id, bytes: bytes)
            }
            result.files[path] = made[inode.id]
        }
        result.durableFiles = result.files
        result.directories = folders
        result.durableDirectories = folders
        result.nextInode = nextInode
        return result
    }

    /// One way the unsynced writes of a file may have reached the disk.
    private static func torn(_ inode: Inode, using random: inout SeededGenerator) -> [UInt8] {
        let pending = inode.pending
        if pending.isEmpty { return inode.durable }
        var bytes = inode.durable
        switch random.next() % 3 {
        case 0:
            // In order, up to some write, of which only the first sectors made it.
            let k = Int.random(in: 0...pending.count, using: &random)
            bytes = applying(pending[..<k], to: bytes)
            if k < pending.count, case .write(let offset, let data) = pending[k] {
                let pieces = sectors(offset: offset, data)
                for piece in pieces.prefix(Int.random(in: 0..<pieces.count, using: &random)) {
                    apply(piece, to: &bytes)
                }
            }
        default:
            // Sectors reach the disk in any order, each as it was after some prefix of the
            // writes to it (a sector is written whole: never a later write without an
            // earlier one to the same sector). With case 2 the file's new length made it
            // too, so the sectors that did not hold zeros (or their old bytes).
            var writesTo: [Int: Int] = [:]
            for case .write(let offset, let data) in pending {
                for case .write(let at, _) in sectors(offset: offset, data) { writesTo[at / sectorSize, default: 0] += 1 }
            }
            var kept: [Int: Int] = [:]
            for sector in writesTo.keys.sorted() { kept[sector] = Int.random(in: 0...writesTo[sector]!, using: &random) }
            var seen: [Int: Int] = [:]
            for change in pending {
                switch change {
                case .truncate:
                    apply(change, to: &bytes)
                case .write(let offset, let data):
                    for piece in sectors(offset: offset, data) {
                        guard case .write(let at, _) = piece else { continue }
                        seen[at / sectorSize, default: 0] += 1
                        if seen[at / sectorSize]! <= kept[at / sectorSize]! { apply(piece, to: &bytes) }
                    }
                }
            }
            let full = applying(pending, to: inode.durable)
            if random.next() % 2 == 0 && bytes.count < full.count {
                bytes += [UInt8](repeating: 0, count: full.count - bytes.count)
            }
        }
        return bytes
    }

    /// A write cut at sector edges.
    private static func sectors(offset: Int, _ data: [UInt8]) -> [FileChange] {
        var pieces: [FileChange] = []
        var start = 0
        while start < data.count {
            let absolute = offset + start
            let end = min(data.count, start + sectorSize - absolute % sectorSize)
            pieces.append(.write(offset: absolute, bytes: Array(data[start..<end])))
            start = end
        }
        return pieces
    }

    private static func apply(_ change: FileChange, to bytes: inout [UInt8]) {
        switch change {
        case .write(let offset, let data):
            if bytes.count < offset + data.count {
                bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count)
            }
            bytes.replaceSubrange(offset..<(offset + data.count), with: data)
        case .truncate(let size):
            if size < bytes.count {
                bytes.removeSubrange(size...)
            } else {
                bytes += [UInt8](repeating: 0, count: size - bytes.count)
            }
        }
    }

    private static func applying<C: Sequence<FileChange>>(_ changes: C, to bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        for change in changes { apply(change, to: &result) }
        return result
    }

    private static func apply(_ change: EntryChange, files: inout [String: Inode], directories: inout Set<String>) {
        switch change {
        case .link(let path, let inode): files[path] = inode
        case .unlink(let path): files[path] = nil
        case .rename(let from, let to, let inode):
            if files[from] === inode { files[from] = nil }
            files[to] = inode
        case .makeDirectory(let path): directories.insert(path)
        case .removeDirectory(let path): directories.remove(path)
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let head = String(path[..<slash])
        return head.isEmpty ? "/" : head
    }

    // MARK: Helpers for tests

    /// The bytes of a file as reads see them, or nil if there is no such file.
    public func bytes(of path: String) -> [UInt8]? {
        locked {
            guard let inode = files[path] else { return nil }
            absorbShared(inode)
            return inode.current
        }
    }

    /// The bytes of a file that a power cut would surely leave (nil if its entry is not durable).
    public func durableBytes(of path: String) -> [UInt8]? { locked { durableFiles[path]?.durable } }

    /// Replaces a file's bytes, durably (creating the file if needed), as if edited on disk.
    public func setBytes(_ bytes: [UInt8], of path: String) {
        locked {
            let inode: Inode
            if let existing = files[path] {
                inode = existing
            } else {
                inode = Inode(id: nextInode, bytes: [])
                nextInode += 1
                files[path] = inode
            }
            durableFiles[path] = inode
            inode.current = bytes
            inode.durable = bytes
            inode.pending = []
        }
    }

    /// Cuts (or extends with zeros) a file to `size` bytes, durably.
    public func truncateFile(_ path: String, to size: Int) {
        guard var bytes = bytes(of: path) else { preconditionFailure("no file \(path)") }
        Self.apply(.truncate(size), to: &bytes)
        setBytes(bytes, of: path)
    }

    /// Appends bytes to a file, durably.
    public func appendBytes(_ tail: [UInt8], to path: String) {
        guard let bytes = bytes(of: path) else { preconditionFailure("no file \(path)") }
        setBytes(bytes + tail, of: path)
    }

    /// Flips one bit (0...7) of the byte at `offset`, durably.
    public func flipBit(of path: String, at offset: Int, bit: Int = 0) {
        guard var bytes = bytes(of: path), offset < bytes.count else { preconditionFailure("no byte \(offset) in \(path)") }
        bytes[offset] ^= UInt8(1) << UInt8(bit & 7)
        setBytes(bytes, of: path)
    }

    /// The paths of every file, sorted.
    public var filePaths: [String] { locked { files.keys.sorted() } }

    /// True when some write or directory change has not been synced.
    public var hasUnsyncedChanges: Bool {
        locked { !pendingEntries.isEmpty || files.values.contains { !$0.pending.isEmpty } }
    }

    // MARK: FileSystem

    package func openFile(_ path: String, readOnly: Bool, create: Bool) throws -> any FileHandleIO {
        try openFile(path, readOnly: readOnly, create: create, mode: 0o644)
    }

    package func openFile(_ path: String, readOnly: Bool, create: Bool, mode: UInt32) throws -> any FileHandleIO {
        try locked {
            if directories.contains(path) { throw SystemError(call: "open", path: path, errno: Self.isDirectory) }
            let existing = files[path]
            if existing == nil {
                guard create, directories.contains(Self.parent(of: path)) else {
                    throw SystemError(call: "open", path: path, errno: Self.noEntry)
                }
            }
            switch decide(.open, path: path) {
            case .fail(let errno): throw SystemError(call: "open", path: path, errno: errno)
            case .cutPower(let mode):
                if existing == nil { createEntry(path) }
                throw powerOff(mode, call: "open", path: path)
            case .proceed: break
            }
            let inode = existing ?? createEntry(path, mode: mode)
            let handle = SimulatedFile(fileSystem: self, inode: inode, path: path, readOnly: readOnly, id: nextHandle)
            nextHandle += 1
            return handle
        }
    }

    @discardableResult
    private func createEntry(_ path: String, mode: UInt32 = 0o644) -> Inode {
        let inode = Inode(id: nextInode, bytes: [])
        inode.permissions.mode = mode
        nextInode += 1
        files[path] = inode
        pendingEntries.append(.link(path, inode))
        return inode
    }

    package func fileExists(_ path: String) -> Bool {
        locked { files[path] != nil || directories.contains(path) }
    }

    package func isDirectory(_ path: String) -> Bool {
        locked { directories.contains(path) }
    }

    package func status(of path: String) throws -> FileStatus? {
        locked {
            if let inode = files[path] { return Self.status(inode) }
            if directories.contains(path) {
                let permissions = directoryPermissions[path] ?? FilePermissions(mode: 0o755, owner: 0, group: 0)
                return FileStatus(device: 1, inode: UInt64(UInt(bitPattern: path.hashValue)) | 1 << 63, size: 0, modified: 0, permissions: permissions)
            }
            return nil
        }
    }

    package func setPermissions(of path: String, _ permissions: FilePermissions) throws {
        try locked {
            if let inode = files[path] { inode.permissions = permissions } else if directories.contains(path) {
                directoryPermissions[path] = permissions
            } else {
                throw SystemError(call: "chmod", path: path, errno: Self.noEntry)
            }
        }
    }

    /// The permissions a folder was given (`0o755` unless `setPermissions` set others).
    public func folderMode(_ path: String) -> UInt32? {
        locked { directories.contains(path) ? (directoryPermissions[path]?.mode ?? 0o755) : nil }
    }

    /// The mode of the file at `path`.
    public func fileMode(_ path: String) -> UInt32? { locked { files[path]?.permissions.mode } }

    /// Sets the mode of the file at `path`, as `chmod` would.
    public func setFileMode(_ path: String, _ mode: UInt32) { locked { files[path]?.permissions.mode = mode } }

    fileprivate static func status(_ inode: Inode) -> FileStatus {
        FileStatus(device: 1, inode: UInt64(inode.id), size: UInt64(inode.current.count), modified: inode.changes, permissions: inode.permissions)
    }

    fileprivate func status(_ inode: Inode) -> FileStatus { locked { Self.status(inode) } }

    fileprivate func setPermissions(_ inode: Inode, _ permissions: FilePermissions) { locked { inode.permissions = permissions } }

    package func rename(_ from: String, to: String) throws {
        try locked {
            guard let inode = files[from] else { throw SystemError(call: "rename", path: from, errno: Self.noEntry) }
            guard directories.contains(Self.parent(of: to)) else { throw SystemError(call: "rename", path: to, errno: Self.noEntry) }
            let decision = decide(.rename, path: from)
            if case .fail(let errno) = decision { throw SystemError(call: "rename", path: from, errno: errno) }
            files[from] = nil
            files[to] = inode
            pendingEntries.append(.rename(from: from, to: to, inode))
            if case .cutPower(let mode) = decision { throw powerOff(mode, call: "rename", path: from) }
        }
    }

    package func removeFile(_ path: String) throws {
        try locked {
            if directories.contains(path) { throw SystemError(call: "unlink", path: path, errno: Self.isDirectory) }
            guard files[path] != nil else { throw SystemError(call: "unlink", path: path, errno: Self.noEntry) }
            let decision = decide(.remove, path: path)
            if case .fail(let errno) = decision { throw SystemError(call: "unlink", path: path, errno: errno) }
            files[path] = nil
            pendingEntries.append(.unlink(path))
            if case .cutPower(let mode) = decision { throw powerOff(mode, call: "unlink", path: path) }
        }
    }

    package func createDirectory(_ path: String) throws {
        try locked {
            if directories.contains(path) { return }
            if files[path] != nil { throw SystemError(call: "mkdir", path: path, errno: Self.notDirectory) }
            guard directories.contains(Self.parent(of: path)) else { throw SystemError(call: "mkdir", path: path, errno: Self.noEntry) }
            let decision = decide(.createDirectory, path: path)
            if case .fail(let errno) = decision { throw SystemError(call: "mkdir", path: path, errno: errno) }
            directories.insert(path)
            pendingEntries.append(.makeDirectory(path))
            if case .cutPower(let mode) = decision { throw powerOff(mode, call: "mkdir", path: path) }
        }
    }

    package func listDirectory(_ path: String) throws -> [String] {
        try locked {
            guard directories.contains(path) else { throw SystemError(call: "opendir", path: path, errno: Self.noEntry) }
            let names = files.keys.filter { Self.parent(of: $0) == path } + directories.filter { $0 != path && Self.parent(of: $0) == path }
            return names.map { name in
                guard let slash = name.lastIndex(of: "/") else { return name }
                return String(name[name.index(after: slash)...])
            }.sorted()
        }
    }

    package func linkFile(_ existing: String, to newPath: String) throws {
        try locked {
            guard let inode = files[existing] else { throw SystemError(call: "link", path: existing, errno: Self.noEntry) }
            guard files[newPath] == nil, !directories.contains(newPath) else { throw SystemError(call: "link", path: newPath, errno: Self.exists) }
            guard directories.contains(Self.parent(of: newPath)) else { throw SystemError(call: "link", path: newPath, errno: Self.noEntry) }
            let decision = decide(.link, path: newPath)
            if case .fail(let errno) = decision { throw SystemError(call: "link", path: newPath, errno: errno) }
            files[newPath] = inode
            pendingEntries.append(.link(newPath, inode))
            if case .cutPower(let mode) = decision { throw powerOff(mode, call: "link", path: newPath) }
        }
    }

    package func removeDirectory(_ path: String) throws {
        try locked {
            guard directories.contains(path) else { throw SystemError(call: "rmdir", path: path, errno: Self.noEntry) }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            if files.keys.contains(where: { $0.hasPrefix(prefix) }) || directories.contains(where: { $0.hasPrefix(prefix) }) {
                throw SystemError(call: "rmdir", path: path, errno: Self.notEmpty)
            }
            let decision = decide(.removeDirectory, path: path)
            if case .fail(let errno) = decision { throw SystemError(call: "rmdir", path: path, errno: errno) }
            directories.remove(path)
            pendingEntries.append(.removeDirectory(path))
            if case .cutPower(let mode) = decision { throw powerOff(mode, call: "rmdir", path: path) }
        }
    }

    package func syncDirectory(_ path: String) throws {
        try locked {
            guard directories.contains(path) else { throw SystemError(call: "open", path: path, errno: Self.noEntry) }
            switch decide(.syncDirectory, path: path) {
            case .fail(let errno): throw SystemError(call: "fsync", path: path, errno: errno)
            case .cutPower(let mode): throw powerOff(mode, call: "fsync", path: path)
            case .proceed: break
            }
            var rest: [EntryChange] = []
            for change in pendingEntries {
                if change.folders.contains(path) {
                    Self.apply(change, files: &durableFiles, directories: &durableDirectories)
                } else {
                    rest.append(change)
                }
            }
            pendingEntries = rest
        }
    }

    // MARK: Called by open files (mutex not held)

    fileprivate func read(_ inode: Inode, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) -> Int {
        locked {
            absorbShared(inode)
            let start = Int(clamping: offset)
            guard start < inode.current.count else { return 0 }
            let n = min(buffer.count, inode.current.count - start)
            inode.current.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + n)]))
            }
            return n
        }
    }

    fileprivate func write(_ inode: Inode, path: String, _ bytes: [UInt8], at offset: Int) throws {
        try locked {
            switch decide(.write, path: path) {
            case .proceed:
                record(.write(offset: offset, bytes: bytes), in: inode)
            case .fail(let errno):
                if partialWrites && !poweredOff {
                    let half = (bytes.count / 2) / Self.sectorSize * Self.sectorSize
                    if half > 0 { record(.write(offset: offset, bytes: Array(bytes[..<half])), in: inode) }
                }
                throw SystemError(call: "pwrite", path: path, errno: errno)
            case .cutPower(let mode):
                record(.write(offset: offset, bytes: bytes), in: inode)
                throw powerOff(mode, call: "pwrite", path: path)
            }
        }
    }

    fileprivate func truncate(_ inode: Inode, path: String, to size: Int) throws {
        try locked {
            switch decide(.truncate, path: path) {
            case .proceed:
                record(.truncate(size), in: inode)
            case .fail(let errno):
                throw SystemError(call: "ftruncate", path: path, errno: errno)
            case .cutPower(let mode):
                record(.truncate(size), in: inode)
                throw powerOff(mode, call: "ftruncate", path: path)
            }
        }
    }

    /// What is stored through a shared mapping becomes the file's bytes (before a change of them).
    private func absorbShared(_ inode: Inode) {
        guard let shared = inode.shared else { return }
        let n = min(shared.count, inode.current.count)
        inode.current.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: shared.base, byteCount: n) }
    }

    private func record(_ change: FileChange, in inode: Inode) {
        absorbShared(inode)
        Self.apply(change, to: &inode.current)
        inode.changes += 1
        if let shared = inode.shared {
            let n = min(shared.count, inode.current.count)
            inode.current.withUnsafeBytes { shared.base.copyMemory(from: $0.baseAddress!, byteCount: n) }
        }
        inode.pending.append(change)
        inode.views.removeAll { $0.view == nil }
        for view in inode.views.compactMap(\.view) { view.show(change, size: inode.current.count) }
    }

    fileprivate func sync(_ inode: Inode, path: String, handle: Int) throws {
        try locked {
            if failedSyncHandles.contains(handle) { syncRetries += 1 }
            switch decide(.sync, path: path) {
            case .proceed:
                inode.durable = Self.applying(inode.pending, to: inode.durable)
                inode.pending = []
            case .fail(let errno):
                if syncLosesWrites && !poweredOff { inode.pending = [] }
                failedSyncHandles.insert(handle)
                throw SystemError(call: "fdatasync", path: path, errno: errno)
            case .cutPower(let mode):
                throw powerOff(mode, call: "fdatasync", path: path)
            }
        }
    }

    fileprivate func size(_ inode: Inode) -> UInt64 { locked { UInt64(inode.current.count) } }

    /// A byte-range lock: granted unless another handle holds an overlapping lock and either
    /// is exclusive. A handle's own locks in the range are replaced.
    fileprivate func lock(_ inode: Inode, handle: Int, range: Range<UInt64>, exclusive: Bool) -> Bool {
        locked {
            if Self.conflict(inode, handle: handle, range: range, exclusive: exclusive) != nil { return false }
            Self.removeLocks(inode, handle: handle, in: range)
            inode.locks.append((handle, range, exclusive))
            return true
        }
    }

    fileprivate func unlock(_ inode: Inode, handle: Int, range: Range<UInt64>?) {
        locked {
            if let range { Self.removeLocks(inode, handle: handle, in: range) } else { inode.locks.removeAll { $0.handle == handle } }
        }
    }

    fileprivate func conflictingLock(_ inode: Inode, handle: Int, range: Range<UInt64>, exclusive: Bool) -> UInt64? {
        locked { Self.conflict(inode, handle: handle, range: range, exclusive: exclusive) }
    }

    private static func conflict(_ inode: Inode, handle: Int, range: Range<UInt64>, exclusive: Bool) -> UInt64? {
        inode.locks.first { $0.handle != handle && $0.range.overlaps(range) && ($0.exclusive || exclusive) }?.range.lowerBound
    }

    /// Takes `range` out of a handle's locks (splitting a lock that covers more).
    private static func removeLocks(_ inode: Inode, handle: Int, in range: Range<UInt64>) {
        var kept: [(handle: Int, range: Range<UInt64>, exclusive: Bool)] = []
        for l in inode.locks {
            guard l.handle == handle, l.range.overlaps(range) else { kept.append(l); continue }
            if l.range.lowerBound < range.lowerBound { kept.append((handle, l.range.lowerBound..<range.lowerBound, l.exclusive)) }
            if l.range.upperBound > range.upperBound { kept.append((handle, range.upperBound..<l.range.upperBound, l.exclusive)) }
        }
        inode.locks = kept
    }

    /// The writable shared mapping of the file's first `length` bytes (one per file).
    fileprivate func mapShared(_ inode: Inode, path: String, length: Int) throws -> SimulatedSharedMapping {
        try locked {
            switch decide(.map, path: path) {
            case .proceed: break
            case .fail(let errno): throw SystemError(call: "mmap", path: path, errno: errno)
            case .cutPower(let mode): throw powerOff(mode, call: "mmap", path: path)
            }
            guard inode.current.count >= length else { throw SystemError(call: "mmap", path: path, errno: 22) }
            if let shared = inode.shared, shared.count >= length { return shared }
            absorbShared(inode)
            let shared = SimulatedSharedMapping(count: length)
            inode.current.withUnsafeBytes { shared.base.copyMemory(from: $0.baseAddress!, byteCount: length) }
            inode.shared = shared
            return shared
        }
    }

    /// A mapping of at least `minimumLength` bytes: a view of the file that sees every change.
    fileprivate func map(_ inode: Inode, path: String, length: Int, roomToGrow: Bool) throws -> SimulatedMapping {
        try locked {
            switch decide(.map, path: path) {
            case .proceed: break
            case .fail(let errno): throw SystemError(call: "mmap", path: path, errno: errno)
            case .cutPower(let mode): throw powerOff(mode, call: "mmap", path: path)
            }
            // Room to grow, as the real one leaves (a power of two, at least 64 KiB).
            var count = roomToGrow ? 64 * 1024 : Swift.max(length, 1)
            while count < length { count *= 2 }
            let view = SimulatedMapping(count: count)
            view.show(.write(offset: 0, bytes: inode.current), size: inode.current.count)
            inode.views.removeAll { $0.view == nil }
            inode.views.append(WeakView(view: view))
            return view
        }
    }
}

/// A simulated writable shared `mmap`: the file's first bytes, stored into directly.
final class SimulatedSharedMapping: SharedFileMapping, @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(count: Int) {
        self.count = count
        base = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: count)
    }

    deinit { base.deallocate() }
}

struct WeakView {
    weak var view: SimulatedMapping?
}

/// A simulated `mmap`: a buffer that the file system keeps equal to the file's bytes (zeros
/// past its end).
final class SimulatedMapping: FileMapping, @unchecked Sendable {
    // @unchecked: changed only under the file system's mutex, at offsets no reader reads
    // (the engine reads only committed bytes, and appends after them).
    let base: UnsafeRawPointer
    let count: Int
    private let buffer: UnsafeMutableRawPointer

    init(count: Int) {
        self.count = count
        buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: count)
        base = UnsafeRawPointer(buffer)
    }

    deinit { buffer.deallocate() }

    /// Shows a change of the file (now `size` bytes long).
    fileprivate func show(_ change: SimulatedFileSystem.FileChange, size: Int) {
        switch change {
        case .write(let offset, let bytes):
            guard offset < count else { return }
            let n = Swift.min(bytes.count, count - offset)
            bytes.withUnsafeBytes { (buffer + offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
        case .truncate:
            if size < count { (buffer + size).initializeMemory(as: UInt8.self, repeating: 0, count: count - size) }
        }
    }
}

/// An open simulated file. Closing it (or releasing it) releases its locks.
final class SimulatedFile: FileHandleIO, @unchecked Sendable {
    // @unchecked: `closed` is guarded by `closeLock`; the rest is immutable.
    private let fileSystem: SimulatedFileSystem
    private let inode: SimulatedFileSystem.Inode
    private let path: String
    private let readOnly: Bool
    private let id: Int
    private let closeLock = NSLock()
    private var closed = false

    init(fileSystem: SimulatedFileSystem, inode: SimulatedFileSystem.Inode, path: String, readOnly: Bool, id: Int) {
        self.fileSystem = fileSystem
        self.inode = inode
        self.path = path
        self.readOnly = readOnly
        self.id = id
    }

    deinit { close() }

    private var isClosed: Bool {
        closeLock.lock()
        defer { closeLock.unlock() }
        return closed
    }

    private func checkOpen(_ call: String, writing: Bool = false) throws {
        if isClosed || (writing && readOnly) {
            throw SystemError(call: call, path: path, errno: SimulatedFileSystem.badDescriptor)
        }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try checkOpen("pread")
        if buffer.count == 0 { return 0 }
        return fileSystem.read(inode, into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try checkOpen("pwrite", writing: true)
        if bytes.count == 0 { return }
        try fileSystem.write(inode, path: path, Array(bytes), at: Int(offset))
    }

    func sync() throws {
        try checkOpen("fdatasync")
        try fileSystem.sync(inode, path: path, handle: id)
    }

    func size() throws -> UInt64 {
        try checkOpen("fstat")
        return fileSystem.size(inode)
    }

    func truncate(to size: UInt64) throws {
        try checkOpen("ftruncate", writing: true)
        try fileSystem.truncate(inode, path: path, to: Int(size))
    }

    func status() throws -> FileStatus {
        try checkOpen("fstat")
        return fileSystem.status(inode)
    }

    func setPermissions(_ permissions: FilePermissions) throws {
        try checkOpen("fchmod")
        fileSystem.setPermissions(inode, permissions)
    }

    func map(length: Int, roomToGrow: Bool) throws -> any FileMapping {
        try checkOpen("mmap")
        return try fileSystem.map(inode, path: path, length: length, roomToGrow: roomToGrow)
    }

    func mapShared(length: Int) throws -> any SharedFileMapping {
        try checkOpen("mmap", writing: true)
        return try fileSystem.mapShared(inode, path: path, length: length)
    }

    func lock(_ range: Range<UInt64>, exclusive: Bool) throws -> Bool {
        try checkOpen("fcntl", writing: exclusive)
        return fileSystem.lock(inode, handle: id, range: range, exclusive: exclusive)
    }

    func unlock(_ range: Range<UInt64>) {
        fileSystem.unlock(inode, handle: id, range: range)
    }

    func conflictingLock(in range: Range<UInt64>, exclusive: Bool) throws -> UInt64? {
        try checkOpen("fcntl")
        return fileSystem.conflictingLock(inode, handle: id, range: range, exclusive: exclusive)
    }

    func close() {
        closeLock.lock()
        let wasOpen = !closed
        closed = true
        closeLock.unlock()
        if wasOpen { fileSystem.unlock(inode, handle: id, range: nil) }
    }
}
