// The fault seam: the engine does all of its I/O through these small protocols.
//
// `DiskFileSystem` is the real one. Tests swap in a simulated file system that can fail the
// Nth write, sync, rename or map, or "lose power" by dropping or tearing unsynced bytes; its
// mappings are views of its in-memory bytes, so the mapped read path is tried too.

/// An open file, as the engine uses it: positional reads and writes, sync, size, truncate,
/// a read-only mapping, and byte-range locks.
package protocol FileHandleIO: AnyObject, Sendable {
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (fewer only at end of file).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int
    /// Writes all of `bytes` at `offset`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws
    /// Makes every write so far durable (fdatasync).
    func sync() throws
    /// The file's current size in bytes.
    func size() throws -> UInt64
    /// Cuts the file to `size` bytes.
    func truncate(to size: UInt64) throws
    /// Maps the file read-only and shared: `length` bytes, or (with `roomToGrow`) at least
    /// that many, leaving room for a file that grows. The mapping may be longer than the file:
    /// bytes past its end must not be read. Writes to the file show in the mapping at once.
    func map(length: Int, roomToGrow: Bool) throws -> any FileMapping
    /// Maps the first `length` bytes of the file (which must be at least that long) for
    /// reading and writing, shared: stores into it are writes to the file, seen at once by
    /// reads of it, here and in other processes (the lock file's published commit).
    func mapShared(length: Int) throws -> any SharedFileMapping
    /// Takes a lock on a byte range without waiting; false when another open file holds a
    /// conflicting one. Locks belong to this open file (not to the process) and go when it
    /// is closed or its process dies. The range may lie past the end of the file.
    func lock(_ range: Range<UInt64>, exclusive: Bool) throws -> Bool
    /// Releases this open file's locks in `range`.
    func unlock(_ range: Range<UInt64>)
    /// The start of a lock in `range` held by another open file that conflicts with a lock of
    /// this kind; nil when there is none.
    func conflictingLock(in range: Range<UInt64>, exclusive: Bool) throws -> UInt64?
    /// Closes the file (and so releases its locks). Mappings stay valid until released.
    func close()
    /// What `fstat` tells of the open file.
    func status() throws -> FileStatus
    /// Gives the file the mode of `permissions`, and its owner and group where this process
    /// may (an owner it may not give is left as it is).
    func setPermissions(_ permissions: FilePermissions) throws
}

/// A file's permission bits, owner and group.
package struct FilePermissions: Equatable, Sendable {
    /// The permission bits (`0o7777` at most), such as `0o600`.
    package var mode: UInt32
    package var owner: UInt32
    package var group: UInt32

    package init(mode: UInt32, owner: UInt32, group: UInt32) {
        self.mode = mode
        self.owner = owner
        self.group = group
    }

    /// The same, for a folder: each class that may read may also search (`0o640` gives `0o750`).
    package var forFolder: FilePermissions {
        var folder = self
        folder.mode |= (mode & 0o444) >> 2
        return folder
    }
}

/// What `stat` tells of a file: which file it is (device and inode), its size, when its bytes
/// last changed, and its permissions.
package struct FileStatus: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: UInt64
    /// The last change of the file's bytes, in nanoseconds since 1970.
    package var modified: Int64
    package var permissions: FilePermissions

    package init(device: UInt64, inode: UInt64, size: UInt64, modified: Int64, permissions: FilePermissions) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.permissions = permissions
    }

    /// True when both name one file (the same device and inode), whatever its size or times.
    package func isSameFile(as other: FileStatus) -> Bool { identity == other.identity }

    /// Which file this is.
    package var identity: FileIdentity { FileIdentity(device: device, inode: inode) }
}

/// Which file a path names: its device and inode, and nothing that changes as it is written.
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64

    package init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// A read-only view of a file's bytes, valid until the object is released.
package protocol FileMapping: AnyObject, Sendable {
    /// The first byte of the file.
    var base: UnsafeRawPointer { get }
    /// How many bytes are mapped (the file may end before).
    var count: Int { get }
}

/// A writable shared view of a file's first bytes, valid until the object is released.
package protocol SharedFileMapping: AnyObject, Sendable {
    var base: UnsafeMutableRawPointer { get }
    var count: Int { get }
}

/// A file system for a store's I/O, as the object layer's public fault-injection SPI passes it
/// (`@_spi(FaultInjection)`): the seam itself (`FileSystem`) stays inside the package.
public struct AnyFileSystem: Sendable {
    package let base: any FileSystem
    package init(_ base: any FileSystem) { self.base = base }
}

/// The directory-level operations the engine needs.
package protocol FileSystem: Sendable {
    func openFile(_ path: String, readOnly: Bool, create: Bool) throws -> any FileHandleIO
    /// `openFile`, creating a missing file with `mode` (less the umask) rather than `0o644`.
    func openFile(_ path: String, readOnly: Bool, create: Bool, mode: UInt32) throws -> any FileHandleIO
    func fileExists(_ path: String) -> Bool
    func isDirectory(_ path: String) -> Bool
    func rename(_ from: String, to: String) throws
    func removeFile(_ path: String) throws
    func createDirectory(_ path: String) throws
    func listDirectory(_ path: String) throws -> [String]
    /// Gives the file at `existing` a second name, `newPath` (a hard link; fails if `newPath` exists).
    func linkFile(_ existing: String, to newPath: String) throws
    /// Removes an empty directory.
    func removeDirectory(_ path: String) throws
    /// Makes renames and new or removed entries in the directory durable.
    func syncDirectory(_ path: String) throws
    /// What `stat` tells of the file at `path` (following symbolic links); nil when there is none.
    func status(of path: String) throws -> FileStatus?
    /// Which file `path` names (following symbolic links), without asking for its times; nil
    /// when there is none. A write transaction asks this of its store's path: asking for a
    /// file's times made each of its commits' `fdatasync` write the inode too (see
    /// `Syscalls.identity`).
    func identity(of path: String) throws -> FileIdentity?
    /// The mode, owner and group of the file at `path`, without asking for its times (see
    /// `identity(of:)`); nil when there is none.
    func permissions(of path: String) throws -> FilePermissions?
    /// Gives the file or folder at `path` the mode of `permissions`, and its owner and group
    /// where this process may.
    func setPermissions(of path: String, _ permissions: FilePermissions) throws
}

extension FileSystem {
    /// `status(of:)`'s device and inode: for file systems whose `stat` changes nothing.
    package func identity(of path: String) throws -> FileIdentity? { try status(of: path)?.identity }
    /// `status(of:)`'s permissions: for file systems whose `stat` changes nothing.
    package func permissions(of path: String) throws -> FilePermissions? { try status(of: path)?.permissions }

    /// Creates (or, left by an interrupted run, opens and empties) a file that takes the place of
    /// `original` or belongs to it (a compacted copy, a blob, a lock file): it gets the
    /// original's mode, owner and group, and is readable by nobody else before it has them.
    /// Without an original it is created as a new store is (`0o644` less the umask).
    package func createFile(_ path: String, permissionsOf original: String) throws -> any FileHandleIO {
        if let permissions = try permissions(of: original) { return try createFile(path, permissions: permissions) }
        let io = try openFile(path, readOnly: false, create: true)
        do { try io.truncate(to: 0) } catch {
            io.close()
            throw error
        }
        return io
    }

    /// Creates a file with `permissions` (see `createFile(_:permissionsOf:)`).
    package func createFile(_ path: String, permissions: FilePermissions) throws -> any FileHandleIO {
        let io = try openFile(path, readOnly: false, create: true, mode: 0o600)
        do {
            try io.truncate(to: 0)
            try io.setPermissions(permissions)
            return io
        } catch {
            io.close()
            throw error
        }
    }

    /// Creates the folder at `path` (if missing) with the permissions of the file at `original`,
    /// searchable by whoever may read that file.
    package func createDirectory(_ path: String, permissionsOf original: String) throws {
        let existed = isDirectory(path)
        try createDirectory(path)
        if !existed, let permissions = try permissions(of: original) { try setPermissions(of: path, permissions.forFolder) }
    }
}

extension FileHandleIO {
    /// Reads exactly `count` bytes at `offset`, or fewer if the file ends first.
    func read(count: Int, at offset: UInt64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let n = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        if n < count { bytes.removeLast(count - n) }
        return bytes
    }

    func write(_ bytes: [UInt8], at offset: UInt64) throws {
        try bytes.withUnsafeBytes { try write($0, at: offset) }
    }
}

/// The real file system, through `Syscalls`.
package struct DiskFileSystem: FileSystem {
    package init() {}

    package func openFile(_ path: String, readOnly: Bool, create: Bool) throws -> any FileHandleIO {
        try openFile(path, readOnly: readOnly, create: create, mode: 0o644)
    }

    package func openFile(_ path: String, readOnly: Bool, create: Bool, mode: UInt32) throws -> any FileHandleIO {
        let fd = try Syscalls.open(path, readOnly: readOnly, create: create, mode: mode)
        return DiskFile(fd: fd, path: path)
    }

    package func fileExists(_ path: String) -> Bool { Syscalls.exists(path) }
    package func isDirectory(_ path: String) -> Bool { Syscalls.isDirectory(path) }
    package func rename(_ from: String, to: String) throws { try Syscalls.rename(from, to) }
    package func removeFile(_ path: String) throws { try Syscalls.unlink(path) }
    package func createDirectory(_ path: String) throws { try Syscalls.mkdir(path) }
    package func listDirectory(_ path: String) throws -> [String] { try Syscalls.listDirectory(path) }
    package func linkFile(_ existing: String, to newPath: String) throws { try Syscalls.link(existing, newPath) }
    package func removeDirectory(_ path: String) throws { try Syscalls.rmdir(path) }
    package func syncDirectory(_ path: String) throws { try Syscalls.syncDirectory(path) }
    package func status(of path: String) throws -> FileStatus? { try Syscalls.status(path) }
    package func identity(of path: String) throws -> FileIdentity? { try Syscalls.identity(path) }
    package func permissions(of path: String) throws -> FilePermissions? { try Syscalls.permissions(path) }
    package func setPermissions(of path: String, _ permissions: FilePermissions) throws { try Syscalls.setPermissions(path, permissions) }
}

/// A file descriptor. Immutable after creation; closing is guarded so it happens once.
final class DiskFile: FileHandleIO, @unchecked Sendable {
    let fd: Int32
    let path: String
    private let closed = Flag()

    /// Mappings reserve address space, not memory: a mapping with room to grow covers at least
    /// 1 GiB, and twice what is asked, so that a growing file is remapped rarely (old mappings
    /// stay valid for the snapshots that use them).
    static let smallestMapping = 1 << 30

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close() }

    /// A closed descriptor's number may already belong to another file: never use it.
    private func checkOpen(_ call: String) throws {
        if closed.isSet { throw SystemError(call: call, path: path, errno: SystemError.badDescriptor) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try checkOpen("pread")
        if buffer.count == 0 { return 0 }
        return try Syscalls.pread(fd, path, into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try checkOpen("pwrite")
        if bytes.count == 0 { return }
        try Syscalls.pwrite(fd, path, bytes, at: offset)
    }

    func sync() throws { try checkOpen("fdatasync"); try Syscalls.fdatasync(fd, path) }
    func size() throws -> UInt64 { try checkOpen("fstat"); return try Syscalls.fileSize(fd, path) }
    func truncate(to size: UInt64) throws { try checkOpen("ftruncate"); try Syscalls.ftruncate(fd, path, size) }
    func status() throws -> FileStatus { try checkOpen("fstat"); return try Syscalls.status(fd, path) }
    func setPermissions(_ permissions: FilePermissions) throws { try checkOpen("fchmod"); try Syscalls.setPermissions(fd, path, permissions) }

    func map(length wanted: Int, roomToGrow: Bool) throws -> any FileMapping {
        try checkOpen("mmap")
        var length = Swift.max(wanted, 1)
        if roomToGrow {
            let (doubled, overflow) = wanted.multipliedReportingOverflow(by: 2)
            length = Swift.max(DiskFile.smallestMapping, overflow ? wanted : doubled)
        }
        // A mapping without room to grow is of a file read whole at once (a blob): its pages are
        // mapped in one go rather than one fault at a time.
        return DiskMapping(base: try Syscalls.map(fd, path, length: length, populate: !roomToGrow), count: length)
    }

    func mapShared(length: Int) throws -> any SharedFileMapping {
        try checkOpen("mmap")
        let base = try Syscalls.mapShared(fd, path, length: length)
        return DiskSharedMapping(base: base, count: length)
    }

    func lock(_ range: Range<UInt64>, exclusive: Bool) throws -> Bool {
        try checkOpen("fcntl")
        return try Syscalls.lock(fd, path, range: range, exclusive: exclusive)
    }

    func unlock(_ range: Range<UInt64>) { if !closed.isSet { Syscalls.unlock(fd, range: range) } }

    func conflictingLock(in range: Range<UInt64>, exclusive: Bool) throws -> UInt64? {
        try checkOpen("fcntl")
        return try Syscalls.conflictingLock(fd, path, range: range, exclusive: exclusive)
    }

    func close() {
        if closed.setOnce() { Syscalls.close(fd) }
    }
}

/// An `mmap` of a file, unmapped when released.
final class DiskMapping: FileMapping, @unchecked Sendable {
    // @unchecked: immutable; the bytes it points to are only read.
    let base: UnsafeRawPointer
    let count: Int

    init(base: UnsafeRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { Syscalls.unmap(base, length: count) }
}

/// A writable shared `mmap`, unmapped when released.
final class DiskSharedMapping: SharedFileMapping, @unchecked Sendable {
    // @unchecked: the pointer is immutable; what is stored through it is the owner's business.
    let base: UnsafeMutableRawPointer
    let count: Int

    init(base: UnsafeMutableRawPointer, count: Int) {
        self.base = base
        self.count = count
    }

    deinit { Syscalls.unmap(UnsafeRawPointer(base), length: count) }
}
