import Foundation
import StrataEngine

/// How an entity is stored, as written in the store's metadata and compared on open.
package struct StoredEntity: Codable, Equatable {
    package struct StoredProperty: Codable, Equatable {
        package var name: String
        package var type: String
        package var options: UInt16

        package init(name: String, type: String, options: UInt16) {
            self.name = name
            self.type = type
            self.options = options
        }
    }
    package var name: String
    package var properties: [StoredProperty]
    package var unique: [[String]]
    package var indexes: [[String]]
    /// Every record layout, oldest first (nil in stores written before layouts were kept).
    package var layouts: [[String]]? = nil
    /// The names each property had before it was renamed, oldest first, by its current name
    /// (only properties that were renamed; nil in stores written before former names were
    /// kept). They accumulate across renames, so records of any older layout map to the
    /// property whatever it was called then.
    package var formerNames: [String: [String]]? = nil
    /// By property name: the encoded value (`Property.encodeValue`; `[0]`, no rows, for a
    /// relationship) that records of an older layout read for a property their layout lacks,
    /// fixed when the property was added, as SQLite's `ALTER TABLE ADD COLUMN` fixes a column's
    /// default for the rows that exist then. Only properties that some older layout lacks
    /// have one; nil in stores written before defaults were kept.
    package var defaults: [String: Data]? = nil

    package init(name: String, properties: [StoredProperty], unique: [[String]], indexes: [[String]],
                 layouts: [[String]]? = nil, formerNames: [String: [String]]? = nil, defaults: [String: Data]? = nil) {
        self.name = name
        self.properties = properties
        self.unique = unique
        self.indexes = indexes
        self.layouts = layouts
        self.formerNames = formerNames
        self.defaults = defaults
    }

    /// What differs from `other` (the stored one), in words a person can act on.
    package func differences(from stored: StoredEntity) -> [String] {
        var out: [String] = []
        let mine = Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0) })
        let theirs = Dictionary(uniqueKeysWithValues: stored.properties.map { ($0.name, $0) })
        for p in properties where theirs[p.name] == nil { out.append("\(name).\(p.name) is new") }
        for p in stored.properties where mine[p.name] == nil { out.append("\(name).\(p.name) was removed") }
        for p in properties {
            if let s = theirs[p.name], s.type != p.type { out.append("\(name).\(p.name) changed type from \(s.type) to \(p.type)") }
        }
        if properties.map(\.name) != stored.properties.map(\.name) && out.isEmpty {
            out.append("\(name)'s properties are in a different order")
        }
        if Set(unique) != Set(stored.unique) { out.append("\(name)'s unique constraints changed") }
        if Set(indexes) != Set(stored.indexes) { out.append("\(name)'s indexes changed") }
        return out
    }
}

/// The schema the object layer keeps in a store (metadata `strata.schema`, JSON): every
/// entity's properties, constraints, record layouts, former names and stored defaults. Read
/// and written here only.
package struct StoredSchema: Codable, Equatable {
    package var formatVersion = 1
    package var entities: [StoredEntity]

    package init(formatVersion: Int = 1, entities: [StoredEntity]) {
        self.formatVersion = formatVersion
        self.entities = entities
    }

    /// The metadata entry that holds it.
    package static let metadataKey = "strata.schema"

    package static func decode(_ bytes: [UInt8], path: String) throws -> StoredSchema {
        // Read by hand (a fifth of a fresh process's first open went to `JSONDecoder`'s first
        // use); anything the hand-written reading does not expect goes to `JSONDecoder`, which
        // reads it or says what is wrong.
        if let schema = try? JSONReader.read(bytes, StoredSchema.init(reading:)) { return schema }
        do { return try JSONDecoder().decode(StoredSchema.self, from: Data(bytes)) } catch {
            throw StrataError(.corruptRecord, "The store's schema record at \(path) cannot be read: \(error)")
        }
    }

}

// MARK: Reading without JSONDecoder

// The schema is read value by value as `JSONDecoder` reads `StoredSchema`'s `Codable` form
// (unknown keys ignored, a repeated key's last value kept), into the schema itself: no tree of
// `JSONValue`s first. Anything else throws `JSONReader.Malformed`, and `decode` hands the
// document to `JSONDecoder`.

extension StoredSchema {
    /// The schema the object `reader` is at.
    package init(reading reader: inout JSONReader) throws {
        var version: Int?
        var entities: [StoredEntity]?
        try reader.members { reader, key in
            switch key {
            case "formatVersion":
                guard let n = Int(exactly: try reader.integerValue()) else { throw JSONReader.Malformed() }
                version = n
            case "entities":
                var read: [StoredEntity] = []
                try reader.elements { read.append(try StoredEntity(reading: &$0)) }
                entities = read
            default: try reader.skipValue()
            }
        }
        guard let version, let entities else { throw JSONReader.Malformed() }
        self.init(formatVersion: version, entities: entities)
    }
}

extension StoredEntity {
    /// The entity the object `reader` is at.
    package init(reading reader: inout JSONReader) throws {
        var name: String?, properties: [StoredProperty]?, unique: [[String]]?, indexes: [[String]]?
        var layouts: [[String]]?, formerNames: [String: [String]]?, defaults: [String: Data]?
        try reader.members { reader, key in
            switch key {
            case "name": name = try reader.stringValue()
            case "properties":
                var read: [StoredProperty] = []
                try reader.elements { read.append(try StoredProperty(reading: &$0)) }
                properties = read
            case "unique": unique = try reader.stringLists()
            case "indexes": indexes = try reader.stringLists()
            case "layouts": layouts = try reader.takeNull() ? nil : try reader.stringLists()
            case "formerNames":
                if try reader.takeNull() { formerNames = nil; return }
                var read: [String: [String]] = [:]
                try reader.members { reader, property in read[property.string] = try reader.strings() }
                formerNames = read
            case "defaults":
                if try reader.takeNull() { defaults = nil; return }
                var read: [String: Data] = [:]
                try reader.members { reader, property in
                    guard let data = Data(base64Encoded: try reader.stringValue()) else { throw JSONReader.Malformed() }
                    read[property.string] = data
                }
                defaults = read
            default: try reader.skipValue()
            }
        }
        guard let name, let properties, let unique, let indexes else { throw JSONReader.Malformed() }
        self.init(name: name, properties: properties, unique: unique, indexes: indexes,
                  layouts: layouts, formerNames: formerNames, defaults: defaults)
    }
}

extension StoredEntity.StoredProperty {
    /// The property the object `reader` is at.
    package init(reading reader: inout JSONReader) throws {
        var name: String?, type: String?, options: UInt16?
        try reader.members { reader, key in
            switch key {
            case "name": name = try reader.stringValue()
            case "type": type = try reader.stringValue()
            case "options":
                guard let n = UInt16(exactly: try reader.integerValue()) else { throw JSONReader.Malformed() }
                options = n
            default: try reader.skipValue()
            }
        }
        guard let name, let type, let options else { throw JSONReader.Malformed() }
        self.init(name: name, type: type, options: options)
    }
}

private extension JSONReader {
    /// An array of strings.
    mutating func strings() throws -> [String] { try list { try $0.stringValue() } }

    /// An array of arrays of strings.
    mutating func stringLists() throws -> [[String]] { try list { try $0.strings() } }
}

extension StoredSchema {
    // Through the storage seam.
    /// The schema stored in the store `reader` reads, or nil for a store without one.
    package static func read(from reader: any StorageReader, path: String) throws -> StoredSchema? {
        guard let bytes = try reader.metadata(metadataKey) else { return nil }
        return try decode(bytes, path: path)
    }

    package func write(to writer: any StorageWriter) throws {
        try writer.setMetadata(StoredSchema.metadataKey, Array(try JSONEncoder().encode(self)))
    }
}
