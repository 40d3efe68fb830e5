import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// An object's record turned into a snapshot's values and back, for a custom store: the
/// context keeps records (the same code as for Strata's engine), a custom store snapshots.
///
/// Attributes go through their value type's codec (`AttributeAccess.snapshotOfField` and
/// `fieldOfSnapshot`); an external value is kept inline in the record made from a snapshot;
/// a relationship's rows become identifiers and back through `identifiers` and `rows`.
struct SnapshotRecords {
    let entity: Entity

    /// The values of a record. `identifier` names a related row; `blob` gives an external
    /// value's bytes (its field encoding).
    func values(of record: UnsafeRawBufferPointer, identifier: (Entity, RowID) -> PersistentIdentifier,
                blob: (UInt64) throws -> [UInt8]) throws -> [String: SnapshotValue] {
        var values: [String: SnapshotValue] = [:]
        values.reserveCapacity(entity.properties.count)
        for (property, value) in zip(entity.properties, try orderedValues(of: record, identifier: identifier, blob: blob)) {
            values[property.name] = value
        }
        return values
    }

    /// The values of a record in the order of the entity's properties (`layout`'s names), as
    /// `values(of:identifier:blob:)` gives them by name.
    func orderedValues(of record: UnsafeRawBufferPointer, identifier: (Entity, RowID) -> PersistentIdentifier,
                       blob: (UInt64) throws -> [UInt8]) throws -> [SnapshotValue] {
        let view = try RecordView(record)
        var values: [SnapshotValue] = []
        values.reserveCapacity(entity.properties.count)
        for property in entity.properties {
            let field = try view.field(property.index)
            switch property {
            case let relationship as RelationshipProperty:
                let target = relationship.targetEntity
                values.append(.identifiers(try RelationshipProperty.decodeRows(field).map { identifier(target, $0) }))
            case let attribute as AttributeProperty where attribute.isExternal:
                guard let tag = field.first else { throw decodingFailure("an empty external-storage field") }
                if tag == 1, let id = AttributeProperty.blob(ofField: field) {
                    values.append(try blob(id).withUnsafeBytes { try attribute.access.snapshotOfField($0) })
                } else {
                    values.append(try attribute.access.snapshotOfField(UnsafeRawBufferPointer(rebasing: field[1...])))
                }
            case let attribute as AttributeProperty:
                values.append(try attribute.access.snapshotOfField(field))
            default:
                values.append(.null)
            }
        }
        return values
    }

    /// The layout of `orderedValues`: the entity's properties' names, in order.
    var layout: DefaultSnapshot.Layout { DefaultSnapshot.Layout(entity.properties.map(\.name)) }

    /// The record of a snapshot's values (every external value inline). `row` gives the row of
    /// a related identifier. A property the snapshot lacks takes the model's default value when
    /// it is optional; a missing value of a non-optional attribute is an error naming it.
    func record(of values: [String: SnapshotValue], row: (Entity, PersistentIdentifier) throws -> RowID, version: Int64? = nil) throws -> [UInt8] {
        // One lookup per property (each name hashed once); a value under any other name is
        // found by the count, since the properties' names differ.
        var found = 0
        let record = try record(row: row, version: version) { property in
            let value = values[property.name]
            if value != nil { found += 1 }
            return value
        }
        if found != values.count {
            throw unknownProperties(values.keys.filter { entity.propertyIndex[$0] == nil })
        }
        return record
    }

    /// The record of a snapshot, by name or by its layout's positions.
    func record(of snapshot: DefaultSnapshot, row: (Entity, PersistentIdentifier) throws -> RowID) throws -> [UInt8] {
        var positions: LayoutPositions? = nil
        return try record(of: snapshot, positions: &positions, row: row)
    }

    /// The same, for a run of snapshots: `positions` keeps the last layout's positions, found
    /// again only when a snapshot comes in another layout.
    func record(of snapshot: DefaultSnapshot, positions: inout LayoutPositions?, row: (Entity, PersistentIdentifier) throws -> RowID) throws -> [UInt8] {
        switch snapshot.storage {
        case .named(let values):
            return try record(of: values, row: row, version: snapshot.version)
        case .positional(let layout, let values):
            let known: LayoutPositions
            if let positions, positions.layout === layout { known = positions } else { known = try self.positions(of: layout) }
            positions = known
            return try record(of: values, known, row: row, version: snapshot.version)
        }
    }

    /// Where each of the entity's properties is in the values of a layout's snapshots
    /// (`positions[i]` for `entity.properties[i]`, nil: not in the layout). Made once for a
    /// run of snapshots of one layout. Throws when the layout names a property the model
    /// does not have, as `record(of:row:)` does.
    func positions(of layout: DefaultSnapshot.Layout) throws -> LayoutPositions {
        let unknown = layout.names.filter { entity.propertyIndex[$0] == nil }
        guard unknown.isEmpty else { throw unknownProperties(unknown) }
        return LayoutPositions(layout: layout, positions: entity.properties.map { layout.positions[$0.name] })
    }

    struct LayoutPositions {
        let layout: DefaultSnapshot.Layout
        let positions: [Int?]
    }

    /// The record of a layout's snapshot values (`positions(of:)` of its layout).
    func record(of values: [SnapshotValue], _ positions: LayoutPositions, row: (Entity, PersistentIdentifier) throws -> RowID,
                version: Int64? = nil) throws -> [UInt8] {
        guard values.count == positions.layout.names.count else {
            throw StrataError(.corruptRecord, "A custom store's snapshot of \(entity.name) has \(values.count) values for a layout of \(positions.layout.names.count) names (\(positions.layout.names.joined(separator: ", "))). Give one value for each name.")
        }
        var i = 0
        return try record(row: row, version: version) { _ in
            defer { i += 1 }
            return positions.positions[i].map { values[$0] }
        }
    }

    /// The record of the values `value` gives for each of the entity's properties, in order,
    /// and the store's version of the object, if it gave one, in a field after them
    /// (`storeVersion(of:)`).
    private func record(row: (Entity, PersistentIdentifier) throws -> RowID, version: Int64?,
                        _ value: (PersistedProperty) -> SnapshotValue?) throws -> [UInt8] {
        let count = entity.properties.count + (version == nil ? 0 : 1)
        // Room for the largest record of the model made so far (as `Entity+Record` reserves):
        // 64 bytes for the fields made a Course's record grow twice, copied each time.
        var record = RecordLayout.wideHeader(count: count, reserving: max(64, min(entity.largestRecord.load(ordering: .relaxed), 1024)))
        let fieldsStart = record.count
        var ends: [Int] = []
        ends.reserveCapacity(count)
        for property in entity.properties {
            let value = value(property)
            switch property {
            case let relationship as RelationshipProperty:
                var ids: [PersistentIdentifier] = []
                if case .identifiers(let listed)? = value { ids = listed }
                let target = relationship.targetEntity
                RelationshipProperty.encodeRows(try ids.map { try row(target, $0) }, into: &record)
            case let attribute as AttributeProperty:
                if attribute.isExternal { record.append(0) }
                do { try attribute.access.fieldOfSnapshot(value ?? .null, &record) } catch {
                    throw StrataError(.corruptRecord, "A custom store's snapshot of \(entity.name) has \(value.map { "\($0)" } ?? "no value") for \(property.name), which is not a \(attribute.valueType).", underlying: error)
                }
            default:
                break
            }
            ends.append(record.count - fieldsStart)
        }
        if let version {
            withUnsafeBytes(of: version.littleEndian) { record.append(contentsOf: $0) }
            ends.append(record.count - fieldsStart)
        }
        RecordLayout.setWideEnds(ends, in: &record)
        if record.count > entity.largestRecord.load(ordering: .relaxed) { entity.largestRecord.store(record.count, ordering: .relaxed) }
        return record
    }

    /// The store's version of the object a bridge's record was made from
    /// (`DefaultSnapshot.version`): the field after the properties', where the bridge keeps it.
    /// Nil for a record without one (the store keeps no versions, or the record is a context's).
    static func storeVersion(of view: RecordView, propertyCount: Int) -> Int64? {
        guard view.count > propertyCount, let field = try? view.rawField(propertyCount), field.count == 8 else { return nil }
        return Int64(littleEndian: field.loadUnaligned(as: Int64.self))
    }

    /// `storeVersion(of:propertyCount:)` of a record's bytes.
    static func storeVersion(of record: [UInt8], propertyCount: Int) -> Int64? {
        record.withUnsafeBytes { raw in (try? RecordView(raw)).flatMap { storeVersion(of: $0, propertyCount: propertyCount) } }
    }

    /// A record with its first `propertyCount` fields and `version` in a field after them (a
    /// version it held before is replaced).
    static func record(_ record: [UInt8], propertyCount: Int, version: Int64) throws -> [UInt8] {
        try record.withUnsafeBytes { raw in
            let view = try RecordView(raw)
            guard view.count >= propertyCount else {
                throw decodingFailure("a record with \(view.count) fields where \(propertyCount) were expected")
            }
            let end = view.offset(propertyCount)
            var made = RecordLayout.wideHeader(count: propertyCount + 1, layoutVersion: view.layoutVersion, reserving: end + 8)
            made.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[view.fieldsStart ..< view.fieldsStart + end]))
            withUnsafeBytes(of: version.littleEndian) { made.append(contentsOf: $0) }
            RecordLayout.setWideEnds((0 ..< propertyCount).map { view.offset($0 + 1) } + [end + 8], in: &made)
            return made
        }
    }

    private func unknownProperties(_ names: [String]) -> StrataError {
        StrataError(.corruptRecord, "A custom store's snapshot of \(entity.name) names \(names.sorted().joined(separator: ", ")), which \(entity.name) does not have as a persisted property. Answer with the model's properties only.")
    }
}

extension RecordLayout {
    /// A wide record (format 2, `u32` offsets) of these fields, `ends` being where each ends.
    static func wideRecord(fields: [UInt8], ends: [Int], layoutVersion: UInt16 = 0) -> [UInt8] {
        var record = wideHeader(count: ends.count, layoutVersion: layoutVersion, reserving: fields.count)
        record.append(contentsOf: fields)
        setWideEnds(ends, in: &record)
        return record
    }

    /// A wide record's header with room for `count` fields' offsets (zeros until
    /// `setWideEnds`): the fields are appended after it.
    static func wideHeader(count: Int, layoutVersion: UInt16 = 0, reserving: Int = 64) -> [UInt8] {
        // Made at its full size at once (an array literal, then room reserved, was two
        // allocations and a copy per record).
        var record: [UInt8] = []
        record.reserveCapacity(5 + 4 * (count + 1) + reserving)
        record.append(RecordLayout.wide)
        record.append(UInt8(truncatingIfNeeded: layoutVersion))
        record.append(UInt8(truncatingIfNeeded: layoutVersion >> 8))
        record.append(UInt8(truncatingIfNeeded: count))
        record.append(UInt8(truncatingIfNeeded: count >> 8))
        record.append(contentsOf: repeatElement(0, count: 4 * (count + 1)))
        return record
    }

    /// Writes the fields' ends (from the start of the fields) into a record `wideHeader` made.
    static func setWideEnds(_ ends: [Int], in record: inout [UInt8]) {
        var at = 5 + 4    // the first offset, 0, is in place
        for v in ends {
            record[at] = UInt8(truncatingIfNeeded: v)
            record[at + 1] = UInt8(truncatingIfNeeded: v >> 8)
            record[at + 2] = UInt8(truncatingIfNeeded: v >> 16)
            record[at + 3] = UInt8(truncatingIfNeeded: v >> 24)
            at += 4
        }
    }
}
