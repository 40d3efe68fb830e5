import Foundation
@_spi(StorageBackend) import StrataRecords

/// Maps key paths to properties by reading them on a probe instance whose attribute storages
/// are empty and linked to a probe backing: the getter's slow path records which property was
/// read. The answer is then checked by writing two distinct marker values into that property
/// and reading them back through the key path, so a computed property is never taken for a
/// stored one.
final class KeyPathProber: @unchecked Sendable {
    private let lock = NSLock()
    /// The key paths asked about, and their answers. A list, not a dictionary: a model has few,
    /// and the first dictionary keyed by `AnyKeyPath` a process makes costs a scan of every
    /// protocol conformance loaded (W8, Docs/Benchmarks.md). Two lists side by side (-1: not a
    /// property's own key path): a list of pairs was two more metadata for a fresh process to
    /// make.
    private var cachedKeyPaths: [AnyKeyPath] = []
    private var cachedProperties: [Int] = []
    private let session = ProbeSession()
    private let probe: AnyObject
    private let backing: ModelBacking
    private unowned let entity: Entity
    private let apply: (AnyKeyPath) -> Any?

    init<T: PersistentModel>(_ type: T.Type, entity: Entity) {
        let probe = T()
        self.probe = probe
        self.entity = entity
        backing = ModelBacking(probeOf: probe, entity: entity, session: session)
        entity.attach(backing, to: probe)
        for p in entity.properties { p.clear(probe) }
        apply = { keyPath in
            guard let kp = keyPath as? PartialKeyPath<T> else { return nil }
            return probe[keyPath: kp]
        }
    }

    func property(for keyPath: AnyKeyPath) -> Int? {
        lock.withLock {
            if let known = cachedKeyPaths.firstIndex(where: { $0 == keyPath }) {
                let property = cachedProperties[known]
                return property >= 0 ? property : nil
            }
            session.hits.removeAll()
            _ = apply(keyPath)
            var found: Int? = nil
            if session.hits.count == 1, let hit = session.hits.first {
                found = confirmed(hit, keyPath) ? hit : nil
            }
            cachedKeyPaths.append(keyPath)
            cachedProperties.append(found ?? -1)
            return found
        }
    }

    /// True if `keyPath` reads property `hit` itself: its type is the property's, and (for an
    /// attribute) it reads back the marker values written into the property.
    private func confirmed(_ hit: Int, _ keyPath: AnyKeyPath) -> Bool {
        let property = entity.properties[hit]
        // Relationships have no marker values: the key path's type must be the property's.
        guard type(of: keyPath).valueType == property.valueType else { return false }
        if property is RelationshipProperty { return true }
        // Every marker the type has (at least two; all of an enum's cases): a computed property
        // that gives back some values unchanged and changes others must meet one it changes.
        var confirmed = true
        var variant = 0
        while confirmed, variant < 256, property.setMarker(variant, on: probe) {
            guard let read = apply(keyPath) else { confirmed = false; break }
            confirmed = property.isMarker(variant, read)
            variant += 1
        }
        property.clear(probe)
        return confirmed && variant >= 2
    }
}
