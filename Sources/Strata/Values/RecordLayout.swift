import StrataEngine

/// An object's record: its persisted properties in declaration order, with an offset table so
/// that one property can be read without decoding the others (Docs/FileFormat.md, "Object records").
///
/// `[u8 format][u16 layout version][u16 field count][offsets][fields]`: format 1 has `u16`
/// offsets, format 2 `u32` ones; there are `count + 1` offsets, relative to the first field.
enum RecordLayout {
    static let narrow: UInt8 = 1
    static let wide: UInt8 = 2

    static func encode(_ object: AnyObject, entity: Entity, layoutVersion: UInt16 = 0) throws -> [UInt8] {
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
            try property.encodeValue(of: object, into: &record)
            i += 1
            let end = record.count - fieldsStart
            if end > Int(UInt16.max) { return try encodeWide(object, entity: entity, layoutVersion: layoutVersion) }
            record[5 + i * 2] = UInt8(truncatingIfNeeded: end)
            record[5 + i * 2 + 1] = UInt8(truncatingIfNeeded: end >> 8)
        }
        return record
    }

    private static func encodeWide(_ object: AnyObject, entity: Entity, layoutVersion: UInt16) throws -> [UInt8] {
        var fields: [UInt8] = []
        var ends: [Int] = []
        for property in entity.properties {
            try property.encodeValue(of: object, into: &fields)
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
}

/// A record's bytes, read in place: valid only while the engine lends them.
struct RecordView {
    let raw: UnsafeRawBufferPointer
    let count: Int
    let layoutVersion: UInt16
    private let wide: Bool
    private let fieldsStart: Int

    /// How to read older layouts as the current properties (nil: the record is current).
    private let layouts: EntityLayouts?

    init(_ raw: UnsafeRawBufferPointer, layouts: EntityLayouts? = nil) throws {
        self.layouts = layouts.flatMap { $0.isIdentity ? nil : $0 }
        guard raw.count >= 5 else { throw decodingFailure("a record shorter than its header") }
        let format = raw[0]
        guard format == RecordLayout.narrow || format == RecordLayout.wide else {
            throw decodingFailure("an unknown record format \(format)")
        }
        wide = format == RecordLayout.wide
        layoutVersion = UInt16(raw[1]) | UInt16(raw[2]) << 8
        count = Int(UInt16(raw[3]) | UInt16(raw[4]) << 8)
        fieldsStart = 5 + (count + 1) * (wide ? 4 : 2)
        guard fieldsStart <= raw.count else { throw decodingFailure("a record shorter than its offset table") }
        self.raw = raw
        guard offset(count) == raw.count - fieldsStart else { throw decodingFailure("a record whose offsets do not match its length") }
    }

    @inline(__always)
    private func offset(_ i: Int) -> Int {
        if wide { return Int(raw.loadUnaligned(fromByteOffset: 5 + i * 4, as: UInt32.self).littleEndian) }
        return Int(raw.loadUnaligned(fromByteOffset: 5 + i * 2, as: UInt16.self).littleEndian)
    }

    /// The bytes of property `i`: its field, or for a record of an older layout the field the
    /// property had then, or its default value.
    @inline(__always)
    func field(_ i: Int) throws -> UnsafeRawBufferPointer {
        if let layouts, layoutVersion != layouts.currentVersion {
            let (field, fallback) = try layouts.locate(i, version: layoutVersion)
            if let fallback { return fallback }
            return try rawField(field)
        }
        return try rawField(i)
    }

    @inline(__always)
    private func rawField(_ i: Int) throws -> UnsafeRawBufferPointer {
        guard i < count else { throw decodingFailure("a record with \(count) fields where field \(i) was expected") }
        let start = offset(i)
        let end = offset(i + 1)
        guard start <= end, fieldsStart + end <= raw.count else { throw decodingFailure("a field outside its record") }
        return UnsafeRawBufferPointer(rebasing: raw[(fieldsStart + start)..<(fieldsStart + end)])
    }
}
