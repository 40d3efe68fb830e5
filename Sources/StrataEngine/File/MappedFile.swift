import Synchronization

/// Which pages (or, in a second set, value frames) of a mapped file this process has checked:
/// one bit per 16-byte granule, set the first time the page starting there passes its checks.
/// Committed bytes never change, so a checked page stays checked. Pages and frames start at
/// multiples of 16 (`PageLayout.alignment`; a pointer that is not is refused before the bits
/// are looked at), so a bit names exactly one page.
///
/// The bits live in an anonymous mapping that costs memory only where it is written: a
/// megabyte of file read costs 8 KiB of bits.
final class VerifiedPages: @unchecked Sendable {
    // @unchecked: the words are only touched through atomic operations.
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private let raw: UnsafeMutableRawPointer
    private let byteCount: Int
    /// How many bytes of the file the bits cover.
    let coverage: UInt64

    static let granuleShift: UInt64 = 4

    init?(covering length: Int) {
        let bits = (length >> Int(Self.granuleShift)) + 1
        byteCount = ((bits + 63) / 64) * 8
        guard let memory = Syscalls.allocateZeroed(byteCount) else { return nil }
        raw = memory
        words = memory.bindMemory(to: Atomic<UInt64>.self, capacity: byteCount / 8)
        coverage = UInt64(length)
    }

    deinit { Syscalls.releaseZeroed(raw, length: byteCount) }

    @inline(__always)
    func contains(_ offset: UInt64) -> Bool {
        let granule = offset >> Self.granuleShift
        return words[Int(granule >> 6)].load(ordering: .relaxed) & (1 << (granule & 63)) != 0
    }

    @inline(__always)
    func insert(_ offset: UInt64) {
        let granule = offset >> Self.granuleShift
        words[Int(granule >> 6)].bitwiseOr(1 << (granule & 63), ordering: .relaxed)
    }
}

/// One mapping of a store file, with the record of which of its pages this process checked.
/// Snapshots keep the mapping they began on; a growing file gets a longer one (`StoreFile`).
final class MappedFile: @unchecked Sendable {
    // @unchecked: immutable; the mapped bytes are only read, and `verified` is atomic.
    let mapping: any FileMapping
    let base: UnsafeRawPointer
    let count: Int
    let verified: VerifiedPages
    /// The value frames checked, apart from the pages: a page pointer to a checked frame (or
    /// the reverse, in a damaged file) must not pass for checked.
    let verifiedFrames: VerifiedPages
    let counters: Counters
    let path: String

    init(mapping: any FileMapping, counters: Counters, path: String) throws {
        self.mapping = mapping
        base = mapping.base
        count = mapping.count
        guard let verified = VerifiedPages(covering: mapping.count), let frames = VerifiedPages(covering: mapping.count) else {
            throw StoreError(.ioFailure, "There is no address space left to map the store file; close other stores or processes.", path: path)
        }
        self.verified = verified
        self.verifiedFrames = frames
        self.counters = counters
        self.path = path
    }

    /// The page at `offset`, checked (the first time) and lying before `limit`.
    @inline(__always)
    func page(at offset: UInt64, limit: UInt64) throws -> PageView {
        guard offset >= UInt64(FileHeader.size), offset < limit, limit - offset >= UInt64(PageLayout.minimumSize),
              limit <= UInt64(count), offset % UInt64(PageLayout.alignment) == 0 else {
            throw StoreError.corrupt("a page pointer (\(offset)) points outside the commit being read", path: path, offset: offset)
        }
        let start = base + Int(offset)
        if !verified.contains(offset) {
            let length = Int(UInt16(littleEndian: start.loadUnaligned(fromByteOffset: 4, as: UInt16.self)))
            guard UInt64(length) <= limit - offset, PageLayout.check(start, length: length, offset: offset) else {
                throw StoreError.corrupt("the page at byte \(offset) fails its checksum or is malformed", path: path, offset: offset)
            }
            counters.pagesRead.add(1, ordering: .relaxed)
            verified.insert(offset)
        }
        return PageView(start)
    }

    /// The payload of the value frame at `offset` (`length` bytes, header included), checked
    /// the first time and lying before `limit`.
    func frame(at offset: UInt64, length: Int, limit: UInt64) throws -> UnsafeRawBufferPointer {
        guard offset >= UInt64(FileHeader.size), offset <= limit, UInt64(length) <= limit - offset, limit <= UInt64(count),
              length >= ValueFrame.headerSize, offset % UInt64(PageLayout.alignment) == 0 else {
            throw StoreError.corrupt("a value pointer (\(length) bytes at \(offset)) points outside the commit being read", path: path, offset: offset)
        }
        let bytes = UnsafeRawBufferPointer(start: base + Int(offset), count: length)
        if !verifiedFrames.contains(offset) {
            guard ValueFrame.check(bytes) else {
                throw StoreError.corrupt("the value at byte \(offset) fails its checksum", path: path, offset: offset)
            }
            counters.blocksRead.add(1, ordering: .relaxed)
            verifiedFrames.insert(offset)
        }
        return UnsafeRawBufferPointer(rebasing: bytes[ValueFrame.headerSize...])
    }

    /// Bytes of the file, without checks (the caller checks them): for recovery and verify.
    func bytes(at offset: UInt64, count length: Int, limit: UInt64) throws -> UnsafeRawBufferPointer {
        guard offset <= limit, UInt64(length) <= limit - offset, limit <= UInt64(count) else {
            throw StoreError.corrupt("\(length) bytes at \(offset) lie outside the commit being read", path: path, offset: offset)
        }
        return UnsafeRawBufferPointer(start: base + Int(offset), count: length)
    }
}

/// A value too long for a leaf, kept in the file on its own (Docs/FileFormat.md, "Value frame"):
/// `[u32 checksum of bytes 4..<length][u32 length][payload]`.
enum ValueFrame {
    static let headerSize = 8
    static let maximumLength = (1 << 30) + headerSize

    static func encode(_ payload: UnsafeRawBufferPointer) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(headerSize + payload.count)
        b.appendLE(UInt32(0))
        b.appendLE(UInt32(headerSize + payload.count))
        b.append(contentsOf: payload)
        let sum = b.withUnsafeBytes { Checksum.short(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        b.storeLE(sum, at: 0)
        return b
    }

    static func check(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= headerSize, Int(bytes.loadLE32(4)) == bytes.count else { return false }
        return bytes.loadLE32(0) == Checksum.short(UnsafeRawBufferPointer(rebasing: bytes[4...]))
    }
}

/// Where a value frame lies: `[u64 offset][u32 length]` in the leaf that refers to it.
struct ValueLocation: Hashable {
    var offset: UInt64
    var length: UInt32

    static let encodedSize = 12

    func encode(into b: inout [UInt8]) {
        b.appendLE(offset)
        b.appendLE(length)
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> ValueLocation? {
        guard raw.count == encodedSize else { return nil }
        return ValueLocation(offset: raw.loadLE64(0), length: raw.loadLE32(8))
    }
}
