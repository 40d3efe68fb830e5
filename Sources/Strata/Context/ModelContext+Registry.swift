import StrataEngine

// The identity map: one object per stored row in a context.

extension ModelContext {
    func register(_ backing: ModelBacking) {
        registered[ObjectIdentifier(backing.entity), default: [:]][backing.rowID] = .passUnretained(backing)
    }

    /// Forgets an object's row (the object went away, was rolled back, or moved to another row).
    func unregister(_ backing: ModelBacking) {
        let model = ObjectIdentifier(backing.entity)
        guard let found = registered[model]?[backing.rowID], found.toOpaque() == Unmanaged.passUnretained(backing).toOpaque() else { return }
        registered[model]?.removeValue(forKey: backing.rowID)
    }

    func registeredBacking(_ entity: Entity, _ row: RowID) -> ModelBacking? {
        registered[ObjectIdentifier(entity)]?[row]?.takeUnretainedValue()
    }

    func registeredObject(_ entity: Entity, _ row: RowID) -> AnyObject? {
        registeredBacking(entity, row)?.object
    }

    /// A persisted object was changed: the context holds it until it is saved.
    func objectDidChange(_ object: AnyObject, _ backing: ModelBacking) {
        changed.append(object)
        if autosaveEnabled { autosaveIfNeeded() }
    }

    /// The backing of an object of any model of the container.
    func backingOf(_ object: AnyObject) -> ModelBacking? {
        EntityRegistry.shared.entity(forClassOf: object)?.backing(of: object)
    }
}
