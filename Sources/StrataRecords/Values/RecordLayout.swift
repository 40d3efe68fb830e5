import StrataEngine

/// An object's record: its persisted properties in declaration order, with an offset table so
/// that one property can be read without decoding the others (Docs/FileFormat.md, "Object records").
///
/// `[u8 format][u16 layout version][u16 field count][offsets][fields]`: format 3 has `u8`
/// offsets (fields of at most 255 bytes in all, most records), format 1 `u16` ones, format 2
/// `u32` ones; there are `count + 1` offsets, relative to the first field.
@usableFromInline
package enum RecordLayout {
    @usableFromInline package static let narrow: UInt8 = 1
    @usableFromInline package static let wide: UInt8 = 2
    @usableFromInline package static let short: UInt8 = 3

    /// The bytes of one offset of a record of this format; nil for an unknown format.
    @inlinable @inline(__always)
    package static func offsetWidth(_ format: UInt8) -> Int? {
        switch format {
        case short: return 1
        case narrow: return 2
        case wide: return 4
        default: return nil
        }
    }

    /// Rewrites a narrow record whose fields fit 255 bytes as a short one, in place: each
    /// 16-bit offset becomes one byte (9 bytes fewer for 8 fields).
    package static func shorten(_ record: inout [UInt8], count: Int) {
        let fieldsStart = 5 + (count + 1) * 2
        guard record.count - fieldsStart <= Int(UInt8.max) else { return }
        record[0] = short
        for i in 0...count { record[5 + i] = record[5 + 2 * i] }
        record.removeSubrange((5 + count + 1)..<fieldsStart)
    }

    /// A record of these fields, as `encode` writes it: 8-bit offsets when the fields fit
    /// them, else 16-bit ones, else 32-bit ones.
    package static func assemble(_ parts: [[UInt8]], version: UInt16) -> [UInt8] {
        let total = parts.reduce(0) { $0 + $1.count }
        let wide = total > Int(UInt16.max)
        let count = parts.count
        var record: [UInt8] = [wide ? RecordLayout.wide : RecordLayout.narrow,
                               UInt8(truncatingIfNeeded: version), UInt8(truncatingIfNeeded: version >> 8),
                               UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8)]
        record.reserveCapacity(5 + (count + 1) * (wide ? 4 : 2) + total)
        var end = 0
        for offset in [0] + parts.map({ end += $0.count; return end }) {
            record.append(UInt8(truncatingIfNeeded: offset))
            record.append(UInt8(truncatingIfNeeded: offset >> 8))
            if wide {
                record.append(UInt8(truncatingIfNeeded: offset >> 16))
                record.append(UInt8(truncatingIfNeeded: offset >> 24))
            }
        }
        for part in parts { record += part }
        if !wide { shorten(&record, count: count) }
        return record
    }
}
