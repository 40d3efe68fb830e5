import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The opening half of the storage seam (the rest is StrataRecords' `Storage/StorageBackend.swift`):
// a provider opens the store of a `ModelConfiguration`, the object layer's description of a
// store, and makes its migration copies.

/// Where a container's stores come from: it opens each configuration's store, and makes the
/// copy a migration works on. `EngineStorageProvider` is StrataEngine's (the default).
@_spi(StorageBackend)
public protocol StorageProvider: Sendable {
    /// Opens the store of `configuration`, creating an empty one if there is none (and
    /// `configuration.allowsSave`).
    func open(_ configuration: ModelConfiguration) throws -> OpenedStorage
    /// A copy of the store of `configuration` for a migration to change and then put in the
    /// store's place; nil when there is no store yet (nothing to migrate).
    func prepareCopy(of configuration: ModelConfiguration) throws -> (any PreparedStoreCopy)?
}
