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
    static func qualified(_ type: Any.Type) -> String { standardLibraryName(type) ?? _typeName(type, qualified: true) }

    /// The qualified name of a standard library type models hold most (`Swift.String`,
    /// `Swift.Int`, ...), or an optional or array of one, without the runtime: `_typeName`
    /// demangles the type's name, about 3k instructions a property when a fresh process opens
    /// a store and checks its stored schema (W8). Nil for any other type. (Other modules' names,
    /// Foundation's among them, are left to `_typeName`: they are the runtime's to say.)
    private static func standardLibraryName(_ type: Any.Type) -> String? {
        if let wrapped = TypeShape.optionalWrapped(type) { return standardLibraryName(wrapped).map { "Swift.Optional<" + $0 + ">" } }
        if let element = TypeShape.arrayElement(type) { return standardLibraryName(element).map { "Swift.Array<" + $0 + ">" } }
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): return "Swift.String"
        case ObjectIdentifier(Int.self): return "Swift.Int"
        case ObjectIdentifier(Double.self): return "Swift.Double"
        case ObjectIdentifier(Bool.self): return "Swift.Bool"
        case ObjectIdentifier(Float.self): return "Swift.Float"
        case ObjectIdentifier(Int64.self): return "Swift.Int64"
        case ObjectIdentifier(Int32.self): return "Swift.Int32"
        case ObjectIdentifier(Int16.self): return "Swift.Int16"
        case ObjectIdentifier(Int8.self): return "Swift.Int8"
        case ObjectIdentifier(UInt.self): return "Swift.UInt"
        case ObjectIdentifier(UInt64.self): return "Swift.UInt64"
        case ObjectIdentifier(UInt32.self): return "Swift.UInt32"
        case ObjectIdentifier(UInt16.self): return "Swift.UInt16"
        case ObjectIdentifier(UInt8.self): return "Swift.UInt8"
        default: return nil
        }
    }
}
