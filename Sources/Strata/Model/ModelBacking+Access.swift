import Foundation
import Observation
import StrataEngine
import Synchronization
@_spi(StorageBackend) import StrataRecords

// What the accessors of `@Attribute`, `@Relationship` and `@Transient` properties call, after
// they have read the property's storage: observation, change tracking, and the slow paths of a
// value that is not in the storage (an external value in a blob, a property a partial fetch
// did not load, the key-path probe).

/// Observers of a property are registered with the object's registrar under the key path
/// `\ModelBacking.[observed: slot]` (a slot per persisted, then transient, property): key paths
/// of Strata's own, so that the model's key paths never leave the accessors.
extension ModelBacking: Observable {
    subscript(observed slot: Int) -> Int { slot }

    /// `\ModelBacking.[observed: slot]`, made the first time a slot is observed in the process
    /// and shared by every model. A key path with an argument costs about 10k instructions to
    /// make: a model's own list was a twentieth of a fresh process's first open (W8), and a
    /// list made for every model at open was still 3% of it, for objects nobody observes.
    static func observationKeyPath(_ slot: Int) -> KeyPath<ModelBacking, Int> {
        sharedObservationKeyPaths.withLock { made in
            while made.count <= slot { made.append(\ModelBacking.[observed: made.count]) }
            return made[slot]
        }
    }
}

private let sharedObservationKeyPaths = Mutex<[KeyPath<ModelBacking, Int>]>([])

extension ModelBacking {
    /// Records a read of property `slot` for `withObservationTracking`.
    ///
    /// An object gets its registrar only when a read of it is tracked: most objects are read
    /// and dropped with nobody observing, and a registrar is three allocations made and torn
    /// down per object (Docs/Benchmarks.md, "Costs"). Whether this thread is
    /// tracking is asked of `TrackingProbe` (see there).
    @usableFromInline
    func observe(_ slot: Int32) {
        guard isObserved else { return }
        // The registrar's access apart: where it was inline, every read looked up the
        // registrar's type (resilient) and made room for a copy of it first, about a third of
        // each untracked read's instructions (W7, Docs/Benchmarks.md, "Costs").
        if observers != nil || TrackingProbe.isTracking() { recordAccess(slot) }
    }

    @inline(never)
    private func recordAccess(_ slot: Int32) {
        (observers ?? makeObservers()).registrar.access(self, keyPath: Self.observationKeyPath(Int(slot)))
    }

    /// After a setter changed property `slot`: the object is changed (a persisted property)
    /// and its observers are told.
    @usableFromInline
    func didSet(_ slot: Int32) {
        let index = Int(slot)
        if index < entity.properties.count {
            if status == .persisted {
                changedProperties.insert(index)
                if !isChanged { markChanged() }
            }
            if unloaded != nil { unloaded?.remove(index) }
        }
        notifyObservers(index)
    }

    private func makeObservers() -> Observers {
        let made = Observers()
        observers = made
        return made
    }

    /// Tells the observers of property `slot` that it changed (no-op when nobody observed the object).
    func notifyObservers(_ slot: Int) {
        guard let registrar = observers?.registrar else { return }
        let keyPath = Self.observationKeyPath(slot)
        registrar.willSet(self, keyPath: keyPath)
        registrar.didSet(self, keyPath: keyPath)
    }

    /// The value of persisted property `slot` when its storage has none: a value kept in a
    /// blob, a property not loaded yet, a probe's read, or a programmer error.
    @usableFromInline
    func missingValue<V>(_ slot: Int32) -> V {
        let index = Int(slot)
        if let probe {
            if index < entity.properties.count {
                probe.hits.append(index)
                if let value = entity.properties[index].placeholder() as? V { return value }
            }
            return Placeholder.make(V.self)
        }
        if unloaded?.contains(index) == true, loadUnloaded(), let value = entity.properties[index].value(of: object) as? V {
            return value
        }
        if let blob = externalBlobs[index], blob != 0, let value: V = loadExternal(index, blob: blob) { return value }
        // An `.ephemeral` attribute (a slot past the persisted ones) declared without a default,
        // on an object read from the store: it was never written, so it reads as an empty value.
        if index >= entity.properties.count { return Placeholder.make(V.self) }
        preconditionFailure("\(entity.name).\(entity.properties[index].name): a persisted property of type \(V.self) was read before it was set. Set every persisted property in an initializer or give it a default value.")
    }

    /// A property read before it was ever set, on an object Strata has no backing for.
    @usableFromInline
    static func unset<V>(_ type: V.Type, in object: AnyObject) -> Never {
        preconditionFailure("\(Swift.type(of: object)): a persisted property of type \(V.self) was read before it was set. Set every persisted property of a model in its initializers or give it a default value.")
    }

    /// Gives an object of a model class that has no backing yet (a new object read for the
    /// first time) one, so that its properties are observed. False for a class that is not a
    /// model Strata can discover, or while it is being discovered.
    @usableFromInline
    static func attachIfModel(_ object: AnyObject) -> Bool {
        guard let entity = EntityRegistry.shared.attachableEntity(for: type(of: object)) else { return false }
        if entity.backing(of: object) == nil { entity.attach(ModelBacking(object: object, entity: entity), to: object) }
        return true
    }

    // MARK: Relationships

    /// The value of relationship `slot`: the related objects, loaded through the context.
    @usableFromInline
    func relationshipValue<V: RelationshipValue>(_ slot: Int32) -> V {
        let index = Int(slot)
        if let probe {
            probe.hits.append(index)
            return V.relationshipValue([])
        }
        observe(slot)
        let property = entity.relationship(at: index)
        if property.references(of: object) == nil, unloaded?.contains(index) == true { _ = loadUnloaded() }
        guard let references = property.references(of: object) else {
            preconditionFailure("\(entity.name).\(property.name): a relationship of type \(V.self) was read before it was set. Give it a default value (= nil or = []) or set it in the initializer.")
        }
        return V.relationshipValue(references.compactMap { property.object(of: $0, context: readingContext) })
    }

    /// Sets relationship `slot` (and the other side, for objects in a context).
    @usableFromInline
    func assignRelationship(_ slot: Int32, _ objects: [AnyObject]) {
        guard probe == nil else { return }
        entity.relationship(at: Int(slot)).assign(objects, to: object, backing: self)
    }

    /// After a relationship's other side changed this object's relationship `index`.
    func relationshipDidChange(_ index: Int) {
        markChanged()
        if status == .persisted { changedProperties.insert(index) }
        notifyObservers(index)
    }

    // MARK: Values outside the storage

    /// Loads (once) the value of an `.externalStorage` attribute from its blob.
    func loadExternal<V>(_ index: Int, blob: UInt64) -> V? {
        // (Look the entry up first: `nil as? Optional<T>` succeeds, with nil.)
        if let entry = externalCache[index], let cached = entry as? V { return cached }
        guard let handle, let property = entity.properties[index] as? AttributeProperty,
              let value = try? handle.storage.loadBlob(blob, as: property.access) as? V else { return nil }
        externalCache[index] = value
        return value
    }

    /// Loads what a partial fetch left out, before a relationship is edited or read as a whole.
    func loadIfPartial() {
        if unloaded != nil { _ = loadUnloaded() }
    }

    /// Reads the properties a partial fetch left out from the object's record. False when the
    /// record cannot be read (then the values stay missing).
    func loadUnloaded() -> Bool {
        guard let missing = unloaded, let handle, let table = handle.table(for: entity) else { return false }
        do {
            let found: Void? = try handle.storage.read { reader in
                try reader.withRecord(rowID, in: table) { view in
                    for index in missing.sorted() { try entity.properties[index].decode(try view.field(index), into: object) }
                }
            }
            guard found != nil else { return false }
        } catch {
            return false
        }
        unloaded = nil
        return true
    }
}

/// Tells whether the calling thread is inside `withObservationTracking` (or anything else that
/// collects accesses), without a registrar of the object being read.
///
/// Observation has no public way to ask. What it does have: `ObservationRegistrar.access`
/// does nothing unless the thread is tracking, and when it is, it inserts the key path into
/// the tracking's set of accessed properties, which hashes the key path, and hashing a key
/// path with a subscript argument hashes the argument. So one shared registrar is asked to
/// record an access to `\TrackingProbe.[probe: Marker()]`, and `Marker.hash(into:)` counts.
/// The count is process-wide: another thread's tracked access in the same instant makes a
/// registrar that was not needed, which is harmless; a tracked read on this thread always
/// moves it, so a tracked read is never missed. A tracking session that read Strata objects
/// also registers with the shared registrar, which never changes; the session's cancellation
/// (it cancels itself when it fires) removes that as it does its others. A session that never
/// fires and is never cancelled stays registered there for the life of the process, as it
/// would with any long-lived observable object (before, it went away with the objects read).
/// The registrar is not replaced to bound that: a registrar going away tells its sessions
/// that something changed.
///
/// If a future Observation stopped hashing on access, no object would get a registrar and
/// observers would never fire: `ObservationTests` and `TrackingProbeTests` fail then.
final class TrackingProbe: Observable, Sendable {
    /// The argument whose hashing reveals a tracked access.
    struct Marker: Hashable, Sendable {
        static func == (_: Marker, _: Marker) -> Bool { true }
        func hash(into hasher: inout Hasher) {
            TrackingProbe.hashes.add(1, ordering: .relaxed)
        }
    }

    subscript(probe marker: Marker) -> Int { 0 }

    private static let hashes = Atomic<UInt>(0)
    private let registrar = ObservationRegistrar()
    private let keyPath = \TrackingProbe.[probe: Marker()]
    /// The probe, as its address: 0 until the first read asks, then the probe made then, which
    /// lives forever and is lent unretained (no reference counting, and no copy of the
    /// registrar, a resilient type copied through its value witnesses). An atomic word with a
    /// constant first value needs no one-time initialization check on each read, as a `static
    /// let` of an object does, and the probe is not made before a read (a store's open).
    private static let shared = Atomic<UInt>(0)

    /// True when the calling thread is collecting observed accesses (or, rarely, when another
    /// thread's tracked access happened in the same instant).
    @inline(__always)
    static func isTracking() -> Bool {
        var address = shared.load(ordering: .acquiring)
        if address == 0 { address = publish() }
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return false }
        let before = hashes.load(ordering: .relaxed)
        Unmanaged<TrackingProbe>.fromOpaque(pointer)._withUnsafeGuaranteedRef { probe in
            probe.registrar.access(probe, keyPath: probe.keyPath)
        }
        return hashes.load(ordering: .relaxed) != before
    }

    /// Makes the probe, unless another thread just did: the address every thread then uses.
    @inline(never)
    private static func publish() -> UInt {
        let made = Unmanaged.passRetained(TrackingProbe())
        let address = UInt(bitPattern: made.toOpaque())
        let (published, current) = shared.compareExchange(expected: 0, desired: address, ordering: .acquiringAndReleasing)
        if published { return address }
        made.release()
        return current
    }
}
