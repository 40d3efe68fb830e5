import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// One persisted property of a model class, an attribute or a relationship: where its storage
/// is in an object, and how its record field is written and read. Built once per class by
/// schema discovery; everything here works on objects through raw pointers and offsets, without
/// key paths or generics.
class PersistedProperty: @unchecked Sendable {
    let name: String
    /// The property's position among the entity's persisted properties: its record field, and
    /// its slot in the object's backing.
    let index: Int
    /// Byte offset of the property's storage inside an object.
    let offset: Int
    let declaration: AttributeDeclaration
    /// Where the storage keeps its link to the object's backing.
    let link: StorageLink
    /// For an attribute stored in its record field: its type's decoding of the field into the
    /// storage (at `offset`), which a new object's fields go through directly; nil: `decode`.
    /// (Each field was a call of `decode`, which only then looked at whether the value is
    /// external: 142 instructions of W7's object of eight fields; Docs/Benchmarks.md, "Costs".)
    let directDecode: ((UnsafeRawBufferPointer, UnsafeMutableRawPointer) throws -> Void)?

    init(name: String, offset: Int, index: Int, declaration: AttributeDeclaration, link: StorageLink,
         directDecode: ((UnsafeRawBufferPointer, UnsafeMutableRawPointer) throws -> Void)? = nil) {
        self.name = name
        self.offset = offset
        self.index = index
        self.declaration = declaration
        self.link = link
        self.directDecode = directDecode
    }

    @inline(__always)
    final func storage(_ object: AnyObject) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque()).advanced(by: offset)
    }

    var isUnique: Bool { declaration.has(.unique) }
    var isExternal: Bool { false }
    /// The type the model declares.
    var valueType: Any.Type { preconditionFailure("abstract") }
    /// A stable description of the value type, stored with the schema.
    var typeName: String { TypeNames.qualified(valueType) }
    /// True when index order is value order (numbers, dates, Bool).
    var keyOrderIsValueOrder: Bool { false }
    /// True when two values have equal index keys exactly when they are equal (`==`): a
    /// `UUID`, a `Bool`, a signed integer or one of at most 32 bits. Not strings (a long one's
    /// key is a digest) nor floating point (NaN has one key, yet is never `==` to itself).
    final var keysAreExactValues: Bool {
        let t = valueType
        return t == UUID.self || t == Bool.self || t == Int.self || t == Int64.self || t == Int32.self || t == Int16.self
            || t == Int8.self || t == UInt32.self || t == UInt16.self || t == UInt8.self
    }

    func hasValue(_ object: AnyObject) -> Bool { preconditionFailure("abstract") }
    func clear(_ object: AnyObject) { preconditionFailure("abstract") }
    /// Appends the property's field for `object`.
    func encode(_ object: AnyObject, into bytes: inout [UInt8], _ encoding: RecordEncoding) throws { preconditionFailure("abstract") }
    /// Decodes a field into `object` (whose backing, if it has one yet, is `backing`).
    func decode(_ field: UnsafeRawBufferPointer, into object: AnyObject, backing: ModelBacking? = nil) throws { preconditionFailure("abstract") }
    /// Appends the index key of `object`'s value.
    func appendKey(of object: AnyObject, to key: inout [UInt8]) {}
    /// Appends the index key of a field's value.
    func appendKey(ofField field: UnsafeRawBufferPointer, to key: inout [UInt8]) throws {}
    /// The index key of a value given as `Any` (a predicate's constant), if it is of this type.
    func keyOfConstant(_ value: ConstantValue) -> [UInt8]? {
        var key: [UInt8] = []
        // Room for the usual key (a UUID's is 17 bytes): growing an empty array one append at
        // a time cost a second allocation.
        key.reserveCapacity(32)
        return appendKeyOfConstant(value, to: &key) ? key : nil
    }
    /// Appends the index key of a predicate's constant, if it is of this type (else appends
    /// nothing and answers false).
    func appendKeyOfConstant(_ value: ConstantValue, to key: inout [UInt8]) -> Bool { false }
    /// The value in `object`, if any (for messages, faults and the slow paths).
    func value(of object: AnyObject) -> Any? { preconditionFailure("abstract") }
    /// The value of a field.
    func fieldValue(_ field: UnsafeRawBufferPointer) throws -> Any { preconditionFailure("abstract") }
    /// A `(RecordView) throws -> Value` closure reading this property, or nil when predicates
    /// on it take the slow path.
    func rowReader() -> Any? { nil }
    /// The fast comparison of this property with a constant, if its type has one.
    func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator) -> RowTest? { nil }
    /// The same comparison as data (`FieldCheck`), if its type has one.
    func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator) -> FieldCheck? { nil }
    /// True when `fieldCheck` may answer.
    var hasFieldCheck: Bool { false }
    /// A value of the property's type for the key-path probe, when the type gives one.
    func placeholder() -> Any? { nil }
    /// Puts marker value `variant` in the property; false if the type has none, or fewer.
    func setMarker(_ variant: Int, on object: AnyObject) -> Bool { false }
    /// True if `value` is marker `variant`.
    func isMarker(_ variant: Int, _ value: Any) -> Bool { false }
}

/// Where a property storage keeps its link to the object's backing: byte offsets inside it.
struct StorageLink: Equatable {
    let link: Int
    let slot: Int
    /// Where the first persisted property of an object retains the backing (nil: a transient).
    let keeper: Int?

    init<S>(_ type: S.Type, link: PartialKeyPath<S>, slot: PartialKeyPath<S>, keeper: PartialKeyPath<S>?) {
        self.link = MemoryLayout<S>.offset(of: link) ?? 0
        self.slot = MemoryLayout<S>.offset(of: slot) ?? 0
        self.keeper = keeper.flatMap { MemoryLayout<S>.offset(of: $0) }
    }

    private init(link: Int, slot: Int, keeper: Int?) {
        self.link = link
        self.slot = slot
        self.keeper = keeper
    }

    /// The same link, of a transient storage.
    var withoutKeeper: StorageLink { StorageLink(link: link, slot: slot, keeper: nil) }

    /// The link of a storage that holds this one at `offset`.
    func moved(by offset: Int) -> StorageLink { StorageLink(link: link + offset, slot: slot + offset, keeper: keeper.map { $0 + offset }) }
}

/// What a save hands down to the encoder of a record: nothing the encoder asks back for.
struct RecordEncoding {
    /// Rows that inserts moved to (an upsert onto a stored row), by entity, for relationship fields.
    var movedRows: [ObjectIdentifier: [RowID: RowID]] = [:]
    /// The blob this save wrote for each external value of the object, by property index.
    var blobs: [Int: UInt64] = [:]

    static let plain = RecordEncoding()
}

/// A problem found while discovering a model's schema.
struct SchemaProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
