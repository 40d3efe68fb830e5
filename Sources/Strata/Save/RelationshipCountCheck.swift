import Foundation
@_spi(StorageBackend) import StrataRecords

// `minimumModelCount` and `maximumModelCount` of to-many relationships, checked for every
// object the save writes and every stored row whose relationship a rule edits.

extension RelationshipProperty {
    /// Throws when a to-many relationship holding `count` objects breaks its declared bounds.
    func checkCount(_ count: Int, of entity: Entity) throws {
        guard isToMany else { return }
        if let minimum = relationship.minimumModelCount, minimum > 0, count < minimum {
            throw StrataError(.relationshipCount, "\(entity.name).\(name) holds \(count) object(s); its minimumModelCount is \(minimum). Nothing was saved.")
        }
        if let maximum = relationship.maximumModelCount, maximum > 0, count > maximum {
            throw StrataError(.relationshipCount, "\(entity.name).\(name) holds \(count) object(s); its maximumModelCount is \(maximum). Nothing was saved.")
        }
    }
}

extension SaveOperation {
    /// Checks the to-many relationships of every object about to be saved.
    func checkRelationshipCounts() throws {
        func check(_ backing: ModelBacking) throws {
            backing.loadIfPartial()
            for relationship in backing.entity.relationships where relationship.isToMany {
                try relationship.checkCount(relationship.rows(of: backing.object).count, of: backing.entity)
            }
        }
        try context.inserted.forEachBacking(check)
        for backing in changed { try check(backing) }
    }
}
