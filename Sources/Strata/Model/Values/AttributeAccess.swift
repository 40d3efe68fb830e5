import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// What Strata does with the values of one type in objects' `Attribute` storages and in
/// records: functions made once per type.
///
/// For a stored value (and its optionals and arrays) they are made in the type's own file,
/// where the type is concrete (`String.accesses`), so the compiler specializes them: decoding a
/// field into an object or encoding it back does no run-time generic metadata lookup. Other
/// `Codable` types get functions over a codec object (`general`).
final class AttributeAccess: @unchecked Sendable {
    /// The property's declared type.
    let valueType: Any.Type
    /// The type name stored with the schema when it is not the declared type's (a
    /// transformable attribute stores `Data?`).
    var storedTypeName: String?
    /// True when index key order is Foundation's order of the values.
    let keyOrderIsValueOrder: Bool
    /// Whether the storage (at the pointer) has a value.
    let hasValue: (UnsafeMutableRawPointer) -> Bool
    /// Empties the storage.
    let clear: (UnsafeMutableRawPointer) -> Void
    /// Decodes a field into the storage.
    let decode: (UnsafeRawBufferPointer, UnsafeMutableRawPointer) throws -> Void
    /// Appends the storage's value as a field; false (and nothing appended) if it has none.
    let encode: (UnsafeMutableRawPointer, inout [UInt8]) throws -> Bool
    /// Appends the index key of the storage's value (nothing if it has none).
    let appendKey: (UnsafeMutableRawPointer, inout [UInt8]) -> Void
    /// Appends the index key of a field's value.
    let appendFieldKey: (UnsafeRawBufferPointer, inout [UInt8]) throws -> Void
    /// Appends the index key of a predicate's constant; false (nothing appended) for a value of
    /// another type.
    let appendKeyOfConstant: (ConstantValue, inout [UInt8]) -> Bool
    /// The storage's value, if any.
    let value: (UnsafeMutableRawPointer) -> Any?
    /// A field's value.
    let fieldValue: (UnsafeRawBufferPointer) throws -> Any
    /// A `(RecordView) throws -> Value` closure reading field `i`, for predicates.
    let rowReader: (Int) -> Any
    /// The fast comparison of field `i` with a constant, if the type has one.
    let scalarTest: (ConstantValue, ComparisonOperator, Int) -> RowTest?
    /// The same comparison as data, for a conjunction of them (`FieldCheck.all`); nil when the
    /// type has none.
    let fieldCheck: ((ConstantValue, ComparisonOperator, Int) -> FieldCheck?)?
    /// The type's placeholder (`ModelValue.placeholder`), for the key-path probe; nil: made by
    /// `Placeholder.make`, whose casts to protocols cost a fresh process a conformance scan each.
    let placeholder: (() -> Any)?
    /// Puts marker `variant` in the storage; false if the type has none, or fewer.
    let setMarker: (Int, UnsafeMutableRawPointer) -> Bool
    /// True if the value is marker `variant`.
    let isMarker: (Int, Any) -> Bool
    /// A field's value in a custom store's snapshot (`SnapshotValue`).
    let snapshotOfField: (UnsafeRawBufferPointer) throws -> SnapshotValue
    /// Appends the field of a snapshot's value (throws when it is not of the type).
    let fieldOfSnapshot: (SnapshotValue, inout [UInt8]) throws -> Void

    init(valueType: Any.Type, keyOrderIsValueOrder: Bool,
         hasValue: @escaping (UnsafeMutableRawPointer) -> Bool, clear: @escaping (UnsafeMutableRawPointer) -> Void,
         decode: @escaping (UnsafeRawBufferPointer, UnsafeMutableRawPointer) throws -> Void,
         encode: @escaping (UnsafeMutableRawPointer, inout [UInt8]) throws -> Bool,
         appendKey: @escaping (UnsafeMutableRawPointer, inout [UInt8]) -> Void,
         appendFieldKey: @escaping (UnsafeRawBufferPointer, inout [UInt8]) throws -> Void,
         appendKeyOfConstant: @escaping (ConstantValue, inout [UInt8]) -> Bool, value: @escaping (UnsafeMutableRawPointer) -> Any?,
         fieldValue: @escaping (UnsafeRawBufferPointer) throws -> Any, rowReader: @escaping (Int) -> Any,
         scalarTest: @escaping (ConstantValue, ComparisonOperator, Int) -> RowTest?,
         fieldCheck: ((ConstantValue, ComparisonOperator, Int) -> FieldCheck?)? = nil,
         placeholder: (() -> Any)? = nil,
         setMarker: @escaping (Int, UnsafeMutableRawPointer) -> Bool, isMarker: @escaping (Int, Any) -> Bool,
         snapshotOfField: ((UnsafeRawBufferPointer) throws -> SnapshotValue)? = nil,
         fieldOfSnapshot: @escaping (SnapshotValue, inout [UInt8]) throws -> Void) {
        self.valueType = valueType
        self.keyOrderIsValueOrder = keyOrderIsValueOrder
        self.hasValue = hasValue
        self.clear = clear
        self.decode = decode
        self.encode = encode
        self.appendKey = appendKey
        self.appendFieldKey = appendFieldKey
        self.appendKeyOfConstant = appendKeyOfConstant
        self.value = value
        self.fieldValue = fieldValue
        self.rowReader = rowReader
        self.scalarTest = scalarTest
        self.fieldCheck = fieldCheck
        self.placeholder = placeholder
        self.setMarker = setMarker
        self.isMarker = isMarker
        self.snapshotOfField = snapshotOfField ?? { try SnapshotValue(try fieldValue($0)) }
        self.fieldOfSnapshot = fieldOfSnapshot
    }

    /// The index key of a storage's value.
    func key(_ storage: UnsafeMutableRawPointer) -> [UInt8] {
        var key: [UInt8] = []
        appendKey(storage, &key)
        return key
    }
}

/// A stored value type's accesses: the type itself, its optional and its array, each made
/// when asked for. (Made all three at once, a property's discovery also made the two it does
/// not use, and the first use of `Optional<V>` and `Array<V>` in a process costs the runtime
/// about 10,000 instructions each: W8, Docs/Benchmarks.md, "Costs".)
struct AttributeAccesses {
    enum Form { case plain, optional, array }
    /// Makes the access of one form (a closure of the specialized code, capturing nothing).
    private let make: (Form) -> AttributeAccess

    @inline(__always)
    init<V: ModelValue>(_ type: V.Type) {
        make = { form in
            switch form {
            case .plain: return .stored(V.self)
            case .optional: return .stored(V?.self)
            case .array: return .stored([V].self)
            }
        }
    }

    var plain: AttributeAccess { make(.plain) }
    var optional: AttributeAccess { make(.optional) }
    var array: AttributeAccess { make(.array) }
}

extension AttributeAccess {
    /// The accesses of a stored value type (specialized wherever `V` is concrete).
    @inline(__always)
    static func stored<V: ModelValue>(_: V.Type) -> AttributeAccess {
        typealias Storage = Attribute<V>
        @inline(__always) func at(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Storage> { p.assumingMemoryBound(to: Storage.self) }
        return AttributeAccess(
            valueType: V.self, keyOrderIsValueOrder: V.keyOrderIsValueOrder,
            hasValue: { at($0).pointee.value != nil },
            clear: { at($0).pointee.value = nil },
            decode: { raw, p in at(p).pointee.value = try V.decode(raw) },
            encode: { p, bytes in
                guard let v = at(p).pointee.value else { return false }
                try V.encode(v, into: &bytes)
                return true
            },
            appendKey: { p, key in if let v = at(p).pointee.value { V.appendKey(v, to: &key) } },
            appendFieldKey: { raw, key in V.appendKey(try V.decode(raw), to: &key) },
            appendKeyOfConstant: { constant, key in
                guard let v = constant.value(as: V.self) else { return false }
                V.appendKey(v, to: &key)
                return true
            },
            value: { at($0).pointee.value },
            fieldValue: { try V.decode($0) },
            rowReader: { i in { (view: RecordView) throws -> V in try V.decode(try view.field(i)) } },
            scalarTest: { V.scalarTest($0, $1, field: $2) },
            fieldCheck: V.hasFieldCheck ? { V.fieldCheck($0, $1, field: $2) } : nil,
            placeholder: { V.placeholder },
            setMarker: { variant, p in
                guard variant < V.markerCount, let marker = V.marker(variant) else { return false }
                at(p).pointee.value = marker
                return true
            },
            isMarker: { variant, value in sameBytes(value as? V, V.marker(variant), V.encode) },
            snapshotOfField: { try V.snapshot(try V.decode($0)) },
            fieldOfSnapshot: { value, bytes in
                // A `[String]` in JSON (a store's jsonb column) goes to its field unread.
                if V.self == [String].self, case .json(let json) = value, JSONReader.appendStringsField(of: json, into: &bytes) { return }
                try V.encode(try value.decode(V.self), into: &bytes)
            })
    }

    /// The accesses of any other `Codable` type, over its codec.
    static func general<V: Codable>(_: V.Type) throws -> AttributeAccess {
        typealias Storage = Attribute<V>
        func at(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Storage> { p.assumingMemoryBound(to: Storage.self) }
        let codec = try Codecs.make(V.self)
        return AttributeAccess(
            valueType: V.self, keyOrderIsValueOrder: false,
            hasValue: { at($0).pointee.value != nil },
            clear: { at($0).pointee.value = nil },
            decode: { raw, p in at(p).pointee.value = try codec.decode(raw) },
            encode: { p, bytes in
                guard let v = at(p).pointee.value else { return false }
                try codec.encode(v, into: &bytes)
                return true
            },
            appendKey: { p, key in if let v = at(p).pointee.value { codec.appendKey(v, to: &key) } },
            appendFieldKey: { raw, key in codec.appendKey(try codec.decode(raw), to: &key) },
            appendKeyOfConstant: { constant, key in
                guard let v = constant.value(as: V.self) else { return false }
                codec.appendKey(v, to: &key)
                return true
            },
            value: { at($0).pointee.value },
            fieldValue: { try codec.decode($0) },
            rowReader: { i in { (view: RecordView) throws -> V in try codec.decode(try view.field(i)) } },
            scalarTest: { _, _, _ in nil },
            setMarker: { variant, p in
                guard variant < Marker.count(V.self), let marker = Marker.make(V.self, variant) else { return false }
                at(p).pointee.value = marker
                return true
            },
            isMarker: { variant, value in sameBytes(value as? V, Marker.make(V.self, variant), codec.encode) },
            fieldOfSnapshot: { value, bytes in try codec.encode(try value.decode(V.self), into: &bytes) })
    }
}

/// True when both values exist and encode to the same bytes.
private func sameBytes<V>(_ a: V?, _ b: V?, _ encode: (V, inout [UInt8]) throws -> Void) -> Bool {
    guard let a, let b else { return false }
    var x: [UInt8] = [], y: [UInt8] = []
    guard (try? encode(a, &x)) != nil, (try? encode(b, &y)) != nil else { return false }
    return x == y
}
