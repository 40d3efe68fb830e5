import Foundation
import StrataEngine
import StrataRecords

extension StoredEntity {
    /// How `entity` is stored.
    init(_ entity: Entity) {
        self.init(name: entity.name,
                  properties: entity.properties.map { StoredProperty(name: $0.name, type: $0.typeName, options: $0.declaration.options) },
                  unique: entity.uniqueGroups.map { $0.map { entity.properties[$0].name } },
                  indexes: entity.indexGroups.map { $0.map { entity.properties[$0].name } })
    }
}

extension StoredSchema {
    /// The schema stored in the store `reader` reads, or nil for a store without one.
    static func read(from reader: any StorageReader, path: String) throws -> StoredSchema? {
        guard let bytes = try reader.metadata(metadataKey) else { return nil }
        return try decode(bytes, path: path)
    }

    func write(to writer: any StorageWriter) throws {
        try writer.setMetadata(StoredSchema.metadataKey, Array(try JSONEncoder().encode(self)))
    }
}
