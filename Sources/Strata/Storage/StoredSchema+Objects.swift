import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension StoredEntity {
    /// How `entity` is stored.
    init(_ entity: Entity) {
        self.init(name: entity.name,
                  properties: entity.properties.map { StoredProperty(name: $0.name, type: $0.typeName, options: $0.declaration.options) },
                  unique: entity.uniqueGroups.map { $0.map { entity.properties[$0].name } },
                  indexes: entity.indexGroups.map { $0.map { entity.properties[$0].name } })
    }
}
