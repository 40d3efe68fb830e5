@_spi(Reflection) import Swift
import Foundation
import StrataEngine

/// One persisted property of a model class: where its `Attribute` lives in the object, and
/// how its values are encoded and indexed. Built once per class by schema discovery.
class AnyProperty: @unchecked Sendable {
    let name: String
    let index: Int
    /// Byte offset of the property's `Attribute` storage inside an instance.
    let offset: Int
    let declaration: AttributeDeclaration

    init(name: String, offset: Int, index: Int, declaration: AttributeDeclaration) {
        self.name = name
        self.offset = offset
        self.index = index
        self.declaration = declaration
    }

    var isUnique: Bool { declaration.has(.unique) }
    /// The type, when predicates compare it with a constant on the field's bytes
    /// (ScalarComparison); nil for every other type.
    var scalarKind: ScalarComparison.Kind? { nil }
    var valueType: Any.Type { preconditionFailure("abstract") }
    /// A stable description of the value type, stored with the schema.
    var typeName: String { String(reflecting: valueType) }
    /// True when index order is value order (numbers, dates, Bool).
    var keyPreservesOrder: Bool { false }

    func hasValue(_ object: AnyObject) -> Bool { preconditionFailure("abstract") }
    func encodeValue(of object: AnyObject, into bytes: inout [UInt8]) throws { preconditionFailure("abstract") }
    func decodeValue(_ raw: UnsafeRawBufferPointer, into object: AnyObject) throws { preconditionFailure("abstract") }
    func setBacking(_ backing: ModelBacking?, of object: AnyObject) { preconditionFailure("abstract") }
    func backing(of object: AnyObject) -> ModelBacking? { preconditionFailure("abstract") }
    func clearValue(of object: AnyObject) { preconditionFailure("abstract") }
    func indexKey(of object: AnyObject) -> [UInt8] { preconditionFailure("abstract") }
    func indexKey(fromField raw: UnsafeRawBufferPointer) throws -> [UInt8] { preconditionFailure("abstract") }
    func anyValue(of object: AnyObject) -> Any? { preconditionFailure("abstract") }
    func anyValue(fromField raw: UnsafeRawBufferPointer) throws -> Any { preconditionFailure("abstract") }
    /// A `(RecordView) throws -> Value` closure that decodes this property from a record.
    func anyRowReader() -> Any { preconditionFailure("abstract") }
    func copyValue(from source: AnyObject, to target: AnyObject) { preconditionFailure("abstract") }
    func valuesEqual(_ a: AnyObject, _ b: AnyObject) -> Bool { preconditionFailure("abstract") }
    var isExternal: Bool { false }
    func external(of object: AnyObject) -> (blob: UInt64, pending: [UInt8]?)? { nil }
    func setExternal(_ blob: UInt64, of object: AnyObject) {}
    /// Puts marker value `variant` (0 or 1) in the property; false if the type has none.
    func setMarker(_ variant: Int, on object: AnyObject) -> Bool { preconditionFailure("abstract") }
    /// True if `value` is marker `variant`.
    func isMarker(_ variant: Int, _ value: Any) -> Bool { preconditionFailure("abstract") }
    /// An index key for a value of this property's type given as `Any` (from a predicate).
    func indexKey(forAny value: Any) -> [UInt8]? { preconditionFailure("abstract") }
}

final class Property<V: Codable>: AnyProperty, @unchecked Sendable {
    let codec: Codec<V>
    let keyMaker: IndexKeyMaker<V>
    /// Where the storage's `backing` field is, from the start of the storage.
    private let backingOffset: Int
    private let scalar: ScalarComparison.Kind?

    init(named name: String, offset: Int, index: Int, declaration: AttributeDeclaration) throws {
        do { codec = try Codecs.make(V.self) } catch let problem as SchemaProblem {
            throw SchemaProblem("\(name): \(problem.message)")
        }
        keyMaker = IndexKeyMaker.forType(V.self, codec: codec)
        backingOffset = MemoryLayout<Attribute<V>>.offset(of: \Attribute<V>.backing) ?? 0
        scalar = declaration.has(.externalStorage) ? nil : ScalarComparison.Kind(V.self)
        super.init(name: name, offset: offset, index: index, declaration: declaration)
    }

    override var scalarKind: ScalarComparison.Kind? { scalar }
    override var valueType: Any.Type { V.self }
    override var keyPreservesOrder: Bool { keyMaker.preservesOrder }

    @inline(__always)
    func storage(_ object: AnyObject) -> UnsafeMutablePointer<Attribute<V>> {
        UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
            .advanced(by: offset)
            .assumingMemoryBound(to: Attribute<V>.self)
    }

    @inline(__always)
    func value(of object: AnyObject) -> V? { storage(object).pointee.value }

    override func hasValue(_ object: AnyObject) -> Bool { storage(object).pointee.value != nil }

    override var isExternal: Bool { declaration.has(.externalStorage) }

    /// The blob of an external-storage value, and the value when it was set since it was saved.
    override func external(of object: AnyObject) -> (blob: UInt64, pending: [UInt8]?)? {
        guard isExternal else { return nil }
        let storage = storage(object)
        guard let v = storage.pointee.value else { return (storage.pointee.external, nil) }
        var bytes: [UInt8] = []
        try? codec.encode(v, into: &bytes)
        return (storage.pointee.external, bytes)
    }

    /// After a save wrote an external value's blob: remember the blob, keep the value cached.
    override func setExternal(_ blob: UInt64, of object: AnyObject) {
        let storage = storage(object)
        if let v = storage.pointee.value, let backing = storage.pointee.backing { backing.externalCache[blob] = v }
        storage.pointee.external = blob
        if blob != 0 { storage.pointee.value = nil }
    }

    @_specialize(where V == String)
    @_specialize(where V == Int)
    @_specialize(where V == Double)
    @_specialize(where V == Bool)
    @_specialize(where V == Date)
    @_specialize(where V == UUID)
    override func encodeValue(of object: AnyObject, into bytes: inout [UInt8]) throws {
        if isExternal {
            // `[0x00]` for no blob (a nil or empty value is kept inline after it), `[0x01][u64 blob]`.
            let storage = storage(object)
            let saving = storage.pointee.backing?.context?.savingExternal(object, self)
            let stored = storage.pointee.value == nil && storage.pointee.external != 0 ? storage.pointee.external : nil
            if let blob = saving ?? stored, blob != 0 {
                bytes.append(1)
                withUnsafeBytes(of: blob.littleEndian) { bytes.append(contentsOf: $0) }
                return
            }
            bytes.append(0)
        }
        guard let v = storage(object).pointee.value else {
            throw StrataError.unsetProperty(entity: String(describing: type(of: object)), property: name)
        }
        try codec.encode(v, into: &bytes)
    }

    @inline(__always)
    func decode(_ raw: UnsafeRawBufferPointer) throws -> V {
        try codec.decode(raw)
    }

    @_specialize(where V == String)
    @_specialize(where V == Int)
    @_specialize(where V == Double)
    @_specialize(where V == Bool)
    @_specialize(where V == Date)
    @_specialize(where V == UUID)
    override func decodeValue(_ raw: UnsafeRawBufferPointer, into object: AnyObject) throws {
        if isExternal {
            guard let tag = raw.first else { throw decodingFailure("an empty external-storage field") }
            if tag == 1 {
                guard raw.count == 9 else { throw decodingFailure("a malformed blob reference") }
                storage(object).pointee.external = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
                storage(object).pointee.value = nil
                return
            }
            storage(object).pointee.value = try codec.decode(UnsafeRawBufferPointer(rebasing: raw[1...]))
            return
        }
        storage(object).pointee.value = try codec.decode(raw)
    }

    @inline(__always)
    private func backingSlot(_ object: AnyObject) -> UnsafeMutablePointer<ModelBacking?> {
        UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
            .advanced(by: offset + backingOffset)
            .assumingMemoryBound(to: ModelBacking?.self)
    }

    override func setBacking(_ backing: ModelBacking?, of object: AnyObject) {
        backingSlot(object).pointee = backing
    }

    override func backing(of object: AnyObject) -> ModelBacking? { backingSlot(object).pointee }

    override func clearValue(of object: AnyObject) { storage(object).pointee.value = nil }

    override func indexKey(of object: AnyObject) -> [UInt8] {
        guard let v = storage(object).pointee.value else { return [] }
        return keyMaker.make(v)
    }

    override func indexKey(fromField raw: UnsafeRawBufferPointer) throws -> [UInt8] {
        keyMaker.make(try codec.decode(raw))
    }

    override func anyValue(of object: AnyObject) -> Any? { storage(object).pointee.value }
    override func anyValue(fromField raw: UnsafeRawBufferPointer) throws -> Any { try codec.decode(raw) }

    override func anyRowReader() -> Any {
        if isExternal { return 0 }   // not a (RecordView) -> V closure: predicates take the slow path
        let i = index
        let codec = self.codec
        let reader: (RecordView) throws -> V = { view in try codec.decode(try view.field(i)) }
        return reader
    }

    override func copyValue(from source: AnyObject, to target: AnyObject) {
        storage(target).pointee.value = storage(source).pointee.value
    }

    override func valuesEqual(_ a: AnyObject, _ b: AnyObject) -> Bool {
        var x: [UInt8] = [], y: [UInt8] = []
        guard let va = value(of: a), let vb = value(of: b) else { return value(of: a) == nil && value(of: b) == nil }
        try? codec.encode(va, into: &x)
        try? codec.encode(vb, into: &y)
        return x == y
    }

    override func setMarker(_ variant: Int, on object: AnyObject) -> Bool {
        guard let marker = Marker.make(V.self, variant) else { return false }
        storage(object).pointee.value = marker
        return true
    }

    override func isMarker(_ variant: Int, _ value: Any) -> Bool {
        guard let v = value as? V, let marker = Marker.make(V.self, variant) else { return false }
        var a: [UInt8] = [], b: [UInt8] = []
        guard (try? codec.encode(v, into: &a)) != nil, (try? codec.encode(marker, into: &b)) != nil else { return false }
        return a == b
    }

    override func indexKey(forAny value: Any) -> [UInt8]? {
        guard let v = value as? V else { return nil }
        return keyMaker.make(v)
    }
}

/// A problem found while discovering a model's schema.
struct SchemaProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// The fields of a class and its model superclasses, as the runtime reports them.
enum FieldReflection {
    struct Field {
        let name: String
        let offset: Int
        let type: Any.Type
    }

    /// Fields of `type` and of its superclasses, base class first.
    static func fields(of type: AnyClass) -> [Field] {
        var chain: [AnyClass] = [type]
        while let superclass = _getSuperclass(chain[chain.count - 1]) { chain.append(superclass) }
        var fields: [Field] = []
        var seen = Set<Int>()
        // Some runtimes list inherited fields with a subclass, some do not: walk the chain from
        // the base and keep each offset once.
        for cls in chain.reversed() {
            _ = _forEachField(of: cls, options: _EachFieldOptions(rawValue: 1)) { name, offset, fieldType, _ in
                if seen.insert(offset).inserted {
                    fields.append(Field(name: String(cString: name), offset: offset, type: fieldType))
                }
                return true
            }
        }
        return fields.sorted { $0.offset < $1.offset }
    }
}
