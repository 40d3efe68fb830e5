// The fault seam: the engine does all of its I/O through these two small protocols.
//
// `DiskFileSystem` is the real one. Tests swap in a simulated file system that can fail the
// Nth write, sync or rename, or "lose power" by dropping or tearing unsynced bytes.

/// An open file, as the engine uses it: positional reads and writes, sync, size, truncate, lock.
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
    /// Takes an advisory whole-file lock without waiting; false when another process holds it.
    func lock(exclusive: Bool) throws -> Bool
    /// Releases the lock; the file stays open for reading.
    func unlock()
    /// Closes the file (and so releases its lock).
    func close()
}

/// The directory-level operations the engine needs.
package protocol FileSystem: Sendable {
    func openFile(_ path: String, readOnly: Bool, create: Bool) throws -> any FileHandleIO
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
        let fd = try Syscalls.open(path, readOnly: readOnly, create: create)
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
}

/// A file descriptor. Immutable after creation; closing is guarded so it happens once.
final class DiskFile: FileHandleIO, @unchecked Sendable {
    let fd: Int32
    let path: String
    private let closed = Flag()

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close() }

    /// A closed descriptor's number may already belong to another file: never use it.
    private func checkOpen() throws {
        if closed.isSet { throw SystemError(call: "read", path: path, errno: SystemError.badDescriptor) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        try checkOpen()
        if buffer.count == 0 { return 0 }
        return try Syscalls.pread(fd, path, into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws {
        try checkOpen()
        if bytes.count == 0 { return }
        try Syscalls.pwrite(fd, path, bytes, at: offset)
    }

    func sync() throws { try checkOpen(); try Syscalls.fdatasync(fd, path) }
    func size() throws -> UInt64 { try checkOpen(); return try Syscalls.fileSize(fd, path) }
    func truncate(to size: UInt64) throws { try checkOpen(); try Syscalls.ftruncate(fd, path, size) }
    func lock(exclusive: Bool) throws -> Bool { try Syscalls.lock(fd, path, exclusive: exclusive) }
    func unlock() { if !closed.isSet { Syscalls.unlock(fd) } }

    func close() {
        if closed.setOnce() { Syscalls.close(fd) }
    }
}
