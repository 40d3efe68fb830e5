import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension ModelContext {
    /// Drops unsaved inserts and deletions and restores changed objects' in-memory values to
    /// their saved state, telling their observers. Same as SwiftData's `rollback()`.
    public func rollback() {
        for backing in inserted.backings {
            unregister(backing)
            backing.detach()
        }
        for backing in deleted.backings {
            if backing.wasInserted {
                unregister(backing)
                backing.detach()
            } else {
                backing.status = .persisted
                if backing.isChanged { changed.append(backing) }
            }
        }
        for backing in changed.backings {
            backing.isChanged = false
            try? reload(backing.object, backing: backing)
        }
        inserted.removeAll()
        deleted.removeAll()
        changed.removeAll()
        batchDeletes.removeAll()
        storeBatchDeletes.removeAll()
        rowCache.removeAll()
    }
}
