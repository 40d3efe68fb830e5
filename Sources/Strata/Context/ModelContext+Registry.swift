import StrataEngine
@_spi(StorageBackend) import StrataRecords

// The identity map: one object per stored row in a context.

extension ModelContext {
    /// The identity map of a model (made on first use).
    func identityMap(_ entity: Entity) -> IdentityMap { identityMapRef(entity).takeUnretainedValue() }

    /// The identity map of a model, unretained: the context holds it for its life. (For each
    /// object a fetch makes: a retained map cost a retain and a release an object, W7.)
    @inline(__always)
    func identityMapRef(_ entity: Entity) -> Unmanaged<IdentityMap> {
        let model = ObjectIdentifier(entity)
        if let last = lastIdentityMap, last.model == model { return last.map }
        return newIdentityMapRef(model)
    }

    @inline(never)
    private func newIdentityMapRef(_ model: ObjectIdentifier) -> Unmanaged<IdentityMap> {
        let map = identityMaps[model] ?? IdentityMap()
        identityMaps[model] = map
        let ref = Unmanaged.passUnretained(map)
        lastIdentityMap = (model, ref)
        return ref
    }

    func register(_ backing: ModelBacking) {
        let map = identityMap(backing.entity)
        map.insert(backing)
        backing.identityMap = .passUnretained(map)
    }

    /// Forgets an object's row (the object went away, was rolled back, or moved to another row).
    func unregister(_ backing: ModelBacking) {
        (backing.identityMap?.takeUnretainedValue() ?? identityMaps[ObjectIdentifier(backing.entity)])?.remove(backing)
    }

    func registeredBacking(_ entity: Entity, _ row: RowID) -> ModelBacking? {
        // (The map asked for last first: rows are looked up many at a time for one model.)
        let model = ObjectIdentifier(entity)
        if let last = lastIdentityMap, last.model == model { return last.map._withUnsafeGuaranteedRef { $0.backing(row) } }
        return identityMaps[model]?.backing(row)
    }

    /// False when no object of `entity` is registered (a loop over rows can skip the lookups).
    func hasRegisteredObjects(of entity: Entity) -> Bool {
        identityMaps[ObjectIdentifier(entity)].map { !$0.isEmpty } ?? false
    }

    func registeredObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        registeredBacking(entity, row)?.object
    }

    /// A persisted object was changed: the context holds it until it is saved.
    func objectDidChange(_ backing: ModelBacking) {
        changed.append(backing)
        if autosaveEnabled { autosaveIfNeeded() }
    }

    /// The backing of an object of any model of the container.
    func backingOf(_ object: AnyObject) -> ModelBacking? {
        EntityRegistry.shared.entity(forClassOf: object)?.backing(of: object)
    }
}
