import Foundation
import StrataEngine

extension ModelContext {
    /// Drops unsaved inserts and deletions and restores changed objects' in-memory values to
    /// their saved state, telling their observers. Same as SwiftData's `rollback()`.
    public func rollback() {
        for object in inserted.objects {
            guard let backing = backingOf(object) else { continue }
            unregister(backing)
            backing.detach()
        }
        for object in deleted.objects {
            guard let backing = backingOf(object) else { continue }
            if backing.wasInserted {
                unregister(backing)
                backing.detach()
            } else {
                backing.status = .persisted
                if backing.isChanged { changed.append(object) }
            }
        }
        for object in changed.objects {
            guard let backing = backingOf(object) else { continue }
            backing.isChanged = false
            try? reload(object, backing: backing)
        }
        inserted.removeAll()
        deleted.removeAll()
        changed.removeAll()
        batchDeletes.removeAll()
        rowCache.removeAll()
    }
}
