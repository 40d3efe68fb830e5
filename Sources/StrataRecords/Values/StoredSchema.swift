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
        if let json = try? JSONReader.value(of: bytes), let schema = StoredSchema(json: json) { return schema }
        do { return try JSONDecoder().decode(StoredSchema.self, from: Data(bytes)) } catch {
            throw StrataError(.corruptRecord, "The store's schema record at \(path) cannot be read: \(error)")
        }
    }

}

// MARK: Reading without JSONDecoder

extension StoredSchema {
    /// The schema a JSON document holds, read as `JSONDecoder` reads `StoredSchema`'s
    /// `Codable` form (unknown keys ignored); nil for anything else.
    package init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var entities: [StoredEntity]?
        var version: Int?
        for (key, value) in members {
            switch key {
            case "formatVersion":
                guard case .integer(let v) = value, let n = Int(exactly: v) else { return nil }
                version = n
            case "entities":
                guard case .array(let items) = value else { return nil }
                var read: [StoredEntity] = []
                for item in items {
                    guard let entity = StoredEntity(json: item) else { return nil }
                    read.append(entity)
                }
                entities = read
            default: continue
            }
        }
        guard let version, let entities else { return nil }
        self.init(formatVersion: version, entities: entities)
    }
}

extension StoredEntity {
    package init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var name: String?, properties: [StoredProperty]?, unique: [[String]]?, indexes: [[String]]?
        var layouts: [[String]]?, formerNames: [String: [String]]?, defaults: [String: Data]?
        for (key, value) in members {
            switch key {
            case "name": guard let v = value.stringValue else { return nil }; name = v
            case "properties":
                guard case .array(let items) = value else { return nil }
                var read: [StoredProperty] = []
                for item in items {
                    guard let property = StoredProperty(json: item) else { return nil }
                    read.append(property)
                }
                properties = read
            case "unique": guard let v = value.stringLists else { return nil }; unique = v
            case "indexes": guard let v = value.stringLists else { return nil }; indexes = v
            case "layouts":
                if case .null = value { continue }
                guard let v = value.stringLists else { return nil }
                layouts = v
            case "formerNames":
                if case .null = value { continue }
                guard case .object(let pairs) = value else { return nil }
                var read: [String: [String]] = [:]
                for (property, names) in pairs {
                    guard let list = names.strings else { return nil }
                    read[property] = list
                }
                formerNames = read
            case "defaults":
                if case .null = value { continue }
                guard case .object(let pairs) = value else { return nil }
                var read: [String: Data] = [:]
                for (property, encoded) in pairs {
                    guard let text = encoded.stringValue, let data = Data(base64Encoded: text) else { return nil }
                    read[property] = data
                }
                defaults = read
            default: continue
            }
        }
        guard let name, let properties, let unique, let indexes else { return nil }
        self.name = name
        self.properties = properties
        self.unique = unique
        self.indexes = indexes
        self.layouts = layouts
        self.formerNames = formerNames
        self.defaults = defaults
    }
}

extension StoredEntity.StoredProperty {
    package init?(json: JSONValue) {
        guard case .object(let members) = json else { return nil }
        var name: String?, type: String?, options: UInt16?
        for (key, value) in members {
            switch key {
            case "name": guard let v = value.stringValue else { return nil }; name = v
            case "type": guard let v = value.stringValue else { return nil }; type = v
            case "options":
                guard case .integer(let v) = value, let n = UInt16(exactly: v) else { return nil }
                options = n
            default: continue
            }
        }
        guard let name, let type, let options else { return nil }
        self.init(name: name, type: type, options: options)
    }
}

private extension JSONValue {
    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var strings: [String]? {
        guard case .array(let items) = self else { return nil }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for item in items {
            guard let s = item.stringValue else { return nil }
            out.append(s)
        }
        return out
    }
    var stringLists: [[String]]? {
        guard case .array(let items) = self else { return nil }
        var out: [[String]] = []
        for item in items {
            guard let list = item.strings else { return nil }
            out.append(list)
        }
        return out
    }
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
