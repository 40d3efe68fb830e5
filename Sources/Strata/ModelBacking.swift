import Foundation
import StrataEngine

/// The bookkeeping of one registered object: its context, row and state. Every `@Attribute`
/// storage of the object points to it; it goes away with the object, and then unregisters it.
///
/// Lifetimes: a registered object keeps its container (and so its store) alive, and an object
/// without unsaved changes also keeps its context alive, so that it reads its relationships
/// through that context's identity map however it was fetched (`try ModelContext(container)
/// .fetch(d).first!.stops`). The context holds objects with unsaved changes strongly, so those
/// hold it only weakly (no reference cycle); if it goes away anyway, they read their
/// relationships through a context of the container made for them (`readingContext`).
@usableFromInline
final class ModelBacking {
    enum Status { case inserted, persisted, deleted, detached }

    let entity: Entity?
    var rowID: RowID
    weak var context: ModelContext? { didSet { updateAnchor() } }
    var status: Status { didSet { updateAnchor() } }
    /// A persisted object whose properties were set since it was loaded or saved.
    var isChanged = false { didSet { updateAnchor() } }
    /// The context, held strongly while it does not hold the object (see above).
    private var contextAnchor: ModelContext?
    /// The container of the context the object was registered in.
    private(set) var container: ModelContainer?
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
        self.container = context.container
        updateAnchor()
    }

    /// A backing that only names a stored row (entity, row, store), for an object made to
    /// evaluate a predicate or a sort on a record: `persistentModelID` is the row's, and
    /// nothing of it is registered, tracked or saved.
    init(identityOf row: RowID, entity: Entity, storeIdentifier: String?) {
        self.entity = entity
        self.rowID = row
        self.status = .detached
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

    private func updateAnchor() {
        guard probeIndex < 0 else { return }
        if status == .detached || context == nil {
            contextAnchor = nil
            if status == .detached { container = nil }
            return
        }
        contextAnchor = status == .persisted && !isChanged ? context : nil
    }

    /// The context to read related objects through: the object's own, or, if it went away
    /// while the object had unsaved changes, a context of the same container made for it.
    var readingContext: ModelContext? {
        if let context { return context }
        guard status != .detached, let container else { return nil }
        if let orphanReader { return orphanReader }
        let made = ModelContext(container)
        orphanReader = made
        return made
    }
    private var orphanReader: ModelContext?

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
        // The context may be held only by this object's anchor, which the change drops: keep
        // it alive until it has taken the object into its changes.
        let context = self.context
        isChanged = true
        if let object { context?.objectDidChange(object, self) }
    }

}
