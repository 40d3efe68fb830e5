import Foundation
import Observation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The one bookkeeping object of a model object: its model (entity), row, state and context,
/// its observation registrar, and what it holds beside the property storages (the blobs of
/// external values, the properties a partial fetch left unloaded). Every property storage of
/// the object links to it without retaining it; the object's first persisted property keeps it
/// alive, so it lives exactly as long as the object, and unregisters the object when it goes.
///
/// Lifetimes: a registered object keeps its container (and so its store) alive, and an object
/// without unsaved changes also keeps its context alive, so that it reads its relationships
/// through that context's identity map however it was fetched (`try ModelContext(container)
/// .fetch(d).first!.stops`). The context holds objects with unsaved changes strongly, so those
/// hold it only weakly (no reference cycle); if it goes away anyway, they read their
/// relationships through a context of the container made for them (`readingContext`).
@usableFromInline
final class ModelBacking {
    enum Status {
        /// In no context: new, rolled back, saved as deleted, or made only to evaluate a predicate.
        case detached
        case inserted, persisted, deleted
    }

    /// The object (not retained: it retains this backing).
    unowned(unsafe) let object: AnyObject
    /// (Not retained: entities live as long as the process, `EntityRegistry`.)
    unowned(unsafe) let entity: Entity
    @exclusivity(unchecked) var rowID: RowID
    /// The store the row is in (nil until the object is inserted). Not retained while the
    /// backing holds the object's container, whose handles live as long as it does; otherwise
    /// (a detached object, a scratch object) `handleKeeper` holds it. (Every object made from a
    /// record retained its entity, handle and container and released them when it went: six
    /// atomic operations an object, W7; Docs/Benchmarks.md, "Costs".)
    var handle: StoreHandle? {
        #if DEBUG
        // Debug builds (every test run) hold the unretained handle to being alive.
        assert(storedHandle == nil || handleWitness != nil, "an object's store handle went away before the object")
        #endif
        return storedHandle
    }
    @exclusivity(unchecked) private unowned(unsafe) var storedHandle: StoreHandle?
    @exclusivity(unchecked) private var handleKeeper: StoreHandle?
    #if DEBUG
    private weak var handleWitness: StoreHandle?
    private func setHandle(_ handle: StoreHandle?) {
        storedHandle = handle
        handleWitness = handle
    }
    #else
    @inline(__always) private func setHandle(_ handle: StoreHandle?) { storedHandle = handle }
    #endif
    /// The context the object is registered in. Held strongly (`contextAnchor`) while the
    /// context does not hold the object, weakly otherwise; an anchored object keeps no weak
    /// reference at all (forming, loading and destroying one cost an object read a twentieth
    /// of its time).
    var context: ModelContext? {
        get { contextAnchor ?? weakContext }
        set { place(newValue) }
    }
    private weak var weakContext: ModelContext?
    /// The identity map of the context the object is registered in (valid while the context
    /// lives), unretained.
    var identityMap: Unmanaged<IdentityMap>?
    /// (Setting the state it has already leaves the anchor as it is: every change of the
    /// context, the status or `isChanged` places it, so it is where they say. A save sets both
    /// for each of its objects, and each placement is a weak reference stored or cleared.)
    var status: Status { didSet { if status != oldValue { updateAnchor() } } }
    /// A persisted object whose properties were set since it was loaded or saved.
    var isChanged = false {
        didSet {
            if !isChanged { changedProperties = PropertyBits() }
            if isChanged != oldValue { updateAnchor() }
        }
    }
    /// Which persisted properties were set since the object was loaded or saved (for the
    /// history's updated attributes).
    @exclusivity(unchecked) var changedProperties = PropertyBits()
    /// A deleted object that was inserted in the same unsaved session.
    @exclusivity(unchecked) var wasInserted = false
    /// For an object of a custom store that keeps versions: the store's version of the values
    /// the object was read or saved with (`DefaultSnapshot.version`), sent with its update or
    /// deletion; 0 for none.
    @exclusivity(unchecked) var storeVersion: Int64 = 0
    /// The context, held strongly while it does not hold the object (see above).
    @exclusivity(unchecked) private var contextAnchor: ModelContext?
    /// The container of the context the object was registered in: the anchored context's, or
    /// `containerKeeper` while the object holds no context strongly (an anchored object
    /// retains only its context, which holds the container).
    private var container: ModelContainer? { contextAnchor?.container ?? containerKeeper }
    @exclusivity(unchecked) private var containerKeeper: ModelContainer?
    private var orphanReader: ModelContext? {
        get { extras?.orphanReader }
        set { if newValue != nil || extras != nil { madeExtras.orphanReader = newValue } }
    }
    /// What most objects never need (see `Extras`), made on first use. (The weak context and
    /// the container are fields of their own: every inserted object holds both, and an
    /// `Extras` made for each cost a bulk insert 4.5% more instructions, W1.)
    @exclusivity(unchecked) private var extras: Extras?
    private var madeExtras: Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    /// Made on the first observed read. (In a box: the registrar's type is resilient, and an
    /// optional of it is copied through value witnesses; an optional reference is not.)
    @exclusivity(unchecked) var observers: Observers?
    /// For `.externalStorage` attributes: the blob each stored value is in, by property index,
    /// and the values read from blobs so far. (Kept apart, made on first use: most objects
    /// have none, and two empty dictionaries made and released per object read showed.)
    var externalBlobs: [Int: UInt64] {
        get { extras?.blobs ?? Dictionary() }
        set { if !newValue.isEmpty || extras != nil { madeExtras.blobs = newValue } }
    }
    var externalCache: [Int: Any] {
        get { extras?.cache ?? Dictionary() }
        set { if !newValue.isEmpty || extras != nil { madeExtras.cache = newValue } }
    }
    /// True when some property's value is in a blob.
    var hasExternalBlobs: Bool { extras.map { !$0.blobs.isEmpty } ?? false }
    /// Properties a partial fetch (`propertiesToFetch`) did not load; they load on first access.
    var unloaded: Set<Int>? {
        get { extras?.unloaded }
        set { if newValue != nil || extras != nil { madeExtras.unloaded = newValue } }
    }
    /// For the key-path probe only: where reads are recorded.
    var probe: ProbeSession? { extras?.probe }
    /// False for objects made only to evaluate a predicate or a sort: nobody observes them.
    let isObserved: Bool

    /// A backing for an object that is in no context yet.
    init(object: AnyObject, entity: Entity) {
        self.object = object
        self.entity = entity
        self.rowID = 0
        self.status = .detached
        self.isObserved = true
    }

    /// A backing that only names a stored row, for an object made to evaluate a predicate or a
    /// sort on a record: `persistentModelID` is the row's, and nothing of it is registered,
    /// tracked or saved.
    init(object: AnyObject, entity: Entity, identityOf row: RowID, handle: StoreHandle?) {
        self.object = object
        self.entity = entity
        self.rowID = row
        self.storedHandle = handle
        self.handleKeeper = handle
        self.status = .detached
        self.isObserved = false
        #if DEBUG
        handleWitness = handle
        #endif
    }

    /// A backing for an object made from a stored record, registered in `context`.
    init(object: AnyObject, entity: Entity, row: RowID, handle: StoreHandle, context: ModelContext) {
        self.object = object
        self.entity = entity
        self.rowID = row
        self.storedHandle = handle
        self.status = .persisted
        self.isObserved = true
        // What `place(_:)` decides for a persisted object without changes (its context holds
        // its container, and the container its handle).
        self.contextAnchor = context
        #if DEBUG
        handleWitness = handle
        #endif
    }

    init(probeOf object: AnyObject, entity: Entity, session: ProbeSession) {
        self.object = object
        self.entity = entity
        self.rowID = 0
        self.status = .detached
        self.extras = Extras(probe: session)
        self.isObserved = false
    }

    deinit {
        guard probe == nil else { return }
        if contextAnchor != nil, let map = identityMap {
            // The anchored context is alive (this backing holds it), and so is its map: no
            // retain of the context to unregister (W7).
            map._withUnsafeGuaranteedRef { $0.remove(self) }
        } else if let context {
            context.unregister(self)
        }
    }

    /// Makes the object a member of `context`: its row in `handle`'s store and its state.
    func register(in context: ModelContext, row: RowID, handle: StoreHandle, status: Status) {
        rowID = row
        // (The container first: it holds the handle from here on.)
        containerKeeper = context.container
        setHandle(handle)
        if handleKeeper != nil { handleKeeper = nil }
        isChanged = false
        wasInserted = false
        self.status = status
        self.context = context
    }

    /// Takes the object out of its context (rolled back, or saved as deleted).
    func detach() {
        identityMap = nil
        status = .detached
        context = nil
        isChanged = false
    }

    /// The store's identifier, for `persistentModelID`.
    var storeIdentifier: String? { handle?.identifier }

    /// The object's identifier in its store (nil before it is in one).
    var storedIdentifier: PersistentIdentifier? {
        handle.map { $0.identifier(entity, rowID) }
    }

    private func updateAnchor() {
        place(context)
    }

    /// Holds `context` strongly or weakly, as the object's state asks (see the type's comment).
    private func place(_ context: ModelContext?) {
        if let context, probe == nil, status == .persisted, !isChanged {
            contextAnchor = context
            if weakContext != nil { weakContext = nil }
            if containerKeeper != nil { containerKeeper = nil }
            return
        }
        if probe == nil, status == .detached {
            // The handle outlives the container's hold on it (`persistentModelID`): kept
            // before the anchor or the keeper, which hold the container, go.
            if handleKeeper == nil, let handle = storedHandle { handleKeeper = handle }
            weakContext = context
            contextAnchor = nil
            containerKeeper = nil
            orphanReader = nil
            return
        }
        // The container is kept apart from the context now: from the anchor, before it goes.
        if containerKeeper == nil, let anchored = contextAnchor?.container { containerKeeper = anchored }
        weakContext = context
        contextAnchor = nil
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

    /// Marks a persisted object changed (a setter, or a relationship's other side).
    func markChanged() {
        guard status == .persisted, !isChanged else { return }
        // The context may be held only by this object's anchor, which the change drops: keep
        // it alive until it has taken the object into its changes.
        let context = self.context
        isChanged = true
        context?.objectDidChange(self)
    }
}

/// A set of property indexes: a word for the first 64, a set for the rest.
struct PropertyBits: Equatable {
    private var low: UInt64 = 0
    private var high: Set<Int>? = nil

    @inline(__always)
    mutating func insert(_ index: Int) {
        if index < 64 { low |= 1 << UInt64(index) } else { high = (high ?? []).union([index]) }
    }

    var isEmpty: Bool { low == 0 && (high?.isEmpty ?? true) }

    /// The indexes, in increasing order.
    var indexes: [Int] {
        var result: [Int] = []
        var bits = low
        while bits != 0 {
            result.append(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
        return result + (high?.sorted() ?? [])
    }
}

/// What a backing holds only in rare states, in one box: most objects have none of it, and
/// each field of its own was released (nil) with every backing (W7, Docs/Benchmarks.md,
/// "Costs").
final class Extras {
    @exclusivity(unchecked) var orphanReader: ModelContext?
    /// For `.externalStorage` attributes: the blob each stored value is in, by property index,
    /// and the values read from blobs so far.
    @exclusivity(unchecked) var blobs: [Int: UInt64] = [:]
    @exclusivity(unchecked) var cache: [Int: Any] = [:]
    @exclusivity(unchecked) var unloaded: Set<Int>?
    let probe: ProbeSession?

    init(probe: ProbeSession? = nil) { self.probe = probe }
}

/// An object's observation registrar.
final class Observers {
    let registrar = ObservationRegistrar()
}

/// Where a probe's getters record what was read.
final class ProbeSession: @unchecked Sendable {
    @exclusivity(unchecked) var hits: [Int] = []
}
