import Foundation
import StrataEngine

/// The bookkeeping of one registered object: its context, row and state. Every `@Attribute`
/// storage of the object points to it; it goes away with the object, and then unregisters it.
@usableFromInline
final class ModelBacking {
    enum Status { case inserted, persisted, deleted, detached }

    let entity: Entity?
    var rowID: RowID
    weak var context: ModelContext?
    var status: Status
    /// A persisted object whose properties were set since it was loaded or saved.
    var isChanged = false
    /// A deleted object that was inserted in the same unsaved session.
    var wasInserted = false
    let storeIdentifier: String?
    /// For the key-path probe only: which property this storage is, and where to record reads.
    let probeIndex: Int
    private let session: ProbeSession?

    init(entity: Entity, rowID: RowID, context: ModelContext, status: Status, storeIdentifier: String?) {
        self.entity = entity
        self.rowID = rowID
        self.context = context
        self.status = status
        self.storeIdentifier = storeIdentifier
        self.probeIndex = -1
        self.session = nil
    }

    init(probeIndex: Int, session: ProbeSession) {
        self.entity = nil
        self.rowID = 0
        self.status = .detached
        self.storeIdentifier = nil
        self.probeIndex = probeIndex
        self.session = session
    }

    deinit {
        if probeIndex < 0, let context {
            context.objectWentAway(self)
        }
    }

    /// The object whose storages point here (set when it is registered).
    unowned(unsafe) var object: AnyObject?

    /// External-storage values loaded so far, by blob id.
    var externalCache: [UInt64: Any] = [:]
    /// For an object loaded with external values not read yet: its store, so that they can be
    /// read even after the context is gone (the store stays open while such objects live).
    var externalStore: StoreHandle?

    /// Loads (once) the value of an `.externalStorage` attribute from its blob.
    @usableFromInline
    func loadExternal<Value>(_ blob: UInt64) -> Value? {
        // (Look the entry up first: `nil as? Optional<T>` succeeds, with nil.)
        if let entry = externalCache[blob], let cached = entry as? Value { return cached }
        guard let entity, let handle = externalStore ?? context?.container.location(ofEntityNamed: entity.name)?.0,
              let value: Value = ModelContext.loadExternal(blob, from: handle) else { return nil }
        externalCache[blob] = value
        return value
    }

    func recordProbe() {
        session?.hits.append(probeIndex)
    }

    /// Called by a setter before it changes a value.
    @usableFromInline
    func willChange() {
        guard status == .persisted, !isChanged else { return }
        isChanged = true
        if let object { context?.objectDidChange(object, self) }
    }

}
