import Foundation
import StrataEngine

/// A value type Strata stores in record fields: how its values are written and read, indexed,
/// compared on a record's bytes, and shown by `strata dump`.
///
/// Each type's conformance is a file of its own (`String+StoredValue.swift`, ...), like GRDB's
/// one file per database value. Adding a value type is one such file (plus a line in
/// `StoredValues.all`, which schema discovery, `strata dump` and the tool's index keys read) and its tests. Any other
/// `Codable` type is stored as JSON (`CodableValue.swift`).
protocol StoredValue: Codable {
    /// Appends the field bytes of `value` (Docs/FileFormat.md, "Object records").
    static func encode(_ value: Self, into bytes: inout [UInt8]) throws
    /// The value of a field written by `encode`.
    static func decode(_ field: UnsafeRawBufferPointer) throws -> Self
    /// True when the type's index keys are `KeyEncoding` keys of the value itself; false when
    /// they are the field bytes as a `bytes` key component.
    static var hasValueKey: Bool { get }
    /// Appends the index key of `value`.
    static func appendKey(_ value: Self, to key: inout [UInt8])
    /// True when index key order is the order of Foundation's `<` (numbers, dates, Bool), so
    /// that ranges and sorts may use an index.
    static var keyOrderIsValueOrder: Bool { get }
    /// A value for the key-path probe, which reads a property and throws the value away.
    static var placeholder: Self { get }
    /// Two distinct values (variant 0 and 1) for confirming that a key path reads a property;
    /// nil when the type has none.
    static func marker(_ variant: Int) -> Self?
    /// A test comparing field `field` of a record with `constant` on its bytes, with the answer
    /// of the type's own operator; nil when the type has no such fast path.
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> RowTest?
    /// The value as `strata dump` shows it.
    static func json(_ value: Self) -> JSONValue
    /// The value in a custom store's snapshot. (Default: `SnapshotValue.init(_:)`, which finds
    /// the kind by casting; the common types say it directly.)
    static func snapshot(_ value: Self) throws -> SnapshotValue
    /// The accesses to `Attribute` storages of this type and of its optionals and arrays. Each
    /// conformance spells it out in its own file, where the type is concrete, so that the
    /// functions are specialized for it.
    static var accesses: AttributeAccesses { get }
}

extension StoredValue {
    static var hasValueKey: Bool { false }
    /// The field bytes as one `bytes` key component.
    static func appendKey(_ value: Self, to key: inout [UInt8]) {
        var bytes: [UInt8] = []
        try? encode(value, into: &bytes)
        Data(bytes).encodeKey(into: &key)
    }
    static var keyOrderIsValueOrder: Bool { false }
    static func marker(_ variant: Int) -> Self? { nil }
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> RowTest? { nil }
    static func snapshot(_ value: Self) throws -> SnapshotValue { try SnapshotValue(value) }
}

/// A record that does not decode as the schema says: a damaged store or a schema mismatch.
struct ValueDecodingFailure: Error {
    let message: String
}

@inline(__always)
func decodingFailure(_ what: String) -> ValueDecodingFailure { ValueDecodingFailure(message: what) }

/// The accesses a property's value type gets.
enum StoredValues {
    /// The access for `Attribute<V>` storages: specialized for a stored value type and its
    /// optionals and arrays, the general one (`CodableValue.swift`) for any other `Codable`.
    static func access<V: Codable>(for type: V.Type) throws -> AttributeAccess {
        if let container = V.self as? any SpecializedContainer.Type, let access = container.specializedAccess { return access }
        if let stored = V.self as? any StoredValue.Type { return stored.accesses.plain }
        return try AttributeAccess.general(V.self)
    }

    /// The access of a stored value type, of its optional or of its array, found by the type's
    /// identity; nil for any other type. Asks the runtime nothing: the first cast of a type to a
    /// protocol scans every conformance record of the process (see `ModelFieldStorage`).
    static func knownAccess(_ type: Any.Type) -> AttributeAccess? {
        guard let (stored, form) = known[ObjectIdentifier(type)] else { return nil }
        switch form {
        case .plain: return stored.accesses.plain
        case .optional: return stored.accesses.optional
        case .array: return stored.accesses.array
        }
    }

    /// Whether `type` is a stored value type, its optional or its array.
    static func isKnown(_ type: Any.Type) -> Bool { known[ObjectIdentifier(type)] != nil }

    private enum Form { case plain, optional, array }

    /// The stored value types (`named`), their optionals and their arrays, by identity.
    nonisolated(unsafe) private static let known: [ObjectIdentifier: (any StoredValue.Type, Form)] = {
        func forms<T: StoredValue>(_: T.Type) -> [(ObjectIdentifier, (any StoredValue.Type, Form))] {
            [(ObjectIdentifier(T.self), (T.self, .plain)), (ObjectIdentifier(T?.self), (T.self, .optional)),
             (ObjectIdentifier([T].self), (T.self, .array))]
        }
        return Dictionary(uniqueKeysWithValues: all.flatMap { forms($0) })
    }()

    /// Every stored value type.
    nonisolated(unsafe) static let all: [any StoredValue.Type] = [
        String.self, Bool.self, Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self,
        UInt16.self, UInt32.self, UInt64.self, Double.self, Float.self, Date.self, Data.self, UUID.self, URL.self, Decimal.self,
    ]

    /// The one list of the stored value types that readers without the model classes (`strata
    /// dump`, `RecordIndexKeys`, the tool) find by the name a stored schema gives them
    /// (`Swift.Int` is stored as "Int"). A new value type adds itself here.
    nonisolated(unsafe) static let named: [String: any StoredValue.Type] =
        Dictionary(uniqueKeysWithValues: all.map { (String(describing: $0), $0) })

    /// `strata dump`'s decoder of a field of the type named `name`, if it is one of `named`.
    static func dumpDecoder(named name: String) -> ((UnsafeRawBufferPointer) throws -> JSONValue)? {
        guard let type = named[name] else { return nil }
        func make<T: StoredValue>(_: T.Type) -> (UnsafeRawBufferPointer) throws -> JSONValue { { T.json(try T.decode($0)) } }
        return make(type)
    }
}

/// Optionals and arrays whose element is a stored value: their accesses are made with the
/// element's (specialized) ones.
protocol SpecializedContainer {
    static var specializedAccess: AttributeAccess? { get }
}
