import StrataEngine

/// An object's record: its persisted properties in declaration order, with an offset table so
/// that one property can be read without decoding the others (Docs/FileFormat.md, "Object records").
///
/// `[u8 format][u16 layout version][u16 field count][offsets][fields]`: format 1 has `u16`
/// offsets, format 2 `u32` ones; there are `count + 1` offsets, relative to the first field.
enum RecordLayout {
    static let narrow: UInt8 = 1
    static let wide: UInt8 = 2

    static func encode(_ object: AnyObject, entity: Entity, layoutVersion: UInt16 = 0, _ encoding: RecordEncoding = .plain) throws -> [UInt8] {
        // Fields are written after a narrow offset table; a record over 64 KiB is rewritten wide.
        let count = entity.properties.count
        let tableSize = (count + 1) * 2
        var record: [UInt8] = []
        record.reserveCapacity(5 + tableSize + 16 * count + 64)
        record.append(RecordLayout.narrow)
        record.append(UInt8(truncatingIfNeeded: layoutVersion))
        record.append(UInt8(truncatingIfNeeded: layoutVersion >> 8))
        record.append(UInt8(truncatingIfNeeded: count))
        record.append(UInt8(truncatingIfNeeded: count >> 8))
        record.append(contentsOf: repeatElement(0, count: tableSize))
        let fieldsStart = record.count
        var i = 0
        for property in entity.properties {
            try property.encode(object, into: &record, encoding)
            i += 1
            let end = record.count - fieldsStart
            if end > Int(UInt16.max) { return try encodeWide(object, entity: entity, layoutVersion: layoutVersion, encoding) }
            record[5 + i * 2] = UInt8(truncatingIfNeeded: end)
            record[5 + i * 2 + 1] = UInt8(truncatingIfNeeded: end >> 8)
        }
        return record
    }

    private static func encodeWide(_ object: AnyObject, entity: Entity, layoutVersion: UInt16, _ encoding: RecordEncoding) throws -> [UInt8] {
        var fields: [UInt8] = []
        var ends: [Int] = []
        for property in entity.properties {
            try property.encode(object, into: &fields, encoding)
            ends.append(fields.count)
        }
        var record: [UInt8] = [RecordLayout.wide, UInt8(truncatingIfNeeded: layoutVersion), UInt8(truncatingIfNeeded: layoutVersion >> 8),
                               UInt8(truncatingIfNeeded: ends.count), UInt8(truncatingIfNeeded: ends.count >> 8)]
        for v in [0] + ends {
            record.append(UInt8(truncatingIfNeeded: v))
            record.append(UInt8(truncatingIfNeeded: v >> 8))
            record.append(UInt8(truncatingIfNeeded: v >> 16))
            record.append(UInt8(truncatingIfNeeded: v >> 24))
        }
        record.append(contentsOf: fields)
        return record
    }

    /// A record of these fields, as `encode` writes it: 16-bit offsets when the fields fit
    /// them, 32-bit ones otherwise.
    static func assemble(_ parts: [[UInt8]], version: UInt16) -> [UInt8] {
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
        return record
    }
}
