import Foundation
import StrataEngine

/// A record's bytes, read in place: valid only while the engine lends them.
@usableFromInline
package struct RecordView {
    @usableFromInline package let raw: UnsafeRawBufferPointer
    @usableFromInline package let count: Int
    @usableFromInline package let layoutVersion: UInt16
    /// Bytes per offset: 1 (format 3), 2 (format 1) or 4 (format 2).
    @usableFromInline package let width: Int
    @usableFromInline package let fieldsStart: Int

    /// For a record of an older layout only (its version is not its table's current one): how
    /// to read it as the current properties. Unmanaged, not retained: a view lives while the
    /// engine lends a record, and its layouts are its table's, which outlives every read of
    /// it. (A view is made per scanned row; an optional reference, even a nil one, cost a
    /// retain and a release each time a field was read. Docs/Benchmarks.md, "Costs".)
    @usableFromInline package let olderLayout: Unmanaged<EntityLayouts>?

    @inlinable
    package init(_ raw: UnsafeRawBufferPointer, layouts: EntityLayouts? = nil) throws {
        let lent = layouts.flatMap { $0.isIdentity ? nil : Unmanaged.passUnretained($0) }
        try self.init(raw, lent: lent)
    }

    /// A view of `raw` with its table's layouts lent, not retained: for a scan, which makes a
    /// view per row (a retain and a release of the layouts per row, W4). `layouts` is nil when
    /// they map nothing; the caller keeps them alive while it reads.
    @inlinable @inline(__always)
    package init(_ raw: UnsafeRawBufferPointer, lent layouts: Unmanaged<EntityLayouts>?) throws {
        guard raw.count >= 5, let header = raw.baseAddress else { throw decodingFailure("a record shorter than its header") }
        let format = header.load(as: UInt8.self)
        guard let width = RecordLayout.offsetWidth(format) else {
            throw decodingFailure("an unknown record format \(format)")
        }
        try self.init(raw, header: header, width: width, lent: layouts)
        guard offset(count) == raw.count &- fieldsStart else { throw decodingFailure("a record whose offsets do not match its length") }
    }

    /// The format byte of a record (`RecordLayout.short`, `.narrow` or `.wide`), checked to be
    /// one of them and the header to be there.
    @inlinable @inline(__always)
    package static func format(_ raw: UnsafeRawBufferPointer) throws -> UInt8 {
        guard raw.count >= 5, let header = raw.baseAddress else { throw decodingFailure("a record shorter than its header") }
        let format = header.load(as: UInt8.self)
        guard RecordLayout.offsetWidth(format) != nil else { throw decodingFailure("an unknown record format \(format)") }
        return format
    }

    /// A view of a record whose format (`format(_:)`) has offsets of `Offset`'s width: for a
    /// scan that switched on the format once for its view and its fields, where the view's
    /// width was switched on again to read the last offset and once more for the fields (W4).
    /// The general `init` above does not go through this one: when it did, W7 on PostgreSQL
    /// took 111 to 118 ms instead of 87 to 94 (three runs each way; the cause was not
    /// profiled, and the file store's W7 did not move under callgrind).
    @inlinable @inline(__always)
    package init<Offset: FixedWidthInteger & UnsignedInteger>(_ raw: UnsafeRawBufferPointer, lent layouts: Unmanaged<EntityLayouts>?,
                                                               offsets: Offset.Type) throws {
        guard raw.count >= 5, let header = raw.baseAddress else { throw decodingFailure("a record shorter than its header") }
        try self.init(raw, header: header, width: MemoryLayout<Offset>.size, lent: layouts)
        let last = Int(Offset(littleEndian: header.loadUnaligned(fromByteOffset: 5 &+ count &* width, as: Offset.self)))
        guard last == raw.count &- fieldsStart else { throw decodingFailure("a record whose offsets do not match its length") }
    }

    /// The header's fields, for a record of at least its 5 bytes (`header`) whose offsets are
    /// `width` bytes; the offset table is checked to lie in `raw`.
    @inlinable @inline(__always)
    init(_ raw: UnsafeRawBufferPointer, header: UnsafeRawPointer, width: Int, lent layouts: Unmanaged<EntityLayouts>?) throws {
        // The header's 5 bytes were checked: read without bounds checks, and the offset
        // table's end (at most 5 + 65,536 × 4) computed without overflow checks.
        self.width = width
        let version = UInt16(littleEndian: header.loadUnaligned(fromByteOffset: 1, as: UInt16.self))
        layoutVersion = version
        count = Int(UInt16(littleEndian: header.loadUnaligned(fromByteOffset: 3, as: UInt16.self)))
        fieldsStart = 5 &+ (count &+ 1) &* width
        guard fieldsStart <= raw.count else { throw decodingFailure("a record shorter than its offset table") }
        self.raw = raw
        if let layouts, version != layouts._withUnsafeGuaranteedRef({ $0.currentVersion }) {
            olderLayout = layouts
        } else {
            olderLayout = nil
        }
    }

    /// Offset `i` (0...count) of the offset table, which `init` checked lies in `raw`: read
    /// without bounds checks, with arithmetic that cannot overflow (`i` is at most 65,535).
    @inlinable @inline(__always)
    package func offset(_ i: Int) -> Int {
        let table = raw.baseAddress.unsafelyUnwrapped + 5
        switch width {
        case 1: return Int(table.load(fromByteOffset: i, as: UInt8.self))
        case 2: return Int(UInt16(littleEndian: table.loadUnaligned(fromByteOffset: i &* 2, as: UInt16.self)))
        default: return Int(UInt32(littleEndian: table.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self)))
        }
    }

    /// The bytes of property `i`: its field, or for a record of an older layout the field the
    /// property had then, or its default value.
    @inlinable @inline(__always)
    package func field(_ i: Int) throws -> UnsafeRawBufferPointer {
        if let olderLayout { return try olderField(i, olderLayout) }
        return try rawField(i)
    }

    /// `field(_:)` of a record of an older layout.
    @usableFromInline
    package func olderField(_ i: Int, _ layouts: Unmanaged<EntityLayouts>) throws -> UnsafeRawBufferPointer {
        let (field, fallback) = try layouts._withUnsafeGuaranteedRef { try $0.locate(i, version: layoutVersion) }
        if let fallback { return fallback }
        return try rawField(field)
    }

    @inlinable @inline(__always)
    package func rawField(_ i: Int) throws -> UnsafeRawBufferPointer {
        guard i >= 0 && i < count else { throw decodingFailure("a record with \(count) fields where field \(i) was expected") }
        let start = offset(i)
        let end = offset(i &+ 1)
        // Offsets are at most 32 bits and `fieldsStart` a header's length: no overflow.
        guard start <= end, fieldsStart &+ end <= raw.count else { throw decodingFailure("a field outside its record") }
        // The bounds were just checked (and `raw` holds at least a header, so it has a base):
        // not a slice, whose bounds would be checked again.
        return UnsafeRawBufferPointer(start: raw.baseAddress.unsafelyUnwrapped + (fieldsStart &+ start), count: end &- start)
    }
}

extension RecordView {
    /// `rawField(_:)` of a record whose offsets are `Offset`s (`width` bytes, which the caller
    /// switched on once for several fields).
    @inlinable @inline(__always)
    package func rawField<Offset: FixedWidthInteger & UnsignedInteger>(_ i: Int, offsets: Offset.Type) throws -> UnsafeRawBufferPointer {
        guard UInt(bitPattern: i) < UInt(count) else { throw decodingFailure("a record with \(count) fields where field \(i) was expected") }
        let base = raw.baseAddress.unsafelyUnwrapped
        let w = MemoryLayout<Offset>.size
        let start = Int(Offset(littleEndian: base.loadUnaligned(fromByteOffset: 5 &+ i &* w, as: Offset.self)))
        let end = Int(Offset(littleEndian: base.loadUnaligned(fromByteOffset: 5 &+ (i &+ 1) &* w, as: Offset.self)))
        guard start <= end, fieldsStart &+ end <= raw.count else { throw decodingFailure("a field outside its record") }
        return UnsafeRawBufferPointer(start: base + (fieldsStart &+ start), count: end &- start)
    }
}

/// True when two byte ranges hold the same bytes (a comparison of memory, not the byte-by-byte
/// iteration `elementsEqual` does on raw buffers; Docs/Benchmarks.md, "Costs").
@inlinable @inline(__always)
package func sameBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard a.count > 0, let x = a.baseAddress, let y = b.baseAddress else { return true }
    return memcmp(x, y, a.count) == 0
}
