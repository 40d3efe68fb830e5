@_spi(StorageBackend) import StrataRecords
/// The names Strata gives types: a model's entity name and a property's value type as stored
/// schemas hold them. The same text as `String(describing:)` and `String(reflecting:)` give for a
/// metatype (a test holds them equal for every value type and model of the test suites), read
/// straight from the type's metadata: those two first ask whether the metatype conforms to
/// `CustomStringConvertible` and its kin, which in a fresh process means scanning every
/// conformance record of the program, once for each type.
enum TypeNames {
    /// `String(describing: type)`: the unqualified name (`Trip`, `Optional<String>`).
    @inline(__always)
    static func plain(_ type: Any.Type) -> String { _typeName(type, qualified: false) }
    /// `String(reflecting: type)`: the module-qualified name (`Swift.Optional<Swift.String>`).
    @inline(__always)
    static func qualified(_ type: Any.Type) -> String { _typeName(type, qualified: true) }
}
