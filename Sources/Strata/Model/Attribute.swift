import Foundation

/// An option of `@Attribute`, as in SwiftData's `Schema.Attribute.Option`.
public struct AttributeOption: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let bit: UInt16
    let name: String
    private init(_ bit: UInt16, _ name: String) { self.bit = bit; self.name = name }

    /// The value is unique among the stored objects of the model: inserting an object with a
    /// stored value updates that object instead (an upsert). Same as SwiftData's `.unique`.
    public static let unique = AttributeOption(1 << 0, "unique")
    /// The value is kept in a file of its own beside the store and loaded only when read.
    public static let externalStorage = AttributeOption(1 << 1, "externalStorage")
    /// Accepted for SwiftData compatibility. In Strata the value is persisted like any other
    /// (SwiftData documents `.ephemeral` as "track changes but do not persist").
    public static let ephemeral = AttributeOption(1 << 2, "ephemeral")
    /// No meaning on Linux (Spotlight indexing); accepted and ignored.
    public static let spotlight = AttributeOption(1 << 3, "spotlight")
    /// No meaning on Linux (CloudKit); accepted and ignored.
    public static let allowsCloudEncryption = AttributeOption(1 << 4, "allowsCloudEncryption")
    /// No meaning on Linux (history tombstones); accepted and ignored.
    public static let preserveValueOnDeletion = AttributeOption(1 << 5, "preserveValueOnDeletion")

    public var description: String { name }
}

/// What a property's declaration says: its options and former name.
@usableFromInline
struct AttributeDeclaration: Sendable, Hashable {
    @usableFromInline var options: UInt16 = 0
    @usableFromInline var originalName: String? = nil

    @inlinable init(options: UInt16 = 0, originalName: String? = nil) {
        self.options = options
        self.originalName = originalName
    }

    func has(_ option: AttributeOption) -> Bool { options & option.bit != 0 }
}

/// Marks a stored property of a model as persisted, with optional options.
///
/// ```swift
/// final class Trip: PersistentModel {
///     @Attribute(.unique) var id: UUID
///     @Attribute var name: String
///     @Attribute var budget: Double? = nil
///     @Attribute(originalName: "start") var startDate: Date = .now
///     init() {}
/// }
/// ```
/// Same as SwiftData's `@Attribute`, which SwiftData's `@Model` macro adds implicitly; without
/// the macro every persisted property carries it (see API.md, "Porting"). Reading the property
/// is observed and setting it notifies observers (`Observation`), as for SwiftData's models.
///
/// The storage holds the value, and the object's link to its one `ModelBacking` (Strata writes
/// it when the object is registered; the first property of an object also keeps the backing
/// alive). Its accessors read the storage first and call into Strata after, so that the
/// compiler needs no run-time exclusivity checks for it.
@propertyWrapper
public struct Attribute<Value: Codable> {
    @usableFromInline var value: Value?
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0
    /// The backing, retained: set in an object's first persisted property only.
    @usableFromInline var keeper: ModelBacking? = nil
    @usableFromInline let declaration: AttributeDeclaration

    /// A persisted property without options, whose value is assigned in an initializer.
    @inlinable public init() {
        declaration = AttributeDeclaration()
    }

    /// A persisted property with a default value.
    @inlinable public init(wrappedValue: Value) {
        value = wrappedValue
        declaration = AttributeDeclaration()
    }

    /// A persisted property with options (and, for a renamed property, its former name).
    @inlinable public init(_ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil) {
        declaration = AttributeDeclaration(options: options.reduce(0) { $0 | $1.bit }, originalName: originalName)
    }

    /// A persisted property with options and a default value.
    @inlinable public init(wrappedValue: Value, _ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil) {
        value = wrappedValue
        declaration = AttributeDeclaration(options: options.reduce(0) { $0 | $1.bit }, originalName: originalName)
    }

    @available(*, unavailable, message: "@Attribute is only available on properties of classes")
    public var wrappedValue: Value {
        get { preconditionFailure("unavailable") }
        set { preconditionFailure("unavailable") }
    }

    /// The value, observed. Setting it on a registered object marks the object changed.
    @inlinable
    public static subscript<Owner: AnyObject>(_enclosingInstance owner: Owner,
                                              wrapped wrapped: ReferenceWritableKeyPath<Owner, Value>,
                                              storage storage: ReferenceWritableKeyPath<Owner, Attribute<Value>>) -> Value {
        @inline(__always) get {
            var link = owner[keyPath: storage].link
            var slot = owner[keyPath: storage].slot
            let value = owner[keyPath: storage].value
            if link == nil, ModelBacking.attachIfModel(owner) {
                link = owner[keyPath: storage].link
                slot = owner[keyPath: storage].slot
            }
            guard let link else {
                if let value { return value }
                ModelBacking.unset(Value.self, in: owner)
            }
            link._withUnsafeGuaranteedRef { $0.observe(slot) }
            if let value { return value }
            return link._withUnsafeGuaranteedRef { $0.missingValue(slot) }
        }
        @inline(__always) set {
            let link = owner[keyPath: storage].link
            let slot = owner[keyPath: storage].slot
            owner[keyPath: storage].value = newValue
            if let link { link._withUnsafeGuaranteedRef { $0.didSet(slot) } }
        }
    }
}

extension Attribute: AttributeStorage {
    static func makeProperty(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws -> PersistedProperty {
        let access: AttributeAccess
        do { access = try StoredValues.access(for: Value.self) } catch let problem as SchemaProblem {
            throw SchemaProblem("\(name): \(problem.message)")
        }
        return AttributeProperty(name: name, offset: offset, index: index, declaration: declaration, access: access,
                                 link: StorageLink(Attribute<Value>.self, link: \.link, slot: \.slot, keeper: \.keeper))
    }
    var attributeDeclaration: AttributeDeclaration { declaration }
}

/// What schema discovery needs from an `Attribute<Value>` it finds in a model's fields.
protocol AttributeStorage {
    static func makeProperty(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws -> PersistedProperty
    var attributeDeclaration: AttributeDeclaration { get }
}
