import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension RecordLayout {
    /// The record of an object's persisted properties.
    static func encode(_ object: AnyObject, entity: Entity, layoutVersion: UInt16 = 0, _ encoding: RecordEncoding = .plain) throws -> [UInt8] {
        var record: [UInt8] = []
        try encode(object, entity: entity, layoutVersion: layoutVersion, encoding, into: &record)
        return record
    }

    /// `encode` into `record`, which keeps its memory: a save encodes object after object in
    /// one array (W1, W6). The properties are lent, not retained and released one by one.
    static func encode(_ object: AnyObject, entity: Entity, layoutVersion: UInt16 = 0, _ encoding: RecordEncoding = .plain,
                       into record: inout [UInt8]) throws {
        // Fields are written after a narrow offset table; a record over 64 KiB is rewritten wide.
        let count = entity.properties.count
        let tableSize = (count + 1) * 2
        record.removeAll(keepingCapacity: true)
        // The largest record so far (up to 1 KiB: one large record must not make every
        // buffer large) or a guess from the property count.
        let room = max(5 + tableSize + 16 * count + 64, min(entity.largestRecord.load(ordering: .relaxed), 1024))
        if record.capacity < room { record.reserveCapacity(room) }
        record.append(RecordLayout.narrow)
        record.append(UInt8(truncatingIfNeeded: layoutVersion))
        record.append(UInt8(truncatingIfNeeded: layoutVersion >> 8))
        record.append(UInt8(truncatingIfNeeded: count))
        record.append(UInt8(truncatingIfNeeded: count >> 8))
        record.append(contentsOf: repeatElement(0, count: tableSize))
        let fieldsStart = record.count
        let fits = try entity.properties.withUnsafeBufferPointer { properties in
            for i in properties.indices {
                try Unmanaged.passUnretained(properties[i])._withUnsafeGuaranteedRef { try $0.encode(object, into: &record, encoding) }
                let end = record.count - fieldsStart
                if end > Int(UInt16.max) { return false }
                record[5 + (i + 1) * 2] = UInt8(truncatingIfNeeded: end)
                record[5 + (i + 1) * 2 + 1] = UInt8(truncatingIfNeeded: end >> 8)
            }
            return true
        }
        guard fits else { return record = try encodeWide(object, entity: entity, layoutVersion: layoutVersion, encoding) }
        shorten(&record, count: count)
        if record.count > entity.largestRecord.load(ordering: .relaxed) { entity.largestRecord.store(record.count, ordering: .relaxed) }
    }

    static func encodeWide(_ object: AnyObject, entity: Entity, layoutVersion: UInt16, _ encoding: RecordEncoding) throws -> [UInt8] {
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
}
