import Foundation
import Synchronization
@_spi(StorageBackend) import StrataRecords

/// An option of `@Attribute`, as in SwiftData's `Schema.Attribute.Option`.
///
/// (Two words, one of them a reference that is nil but for `.transformable`: every object made
/// from a record runs its class's `init()`, and with it each `@Attribute(options...)`. An
/// option that held its name and a transformer reference cost 213 instructions an
/// object for one `.unique`, W7; Docs/Benchmarks.md, "Costs".)
public struct AttributeOption: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let bit: UInt16
    /// The transformer of `.transformable(by:)`, boxed.
    @usableFromInline let transformerBox: TransformerBox?

    @inlinable init(bit: UInt16) {
        self.bit = bit
        transformerBox = nil
    }

    private init(transformer: TransformerReference, bit: UInt16) {
        self.bit = bit
        transformerBox = TransformerBox(transformer)
    }

    /// The value is unique among the stored objects of the model: inserting an object with a
    /// stored value updates that object instead (an upsert). Same as SwiftData's `.unique`.
    @inlinable public static var unique: AttributeOption { AttributeOption(bit: 1 << 0) }
    /// The value is kept in a file of its own beside the store and loaded only when read.
    @inlinable public static var externalStorage: AttributeOption { AttributeOption(bit: 1 << 1) }
    /// The value lives in the object only: it is observed, never written to the store, and an
    /// object fetched from the store holds its declaration's default. Same as SwiftData's
    /// `.ephemeral` ("track changes to this property but do not persist"). (A value an older
    /// version of the model persisted is dropped at the next save of its object.)
    @inlinable public static var ephemeral: AttributeOption { AttributeOption(bit: 1 << 2) }
    /// No meaning on Linux (Spotlight indexing); accepted and ignored.
    @inlinable public static var spotlight: AttributeOption { AttributeOption(bit: 1 << 3) }
    /// No meaning on Linux (CloudKit); accepted and ignored.
    @inlinable public static var allowsCloudEncryption: AttributeOption { AttributeOption(bit: 1 << 4) }
    /// The value is kept in the tombstone of the object's deletion in the store's history
    /// (`HistoryDelete.tombstone`). Same as SwiftData's `.preserveValueOnDeletion`.
    @inlinable public static var preserveValueOnDeletion: AttributeOption { AttributeOption(bit: 1 << 5) }
    /// The bit of `.transformable`.
    static let transformableBit: UInt16 = 1 << 6

    /// The value is stored as the `Data` that a `ValueTransformer` of the given class makes of
    /// it (`transformedValue(_:)`), and read back with `reverseTransformedValue(_:)`: for a type
    /// that is not `Codable`. Same as SwiftData's `.transformable(by:)`.
    public static func transformable(by transformerType: ValueTransformer.Type) -> AttributeOption {
        AttributeOption(transformer: TransformerReference(type: transformerType), bit: transformableBit)
    }

    /// The value is stored through the `ValueTransformer` registered under `transformerName`
    /// (`ValueTransformer.setValueTransformer(_:forName:)`, before the container opens). Same as
    /// SwiftData's `.transformable(by:)` with a name.
    public static func transformable(by transformerName: String) -> AttributeOption {
        AttributeOption(transformer: TransformerReference(name: transformerName), bit: transformableBit)
    }

    /// The `.transformable` option of a declaration's transformer, as a schema lists it.
    init(transformer: TransformerReference) {
        self.init(transformer: transformer, bit: Self.transformableBit)
    }

    /// The transformer of `.transformable(by:)`.
    var transformer: TransformerReference? { transformerBox?.reference }

    /// The option's name, as stored schemas and `Schema` list it.
    var name: String {
        if bit == Self.transformableBit { return "transformable" }
        return StoredOption.all.first { $0.bit == bit }?.name ?? "option \(bit)"
    }

    public var description: String { transformer.map { "transformable(by: \($0.name))" } ?? name }

    public static func == (a: AttributeOption, b: AttributeOption) -> Bool { a.bit == b.bit && a.transformer == b.transformer }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bit)
        hasher.combine(transformer)
    }
}

/// A `.transformable` option's transformer, in a box: an option without one holds nil, and is
/// copied without reference counting.
@usableFromInline
final class TransformerBox: Sendable {
    let reference: TransformerReference
    init(_ reference: TransformerReference) { self.reference = reference }
}

/// What a property's declaration says: its options and former name.
@usableFromInline
struct AttributeDeclaration: Sendable, Hashable {
    @usableFromInline var options: UInt16 = 0
    /// The former name, empty for none. (Not an optional: each declaration copied at open
    /// copied a `String?` through metadata the runtime made for it, W8.)
    @usableFromInline var formerName: String = ""
    /// The transformer, one without a name for none (as `formerName`, not an optional).
    @usableFromInline var transformerReference = TransformerReference.none

    /// The property's transformer (`.transformable(by:)`), if it has one.
    @inlinable var transformer: TransformerReference? {
        get { transformerReference.isNone ? nil : transformerReference }
        set { transformerReference = newValue ?? .none }
    }

    /// The property's former name (`@Attribute(originalName:)`), if it has one.
    @inlinable var originalName: String? {
        get { formerName.isEmpty ? nil : formerName }
        set { formerName = newValue ?? "" }
    }

    @inlinable init(options: UInt16 = 0, originalName: String? = nil, transformer: TransformerReference? = nil) {
        self.options = options
        self.formerName = originalName ?? ""
        self.transformerReference = transformer ?? .none
    }

    /// The declaration of `@Attribute(options..., originalName:)`.
    init(_ options: [AttributeOption], originalName: String?) {
        self.init(options: options.reduce(0) { $0 | $1.bit }, originalName: originalName,
                  transformer: options.lazy.compactMap { $0.transformer }.first)
    }

    func has(_ option: AttributeOption) -> Bool { options & option.bit != 0 }
}

/// An `AttributeDeclaration` as every object's property storage keeps it: the options, and for
/// the rare declaration with a former name or a transformer, its number in a process-wide table.
/// (Kept whole, a declaration put a string and a transformer reference in each property of
/// each object, released one by one whenever an object went away.)
@usableFromInline
struct DeclaredAttribute: Sendable {
    @usableFromInline let options: UInt16
    /// 0: no former name and no transformer; otherwise 1 + the declaration's index in `interned`.
    @usableFromInline let extra: UInt32

    @inlinable init(_ declaration: AttributeDeclaration) {
        options = declaration.options
        extra = declaration.formerName.isEmpty && declaration.transformerReference.isNone ? 0 : DeclaredAttribute.intern(declaration)
    }

    /// The declaration of `@Attribute(options..., originalName:)`: the options' bits, and only
    /// for a former name or a transformer, the whole declaration interned.
    @inlinable init(_ options: [AttributeOption], originalName: String?) {
        var bits: UInt16 = 0
        var transformed = false
        for option in options {
            bits |= option.bit
            if option.transformerBox != nil { transformed = true }
        }
        self.options = bits
        extra = originalName == nil && !transformed ? 0 : DeclaredAttribute.intern(options, originalName: originalName)
    }

    @inlinable init() {
        options = 0
        extra = 0
    }

    /// The declaration it stands for.
    var declaration: AttributeDeclaration {
        guard extra != 0 else { return AttributeDeclaration(options: options) }
        return DeclaredAttribute.interned.withLock { $0.declarations[Int(extra) - 1] }
    }

    /// The interned declarations, by number (from 1) and by value. (Not a `Table`: those are
    /// stores' tables of a model, Storage/Table.swift.)
    private struct InternedDeclarations {
        var declarations: [AttributeDeclaration] = []
        var numbers: [AttributeDeclaration: UInt32] = [:]
    }

    private static let interned = Mutex(InternedDeclarations())

    /// The number of a declaration with a former name or a transformer (the same for equal
    /// declarations, so the list grows with the declarations a program has, not its objects).
    @usableFromInline
    static func intern(_ options: [AttributeOption], originalName: String?) -> UInt32 {
        intern(AttributeDeclaration(options, originalName: originalName))
    }

    @usableFromInline
    static func intern(_ declaration: AttributeDeclaration) -> UInt32 {
        interned.withLock { interned in
            if let number = interned.numbers[declaration] { return number }
            interned.declarations.append(declaration)
            let number = UInt32(interned.declarations.count)
            interned.numbers[declaration] = number
            return number
        }
    }
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
public struct Attribute<Value> {
    // The value comes last, so that where the other fields are does not depend on its type
    // (`Attribute.links`).
    /// The object's backing (unretained), and this property's slot in it.
    @usableFromInline var link: Unmanaged<ModelBacking>? = nil
    @usableFromInline var slot: Int32 = 0
    /// The backing, retained: set in an object's first persisted property only.
    @usableFromInline var keeper: ModelBacking? = nil
    @usableFromInline let declared: DeclaredAttribute
    @usableFromInline var value: Value?

    /// A persisted property without options, whose value is assigned in an initializer.
    @inlinable public init() where Value: Codable {
        declared = DeclaredAttribute()
    }

    /// A persisted property with a default value.
    @inlinable public init(wrappedValue: Value) where Value: Codable {
        value = wrappedValue
        declared = DeclaredAttribute()
    }

    /// A persisted property with options (and, for a renamed property, its former name).
    /// (The value type must be `Codable`, or the options name a transformer: see
    /// `.transformable(by:)`; otherwise opening a container says which property it is.)
    @inlinable public init(_ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil) {
        declared = DeclaredAttribute(options, originalName: originalName)
    }

    /// A persisted property with options and a default value.
    @inlinable public init(wrappedValue: Value, _ options: AttributeOption..., originalName: String? = nil, hashModifier: String? = nil) {
        value = wrappedValue
        declared = DeclaredAttribute(options, originalName: originalName)
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

extension Attribute {
    static func makeProperty(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws -> PersistedProperty {
        let access: AttributeAccess
        do {
            if let transformer = declaration.transformer {
                access = try AttributeAccess.transformed(Value.self, by: transformer)
            } else if let known = ModelValues.knownAccess(Value.self) {
                // A stored value type, its optional or its array: no cast, which would scan
                // the process's conformance records (see `ModelFieldStorage`).
                access = known
            } else if let codable = Value.self as? any Codable.Type {
                access = try ModelValues.access(for: codable)
            } else {
                throw SchemaProblem("\(Value.self) is not Codable; store it with @Attribute(.transformable(by: SomeValueTransformer.self)) or mark the property @Transient")
            }
        } catch let problem as SchemaProblem {
            throw SchemaProblem("\(name): \(problem.message)")
        }
        return AttributeProperty(name: name, offset: offset, index: index, declaration: declaration, access: access,
                                 link: attributeLinks)
    }
    /// Where its link to the backing is, for an `.ephemeral` attribute (observed, not persisted).
    static var storageLink: StorageLink { attributeLinks.withoutKeeper }
}

/// Where an `Attribute` storage keeps its link, slot and keeper: the same for every value type,
/// since they come before the value, so found once on one of them. (Found with key paths of
/// each `Attribute<Value>`, it made key path objects and their metadata for each value type: a
/// tenth of a fresh process's first open. `AttributeLayoutTests` holds the two equal.)
let attributeLinks = StorageLink(Attribute<UInt8>.self, link: \.link, slot: \.slot, keeper: \.keeper)
