import Foundation
import StrataEngine

/// A value type Strata stores in record fields: how its values are written and read, indexed
/// and shown by `strata dump`. It knows bytes, keys and JSON, and nothing of objects: the object
/// layer adds what it needs of each type (the key-path probe's values, predicates' fast tests,
/// snapshots and `Attribute` storages) in `ModelValue` (Sources/Strata/Values).
///
/// Each type's conformance is a file of its own (`String+StoredValue.swift`, ...), like GRDB's
/// one file per database value. Adding a value type is one such file and a line in
/// `StoredValues.all` (which `strata dump` and the tool's index keys read), its `ModelValue`
/// file and line in the object layer, and its tests. Any other `Codable` type is stored as JSON
/// (the object layer's `CodableValue.swift`).
@usableFromInline
package protocol StoredValue: Codable {
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
    /// The value as `strata dump` shows it.
    static func json(_ value: Self) -> JSONValue
}

extension StoredValue {
    @inlinable
    package static var hasValueKey: Bool { false }
    /// The field bytes as one `bytes` key component.
    @inlinable
    package static func appendKey(_ value: Self, to key: inout [UInt8]) {
        var bytes: [UInt8] = []
        try? encode(value, into: &bytes)
        Data(bytes).encodeKey(into: &key)
    }
    @inlinable
    package static var keyOrderIsValueOrder: Bool { false }
}

/// A record that does not decode as the schema says: a damaged store or a schema mismatch.
@usableFromInline
package struct ValueDecodingFailure: Error {
    @usableFromInline package let message: String
    @inlinable package init(message: String) { self.message = message }
}

@inlinable @inline(__always)
package func decodingFailure(_ what: String) -> ValueDecodingFailure { ValueDecodingFailure(message: what) }

/// The stored value types, for readers without the model classes.
package enum StoredValues {
    /// Every stored value type. The object layer's `ModelValues.all` lists the same types (a
    /// test compares the two lists).
    nonisolated(unsafe) package static let all: [any StoredValue.Type] = [
        String.self, Bool.self, Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self,
        UInt16.self, UInt32.self, UInt64.self, Double.self, Float.self, Date.self, Data.self, UUID.self, URL.self, Decimal.self,
    ]

    /// The one list of the stored value types that readers without the model classes (`strata
    /// dump`, `RecordIndexKeys`, the tool) find by the name a stored schema gives them
    /// (`Swift.Int` is stored as "Int"). A new value type adds itself to `all`.
    nonisolated(unsafe) package static let named: [String: any StoredValue.Type] =
        Dictionary(uniqueKeysWithValues: all.map { (String(describing: $0), $0) })

    /// `strata dump`'s decoder of a field of the type named `name`, if it is one of `named`.
    package static func dumpDecoder(named name: String) -> ((UnsafeRawBufferPointer) throws -> JSONValue)? {
        guard let type = named[name] else { return nil }
        func make<T: StoredValue>(_: T.Type) -> (UnsafeRawBufferPointer) throws -> JSONValue { { T.json(try T.decode($0)) } }
        return make(type)
    }
}

/// Reading a field's fixed-width numbers.
@usableFromInline
package enum FieldBytes {
    /// A field holding 8 bytes of a `Double` (a `Double` or a `Date`'s interval).
    @inlinable @inline(__always)
    package static func double(_ f: UnsafeRawBufferPointer, _ what: String) throws -> Double {
        guard f.count == 8 else { throw decodingFailure("\(what) of \(f.count) bytes") }
        return Double(bitPattern: UInt64(littleEndian: f.loadUnaligned(as: UInt64.self)))
    }
}
