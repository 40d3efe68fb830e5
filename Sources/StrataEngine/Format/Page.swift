// A page of the B+tree, read in place: in the mapped file (a written page) or in the buffer
// of a node a write transaction changes (a dirty page, the same layout with room to grow).
//
//   0      u32  checksum: low 32 bits of XXH64 of bytes 4..<length (0 in a dirty page)
//   4      u16  length of the page
//   6      u8   kind: 1 leaf, 2 branch, 3 packed leaf
//   7      u8   p, length of the prefix every key of the page starts with
//   8      u16  n, number of cells (at least 1)
//   10     p    the prefix
//   10+p   2n   slots: u16 offset of each cell from the page's start, in key order
//   ...         cells, anywhere after the slots
//
// Leaf cell:   varint k (suffix length), varint (value length << 2 | flags), suffix, value
// Packed leaf: after the prefix, u8 shape and u16 w; each slot's low 14 bits are its cell's
//              offset, its top 2 bits the value's flags; cells lie back to back in slot order,
//              the last one ending at the page's length, so a cell's length says where it ends.
//              Shape 0: varint k, suffix, value; shape 1: every suffix is w bytes; shape 2:
//              every value is w bytes (then the suffix is the rest). A compacted index or row
//              leaf then spends 2 bytes a cell on its slot and nothing else.
// Branch cell: varint k, suffix, u64 LE child page offset
// A key is the prefix followed by its cell's suffix. In a branch, child i holds the keys in
// [key i, key i+1); key 0 is not compared (it means "lowest") and is written empty, and the
// prefix is the common prefix of keys 1..<n. Docs/FileFormat.md ("Page") gives examples.
//
// This file holds the layout and its writing (`PageHeaderWriter`, `PageLayout.makePage`);
// PageView.swift reads a page, Page+Check.swift checks one before it is read, Varint.swift
// holds the varints of its cells.

enum PageLayout {
    static let headerSize = 10
    /// Where each header field lies (the table above): `PageHeaderWriter` writes them,
    /// `PageView` reads them.
    static let checksumOffset = 0
    static let lengthOffset = 4
    static let kindOffset = 6
    static let prefixLengthOffset = 7
    static let countOffset = 8
    /// Pages are at least this long (padded with zeros).
    static let minimumSize = 16
    /// Every page and value frame starts at a multiple of this in the file (zeros before it),
    /// so that one bit per 16 bytes can say which were checked (`VerifiedPages`), and a
    /// pointer into the middle of a checked page is refused at once.
    static let alignment = 16
    static let maximumSize = 65_535
    static let kindLeaf: UInt8 = 1
    static let kindBranch: UInt8 = 2
    static let kindPackedLeaf: UInt8 = 3
    /// A packed leaf's shape, u8 at `headerSize + p`, then its u16 `w`.
    static let packedShapeVarint: UInt8 = 0
    static let packedShapeFixedSuffix: UInt8 = 1
    static let packedShapeFixedValue: UInt8 = 2
    static let packedExtraHeader = 3
    /// A packed leaf's slots keep offsets in 14 bits: it is at most this long.
    static let packedMaximumSize = 0x3FFF
    /// A node splits when its page would pass this size: rows and the system tree.
    static let targetSize = 4096
    /// The same for index trees: their cells are small, and a commit that adds a row rewrites
    /// one leaf of each index, so smaller leaves mean fewer bytes per commit (and, with as
    /// many levels at a million entries, no more page reads per lookup).
    static let indexTargetSize = 2048

    static func targetSize(of tree: TreeID) -> Int {
        if case .index = tree { return indexTargetSize }
        return targetSize
    }
    static let childReferenceSize = 8
    /// The most bytes a leaf keeps a value in; longer values go to value frames.
    static let inlineValueLimit = 1024
    /// The longest tree key a writer makes: an index key and its row suffix.
    static let maximumKeyLength = 2048
    /// The longest index key `put` takes: with a non-unique entry's row suffix it is at most
    /// `maximumKeyLength`. (Index keys of any length have a stored form this long at most,
    /// `KeyEncoding.storedForm`.)
    static let maximumIndexKeyLength = maximumKeyLength - TreeKey.maximumRowSuffix
}

extension PageLayout {
    /// The checksum of a page of `length` bytes at `base`: what its first 4 bytes hold once it
    /// is written (the low 32 bits of XXH64 of the bytes after them).
    @inline(__always)
    static func checksum(_ base: UnsafeRawPointer, length: Int) -> UInt32 {
        Checksum.short(UnsafeRawBufferPointer(start: base + 4, count: length - 4))
    }

    /// A page of `length` bytes made in `page`, written where it will lie: `write` sets every
    /// byte after the checksum (its header through `PageHeaderWriter`), then the checksum is
    /// stamped. `page` ends up holding exactly the page's bytes. Its storage is reused when it
    /// has room (a transaction's scratch page, page after page): a new array for each page
    /// went through the runtime's unspecialized allocation, a type metadata lookup and a
    /// `malloc` each (W2, Docs/Benchmarks.md, "Costs").
    @inline(__always)
    static func makePage(into page: inout [UInt8], length: Int, _ write: (UnsafeMutableRawPointer) -> Void) {
        if page.capacity < length {
            // (Room for a usual page at once, so that the next ones fit.)
            var grown: [UInt8] = []
            grown.reserveCapacity(Swift.max(length, 2 * targetSize))
            page = grown
        }
        if page.count > length {
            page.removeLast(page.count - length)
        } else if page.count < length {
            page.append(contentsOf: repeatElement(0, count: length - page.count))
        }
        page.withUnsafeMutableBytes { raw in
            // (Never nil: a page has at least `minimumSize` bytes.)
            guard let start = raw.baseAddress else { return }
            write(start)
            PageHeaderWriter(start).stampChecksum(length: length)
        }
    }

    /// Pads a page to the minimum size and sets its length and checksum.
    static func seal(_ page: inout [UInt8]) {
        if page.count < minimumSize { page.append(contentsOf: repeatElement(0, count: minimumSize - page.count)) }
        let length = page.count
        page.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            let header = PageHeaderWriter(base)
            header.setLength(length)
            header.stampChecksum(length: length)
        }
    }
}

/// Writes the header fields of a page, or of a node's buffer (the same layout), by name: with
/// `PageView`, which reads them, the one place that knows their offsets and widths. A page's
/// checksum is set here only (`stampChecksum`).
struct PageHeaderWriter {
    let base: UnsafeMutableRawPointer

    @inline(__always) init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// A fresh header: every field 0 (a dirty page's checksum is 0, and it has no cells and no
    /// prefix yet), then its kind.
    @inline(__always) func start(kind: UInt8) {
        base.initializeMemory(as: UInt8.self, repeating: 0, count: PageLayout.headerSize)
        setKind(kind)
    }

    /// The page's length in bytes (at most `PageLayout.maximumSize`).
    @inline(__always) func setLength(_ length: Int) {
        base.storeBytes(of: UInt16(length).littleEndian, toByteOffset: PageLayout.lengthOffset, as: UInt16.self)
    }

    /// `PageLayout.kindLeaf`, `kindBranch` or `kindPackedLeaf`.
    @inline(__always) func setKind(_ kind: UInt8) {
        base.storeBytes(of: kind, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
    }

    /// The length of the prefix every key of the page starts with (at most 255).
    @inline(__always) func setPrefixLength(_ length: Int) {
        base.storeBytes(of: UInt8(length), toByteOffset: PageLayout.prefixLengthOffset, as: UInt8.self)
    }

    /// The number of cells.
    @inline(__always) func setCount(_ count: Int) {
        base.storeBytes(of: UInt16(count).littleEndian, toByteOffset: PageLayout.countOffset, as: UInt16.self)
    }

    /// A checksum of 0: a page copied into a node, whose bytes will change, is dirty.
    @inline(__always) func clearChecksum() {
        base.storeBytes(of: UInt32(0), toByteOffset: PageLayout.checksumOffset, as: UInt32.self)
    }

    /// Sets the checksum of the page's `length` bytes, once every other byte is written.
    @inline(__always) func stampChecksum(length: Int) {
        let sum = PageLayout.checksum(UnsafeRawPointer(base), length: length)
        base.storeBytes(of: sum.littleEndian, toByteOffset: PageLayout.checksumOffset, as: UInt32.self)
    }
}
