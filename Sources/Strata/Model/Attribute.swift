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
/// Same as SwiftData's `@Attribute`, which SwiftData's `@Model` macro adds implicitly; Strata
/// has no macro, so every persisted property carries it (see API.md, "Porting").
@propertyWrapper
public struct Attribute<Value: Codable> {
    @usableFromInline var value: Value?
    @usableFromInline var backing: ModelBacking?
    @usableFromInline let declaration: AttributeDeclaration
    /// For `.externalStorage`: the stored value's blob (0: none), loaded when first read.
    @usableFromInline var external: UInt64 = 0

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

    /// The value. Setting it on a registered object marks the object changed.
    @inlinable public var wrappedValue: Value {
        get {
            if let value { return value }
            return unsetValue()
        }
        set {
            if let backing { backing.willChange() }
            value = newValue
        }
    }

    /// The slow path of the getter: a probe that maps key paths to properties, or a
    /// programmer error (a property read before it was ever set).
    @usableFromInline @inline(never)
    func unsetValue() -> Value {
        if external != 0, let backing, let loaded: Value = backing.loadExternal(external) {
            return loaded
        }
        if let backing {
            if backing.probeIndex >= 0 {
                backing.recordProbe()
                return Placeholder.make(Value.self)
            }
            preconditionFailure("\(backing.entity?.name ?? "A model"): a persisted property of type \(Value.self) was read before it was set. Set every persisted property in an initializer or give it a default value.")
        }
        preconditionFailure("A persisted property of type \(Value.self) was read before it was set. Set every persisted property of a model in its initializers or give it a default value.")
    }
}

extension Attribute: AttributeStorage {
    static var valueType: Any.Type { Value.self }
    static func makeProperty(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws -> AnyProperty {
        try Property<Value>(named: name, offset: offset, index: index, declaration: declaration)
    }
    var hasValue: Bool { value != nil }
    var attributeDeclaration: AttributeDeclaration { declaration }
}

/// What schema discovery needs from an `Attribute<Value>` it finds in a model's fields.
protocol AttributeStorage {
    static var valueType: Any.Type { get }
    static func makeProperty(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws -> AnyProperty
    var hasValue: Bool { get }
    var attributeDeclaration: AttributeDeclaration { get }
}

/// Marks a stored property of a model that is never persisted. Same as SwiftData's `@Transient`.
@propertyWrapper
public struct Transient<Value> {
    public var wrappedValue: Value
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
}

/// Marks fields of model classes that schema discovery skips.
protocol TransientStorage {}
extension Transient: TransientStorage {}
