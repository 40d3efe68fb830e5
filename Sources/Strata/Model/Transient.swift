@_spi(StorageBackend) import StrataRecords
/// Marks a stored property of a model that is never persisted. Reading it is observed and
/// setting it notifies observers, as for SwiftData's `@Transient`. Same as SwiftData's `@Transient`.
@propertyWrapper
public struct Transient<Value> {
    @usableFromInline var value: Value
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0

    @inlinable public init(wrappedValue: Value) { value = wrappedValue }

    @available(*, unavailable, message: "@Transient is only available on properties of classes")
    public var wrappedValue: Value {
        get { preconditionFailure("unavailable") }
        set { preconditionFailure("unavailable") }
    }

    @inlinable
    public static subscript<Owner: AnyObject>(_enclosingInstance owner: Owner,
                                              wrapped wrapped: ReferenceWritableKeyPath<Owner, Value>,
                                              storage storage: ReferenceWritableKeyPath<Owner, Transient<Value>>) -> Value {
        @inline(__always) get {
            var link = owner[keyPath: storage].link
            var slot = owner[keyPath: storage].slot
            let value = owner[keyPath: storage].value
            if link == nil, ModelBacking.attachIfModel(owner) {
                link = owner[keyPath: storage].link
                slot = owner[keyPath: storage].slot
            }
            if let link { link._withUnsafeGuaranteedRef { $0.observe(slot) } }
            return value
        }
        @inline(__always) set {
            let link = owner[keyPath: storage].link
            let slot = owner[keyPath: storage].slot
            owner[keyPath: storage].value = newValue
            if let link { link._withUnsafeGuaranteedRef { $0.didSet(slot) } }
        }
    }
}
