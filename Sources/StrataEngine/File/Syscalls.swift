// Every system call the engine makes, wrapped once.
//
// This is the only file that imports Glibc. Each wrapper retries on EINTR and turns a
// failure into a `SystemError` that names the call, the path and errno.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which call, on which path, and the errno it returned.
public struct SystemError: Error, Sendable, CustomStringConvertible {
    /// The name of the system call, such as `pwrite` or `fdatasync`.
    public let call: String
    /// The file or directory the call was about.
    public let path: String
    /// The C `errno` value.
    public let errno: Int32

    public init(call: String, path: String, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// True when the failure means the disk (or quota) is full.
    public var isDiskFull: Bool { errno == ENOSPC || errno == EDQUOT }
    /// True when the file or folder may not be changed: its permissions, or a read-only mount.
    public var isWriteDenied: Bool { errno == EACCES || errno == EPERM || errno == EROFS }
    /// True when the path names a folder where a file was expected.
    public var pathIsAFolder: Bool { errno == EISDIR }
    /// True when the path (or a folder on it) does not exist.
    public var pathIsMissing: Bool { errno == ENOENT || errno == ENOTDIR }
    /// The system's words for `errno`, such as "Permission denied".
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        "\(call)(\(path)) failed: \(reason) (errno \(errno))"
    }

    /// The description without the path, for a message that names it already.
    public func description(omitting knownPath: String) -> String {
        knownPath == path ? "\(call) failed: \(reason) (errno \(errno))" : description
    }

    /// Errno values that tests and the simulated file system use by name.
    public static let noSpace: Int32 = ENOSPC
    public static let ioError: Int32 = EIO
    public static let badDescriptor: Int32 = EBADF
    public static let permissionDenied: Int32 = EACCES
    public static let isADirectory: Int32 = EISDIR
    public static let readOnlyFileSystem: Int32 = EROFS
}

enum Syscalls {
    /// Runs `body` until it does not fail with EINTR; throws `SystemError` on any other failure.
    @inline(__always)
    static func valueOrErrno<T: BinaryInteger>(
        _ call: String, _ path: String, retryOnInterrupt: Bool = true, _ body: () -> T
    ) throws(SystemError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if retryOnInterrupt && code == EINTR { continue }
            throw SystemError(call: call, path: path, errno: code)
        }
    }

    static func open(_ path: String, readOnly: Bool, create: Bool, mode: UInt32 = 0o644) throws(SystemError) -> Int32 {
        var flags = readOnly ? O_RDONLY : O_RDWR
        flags |= O_CLOEXEC
        if create { flags |= O_CREAT }
        return try valueOrErrno("open", path) { Glibc.open(path, flags, mode_t(mode)) }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)  // Linux closes the descriptor even when close reports EINTR.
    }

    /// Reads up to `buffer.count` bytes at `offset`; returns fewer only at end of file.
    static func pread(_ fd: Int32, _ path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let base = buffer.baseAddress! + done
            let n = try valueOrErrno("pread", path) {
                Glibc.pread(fd, base, buffer.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at `offset`.
    static func pwrite(_ fd: Int32, _ path: String, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let base = bytes.baseAddress! + done
            let n = try valueOrErrno("pwrite", path) {
                Glibc.pwrite(fd, base, bytes.count - done, off_t(offset) + off_t(done))
            }
            if n == 0 { throw SystemError(call: "pwrite", path: path, errno: EIO) }
            done += n
        }
    }

    static func fdatasync(_ fd: Int32, _ path: String) throws(SystemError) {
        // fsync failures are never retried: after a failed fsync the kernel may have dropped
        // the dirty pages, so a retry could report success for data that is gone.
        _ = try valueOrErrno("fdatasync", path, retryOnInterrupt: false) { Glibc.fdatasync(fd) }
    }

    static func fsync(_ fd: Int32, _ path: String) throws(SystemError) {
        _ = try valueOrErrno("fsync", path, retryOnInterrupt: false) { Glibc.fsync(fd) }
    }

    /// The size of an open file. Asked of `statx` without the times where it can be (see
    /// `identity`): `Store.info()` between two commits would otherwise cost the next one an
    /// inode write.
    static func fileSize(_ fd: Int32, _ path: String) throws(SystemError) -> UInt64 {
        #if os(Linux)
        if case .found(let fields) = try Statx.ask("", Statx.size, directory: fd, flags: Statx.emptyPath) { return fields.size }
        #endif
        var info = stat()
        _ = try valueOrErrno("fstat", path) { fstat(fd, &info) }
        return UInt64(info.st_size)
    }

    /// What `fstat` tells of an open file.
    static func status(_ fd: Int32, _ path: String) throws(SystemError) -> FileStatus {
        var info = stat()
        _ = try valueOrErrno("fstat", path) { fstat(fd, &info) }
        return status(info)
    }

    /// What `stat` tells of the file at `path`; nil when there is none.
    static func status(_ path: String) throws(SystemError) -> FileStatus? {
        var info = stat()
        // (`withCString` lends a native string's own bytes; passed as an argument, the path
        // was copied into an array for each call: every write transaction checks its path.)
        if path.withCString({ stat($0, &info) }) == 0 { return status(info) }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return nil }
        throw SystemError(call: "stat", path: path, errno: code)
    }

    /// Which file is at `path` (device and inode); nil when there is none. Asked of `statx` for
    /// the inode alone: since Linux 6.13 a file whose times were asked for (any `stat` or
    /// `fstat`) takes a fine-grained change time at its next write, so a write transaction that
    /// checked its path with `stat` changed the inode at every commit, and each commit's
    /// `fdatasync` wrote the inode as well as the data (about 50 µs more a commit on ext4 here;
    /// Docs/Durability.md, "The path check"). `stat` where `statx` is missing or refused.
    static func identity(_ path: String) throws(SystemError) -> FileIdentity? {
        #if os(Linux)
        try withoutTimes(path, Statx.inode, { FileIdentity(device: $0.device, inode: $0.inode) }, else: \.identity)
        #else
        try status(path)?.identity
        #endif
    }

    /// The mode, owner and group of the file at `path`; nil when there is none. Asked of
    /// `statx` without the times, as `identity` is: a blob file gets its store's permissions
    /// between two of the store's commits.
    static func permissions(_ path: String) throws(SystemError) -> FilePermissions? {
        #if os(Linux)
        try withoutTimes(path, Statx.modeAndOwners, { FilePermissions(mode: $0.mode & 0o7777, owner: $0.owner, group: $0.group) },
                         else: \.permissions)
        #else
        try status(path)?.permissions
        #endif
    }

    #if os(Linux)
    /// What `statx` tells of the file at `path` for `mask` (made into a `T` by `found`); nil when
    /// there is none; where `statx` is missing or refused, what `stat` tells (`fallback`).
    private static func withoutTimes<T>(_ path: String, _ mask: UInt32, _ found: (Statx.Fields) -> T,
                                        else fallback: (FileStatus) -> T) throws(SystemError) -> T? {
        switch try Statx.ask(path, mask) {
        case .found(let fields): return found(fields)
        case .none: return nil
        case .unavailable: return try status(path).map(fallback)
        }
    }

    /// glibc's `makedev`: how `stat` numbers a device from its major and minor numbers.
    static func makeDevice(major: UInt32, minor: UInt32) -> UInt64 {
        let major = UInt64(major), minor = UInt64(minor)
        return (major & 0xfff) << 8 | (major & 0xffff_f000) << 32 | (minor & 0xff) | (minor & 0xffff_ff00) << 12
    }

    /// `statx`, looked up when first used: Glibc's module does not declare it. Asked only for
    /// fields that are not times (see `identity`).
    enum Statx {
        typealias Function = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UInt32, UnsafeMutableRawPointer) -> Int32
        static let function: Function? = {
            guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "statx") else { return nil }
            return unsafeBitCast(symbol, to: Function.self)
        }()
        /// STATX_INO; STATX_SIZE; STATX_MODE, STATX_UID and STATX_GID.
        static let inode: UInt32 = 0x100
        static let size: UInt32 = 0x200
        static let modeAndOwners: UInt32 = 0x2 | 0x8 | 0x10
        /// AT_EMPTY_PATH: the descriptor itself.
        static let emptyPath: Int32 = 0x1000

        /// The fields of struct statx (linux/stat.h, 256 bytes) that are not times.
        struct Fields {
            var owner: UInt32, group: UInt32, mode: UInt32, inode: UInt64, size: UInt64, device: UInt64
        }

        enum Answer {
            case found(Fields)
            /// No file at the path.
            case none
            /// No `statx` (an old kernel or C library) or refused (a container's system-call
            /// filter): ask `stat`.
            case unavailable
        }

        /// `statx` of `path` (or, with `emptyPath`, of the open file `directory`) for `mask`.
        static func ask(_ path: String, _ mask: UInt32, directory: Int32 = AT_FDCWD, flags: Int32 = 0) throws(SystemError) -> Answer {
            guard let statx = function else { return .unavailable }
            let (code, fields) = withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { buffer -> (Int32, Fields?) in
                guard let base = buffer.baseAddress else { return (ENOSYS, nil) }
                while path.withCString({ statx(directory, $0, flags, mask, base) }) != 0 {
                    if errno != EINTR { return (errno, nil) }
                }
                // stx_mask at 0, stx_uid 20, stx_gid 24, stx_mode 28, stx_ino 32, stx_size 40,
                // stx_dev_major 136, stx_dev_minor 140.
                guard base.load(as: UInt32.self) & mask == mask else { return (ENOSYS, nil) }
                return (0, Fields(owner: base.load(fromByteOffset: 20, as: UInt32.self), group: base.load(fromByteOffset: 24, as: UInt32.self),
                                  mode: UInt32(base.load(fromByteOffset: 28, as: UInt16.self)),
                                  inode: base.load(fromByteOffset: 32, as: UInt64.self), size: base.load(fromByteOffset: 40, as: UInt64.self),
                                  device: makeDevice(major: base.load(fromByteOffset: 136, as: UInt32.self),
                                                     minor: base.load(fromByteOffset: 140, as: UInt32.self))))
            }
            if let fields { return .found(fields) }
            switch code {
            case ENOENT, ENOTDIR: return .none
            case ENOSYS, EPERM: return .unavailable
            default: throw SystemError(call: "statx", path: path, errno: code)
            }
        }
    }
    #endif

    private static func status(_ info: stat) -> FileStatus {
        FileStatus(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: UInt64(info.st_size),
                   modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                   permissions: FilePermissions(mode: UInt32(info.st_mode) & 0o7777, owner: info.st_uid, group: info.st_gid))
    }

    /// Gives an open file `permissions`: its owner and group first where this process may
    /// (`EPERM` leaves them, as `cp -p` does), then its mode (a change of owner clears set-id bits).
    static func setPermissions(_ fd: Int32, _ path: String, _ permissions: FilePermissions) throws(SystemError) {
        var info = stat()
        _ = try valueOrErrno("fstat", path) { fstat(fd, &info) }
        if info.st_uid != permissions.owner || info.st_gid != permissions.group {
            if fchown(fd, permissions.owner, permissions.group) != 0 {
                let code = errno
                guard code == EPERM else { throw SystemError(call: "fchown", path: path, errno: code) }
                // Not allowed to give the owner: a member of the group may still give the group.
                _ = fchown(fd, uid_t.max, permissions.group)
            }
        }
        _ = try valueOrErrno("fchmod", path) { fchmod(fd, mode_t(permissions.mode)) }
    }

    /// Gives the file or folder at `path` `permissions` (as the descriptor form does).
    static func setPermissions(_ path: String, _ permissions: FilePermissions) throws(SystemError) {
        let fd = try valueOrErrno("open", path) { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        try setPermissions(fd, path, permissions)
    }

    static func ftruncate(_ fd: Int32, _ path: String, _ size: UInt64) throws(SystemError) {
        _ = try valueOrErrno("ftruncate", path) { Glibc.ftruncate(fd, off_t(size)) }
    }

    // Byte-range locks of the open file description (Linux "OFD" locks, F_OFD_SETLK and
    // F_OFD_GETLK, which <fcntl.h> defines only with _GNU_SOURCE). They belong to the open
    // file, not to the process: two descriptors opened separately conflict even in one
    // process, and the kernel drops them when the file is closed or the process dies.
    private static let ofdGetLock: Int32 = 36
    private static let ofdSetLock: Int32 = 37

    private static func lockDescription(_ type: Int32, _ range: Range<UInt64>) -> flock {
        var l = flock()
        l.l_type = Int16(type)
        l.l_whence = Int16(SEEK_SET)
        l.l_start = off_t(clamping: range.lowerBound)
        l.l_len = off_t(clamping: range.upperBound - range.lowerBound)
        l.l_pid = 0
        return l
    }

    /// Takes a shared or exclusive lock on `range` without waiting; false when another open
    /// file holds a conflicting one.
    static func lock(_ fd: Int32, _ path: String, range: Range<UInt64>, exclusive: Bool) throws(SystemError) -> Bool {
        var l = lockDescription(exclusive ? F_WRLCK : F_RDLCK, range)
        while true {
            let result = withUnsafeMutablePointer(to: &l) { fcntl(fd, ofdSetLock, UnsafeMutableRawPointer($0)) }
            if result == 0 { return true }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EACCES { return false }
            throw SystemError(call: "fcntl(F_OFD_SETLK)", path: path, errno: code)
        }
    }

    static func unlock(_ fd: Int32, range: Range<UInt64>) {
        var l = lockDescription(F_UNLCK, range)
        while withUnsafeMutablePointer(to: &l, { fcntl(fd, ofdSetLock, UnsafeMutableRawPointer($0)) }) != 0 && errno == EINTR {}
    }

    /// The start of a lock that another open file holds on `range` and that would conflict
    /// with a lock of this kind; nil when there is none.
    static func conflictingLock(_ fd: Int32, _ path: String, range: Range<UInt64>, exclusive: Bool) throws(SystemError) -> UInt64? {
        var l = lockDescription(exclusive ? F_WRLCK : F_RDLCK, range)
        _ = try valueOrErrno("fcntl(F_OFD_GETLK)", path) { withUnsafeMutablePointer(to: &l) { fcntl(fd, ofdGetLock, UnsafeMutableRawPointer($0)) } }
        return l.l_type == Int16(F_UNLCK) ? nil : UInt64(clamping: l.l_start)
    }

    // MARK: Memory maps

    /// Maps `length` bytes of the file read-only and shared: the kernel's page cache, not a copy.
    /// The file may be shorter than `length`; pages past its end must not be touched.
    /// With `populate`, the pages are mapped at once (for a file read whole right away).
    static func map(_ fd: Int32, _ path: String, length: Int, populate: Bool = false) throws(SystemError) -> UnsafeRawPointer {
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0), address != MAP_FAILED else {
            throw SystemError(call: "mmap", path: path, errno: errno)
        }
        return UnsafeRawPointer(address)
    }

    /// Maps `length` bytes of the file for reading and writing, shared.
    static func mapShared(_ fd: Int32, _ path: String, length: Int) throws(SystemError) -> UnsafeMutableRawPointer {
        guard let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), address != MAP_FAILED else {
            throw SystemError(call: "mmap", path: path, errno: errno)
        }
        return address
    }

    static func unmap(_ address: UnsafeRawPointer, length: Int) {
        _ = munmap(UnsafeMutableRawPointer(mutating: address), length)
    }

    /// Zeroed memory that costs nothing until it is written (an anonymous mapping), for large
    /// sparse tables; nil when the address space is exhausted.
    static func allocateZeroed(_ length: Int) -> UnsafeMutableRawPointer? {
        guard let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              address != MAP_FAILED else { return nil }
        return address
    }

    static func releaseZeroed(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = munmap(address, length)
    }

    static func rename(_ from: String, _ to: String) throws(SystemError) {
        _ = try valueOrErrno("rename", from) { Glibc.rename(from, to) }
    }

    static func unlink(_ path: String) throws(SystemError) {
        _ = try valueOrErrno("unlink", path) { Glibc.unlink(path) }
    }

    static func link(_ existing: String, _ newPath: String) throws(SystemError) {
        _ = try valueOrErrno("link", newPath) { Glibc.link(existing, newPath) }
    }

    static func rmdir(_ path: String) throws(SystemError) {
        _ = try valueOrErrno("rmdir", path) { Glibc.rmdir(path) }
    }

    static func mkdir(_ path: String) throws(SystemError) {
        if Glibc.mkdir(path, 0o755) == 0 { return }
        let code = errno
        if code == EEXIST { return }
        throw SystemError(call: "mkdir", path: path, errno: code)
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Opens a directory and fsyncs it, so that a rename or a new file in it is durable.
    static func syncDirectory(_ path: String) throws(SystemError) {
        let fd = try valueOrErrno("open", path) { Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        try fsync(fd, path)
    }

    static func listDirectory(_ path: String) throws(SystemError) -> [String] {
        guard let dir = opendir(path) else { throw SystemError(call: "opendir", path: path, errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        // Read the name in place: an entry is only as long as its name, so copying a whole
        // `dirent` (entry.pointee) may read past the end of readdir's buffer, and fault.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        while let entry = readdir(dir) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// The process's peak resident set size in kilobytes.
    static func peakResidentKilobytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
    }

    static func errorDescription(_ code: Int32) -> String { String(cString: strerror(code)) }
}
