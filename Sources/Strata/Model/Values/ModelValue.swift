import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// A stored value type as the object layer uses it: on top of its field codec (`StoredValue`,
/// in StrataRecords), the values the key-path probe sets, a predicate's fast test on a record's
/// bytes, a custom store's snapshot, and the accesses to `Attribute` storages of the type.
///
/// Each type's conformance is a file of its own (`String+ModelValue.swift`, ...), beside the
/// codec's `String+StoredValue.swift` in StrataRecords.
protocol ModelValue: StoredValue {
    /// A value for the key-path probe, which reads a property and throws the value away.
    static var placeholder: Self { get }
    /// Distinct values (variants 0 to `markerCount - 1`) for confirming that a key path reads a
    /// property; nil when the type has none.
    static func marker(_ variant: Int) -> Self?
    /// How many markers the probe writes and reads back (at least 2): each one a computed
    /// property must give back unchanged to be taken for the property.
    static var markerCount: Int { get }
    /// A test comparing field `field` of a record with `constant` on its bytes, with the answer
    /// of the type's own operator; nil when the type has no such fast path.
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> RowTest?
    /// `scalarTest` as data, for a conjunction of such tests run in one closure; nil when the
    /// type has none (it then runs as its own closure).
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> FieldCheck?
    /// True when `fieldCheck` may answer (a plan that cannot use one is not made).
    static var hasFieldCheck: Bool { get }
    /// The value in a custom store's snapshot. (Default: `SnapshotValue.init(_:)`, which finds
    /// the kind by casting; the common types say it directly.)
    static func snapshot(_ value: Self) throws -> SnapshotValue
    /// The accesses to `Attribute` storages of this type and of its optionals and arrays. Each
    /// conformance spells it out in its own file, where the type is concrete, so that the
    /// functions are specialized for it.
    static var accesses: AttributeAccesses { get }
}

extension ModelValue {
    static func marker(_ variant: Int) -> Self? { nil }
    static var markerCount: Int { 2 }
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> RowTest? { nil }
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field: Int) -> FieldCheck? { nil }
    static var hasFieldCheck: Bool { false }
    static func snapshot(_ value: Self) throws -> SnapshotValue { try SnapshotValue(value) }
}

/// The accesses a property's value type gets.
enum ModelValues {
    /// The access for `Attribute<V>` storages: specialized for a stored value type and its
    /// optionals and arrays, the general one (`CodableValue.swift`) for any other `Codable`.
    static func access<V: Codable>(for type: V.Type) throws -> AttributeAccess {
        if let container = V.self as? any SpecializedContainer.Type, let access = container.specializedAccess { return access }
        if let stored = V.self as? any ModelValue.Type { return stored.accesses.plain }
        return try AttributeAccess.general(V.self)
    }

    /// The access of a stored value type, of its optional or of its array, found by the type's
    /// identity; nil for any other type. Asks the runtime nothing: the first cast of a type to a
    /// protocol scans every conformance record of the process (see `ModelFieldStorage`), and so
    /// does the first hash table keyed by `ObjectIdentifier` (W8, Docs/Benchmarks.md).
    static func knownAccess(_ type: Any.Type) -> AttributeAccess? {
        guard let (stored, form) = known(type) else { return nil }
        switch form {
        case .plain: return stored.accesses.plain
        case .optional: return stored.accesses.optional
        case .array: return stored.accesses.array
        }
    }

    /// Whether `type` is a stored value type, its optional or its array.
    static func isKnown(_ type: Any.Type) -> Bool { known(type) != nil }

    private enum Form { case plain, optional, array }

    /// The stored value type `type` is, or is the optional or the array of.
    private static func known(_ type: Any.Type) -> (any ModelValue.Type, Form)? {
        if let stored = plain(type) { return (stored, .plain) }
        if let wrapped = TypeShape.optionalWrapped(type), let stored = plain(wrapped) { return (stored, .optional) }
        if let element = TypeShape.arrayElement(type), let stored = plain(element) { return (stored, .array) }
        return nil
    }

    /// The stored value type that is `type`, if one is (by identity, the types of `all`; a
    /// test holds the two to the same answers). A switch, not a search of `all`: making that
    /// list, existentials of every stored value type, cost a fresh process's open about 23k
    /// instructions (W8).
    static func plain(_ type: Any.Type) -> (any ModelValue.Type)? {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): String.self
        case ObjectIdentifier(Bool.self): Bool.self
        case ObjectIdentifier(Int.self): Int.self
        case ObjectIdentifier(Int8.self): Int8.self
        case ObjectIdentifier(Int16.self): Int16.self
        case ObjectIdentifier(Int32.self): Int32.self
        case ObjectIdentifier(Int64.self): Int64.self
        case ObjectIdentifier(UInt.self): UInt.self
        case ObjectIdentifier(UInt8.self): UInt8.self
        case ObjectIdentifier(UInt16.self): UInt16.self
        case ObjectIdentifier(UInt32.self): UInt32.self
        case ObjectIdentifier(UInt64.self): UInt64.self
        case ObjectIdentifier(Double.self): Double.self
        case ObjectIdentifier(Float.self): Float.self
        case ObjectIdentifier(Date.self): Date.self
        case ObjectIdentifier(Data.self): Data.self
        case ObjectIdentifier(UUID.self): UUID.self
        case ObjectIdentifier(URL.self): URL.self
        case ObjectIdentifier(Decimal.self): Decimal.self
        default: nil
        }
    }

    /// Every stored value type: the same list as StrataRecords' `StoredValues.all` (a test
    /// compares them), here as `ModelValue`s so that no cast asks the runtime for conformances.
    nonisolated(unsafe) static let all: [any ModelValue.Type] = [
        String.self, Bool.self, Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self,
        UInt16.self, UInt32.self, UInt64.self, Double.self, Float.self, Date.self, Data.self, UUID.self, URL.self, Decimal.self,
    ]
}

/// Optionals and arrays whose element is a stored value: their accesses are made with the
/// element's (specialized) ones.
protocol SpecializedContainer {
    static var specializedAccess: AttributeAccess? { get }
}
