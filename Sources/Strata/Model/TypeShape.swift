/// What a type is the optional or the array of, read from the runtime's metadata of the type:
/// no cast, so the runtime is asked nothing. (A fresh process's first cast of a type to a
/// protocol scans every protocol conformance loaded; so does the first `ObjectIdentifier`-keyed
/// hash table. A map of the stored value types' forms cost a tenth of W8's open and fetch.)
///
/// The layout read is the Swift ABI's, the same on every platform: a value type's metadata is
/// its kind (a word), its nominal type descriptor, then its generic arguments. An optional's
/// kind is 0x202; an array is a struct (0x200) whose descriptor is `Array`'s. Any other type,
/// classes and existentials included, has another kind or descriptor, and gets nil. So do
/// `Attribute` and `Transient`, whose storages discovery finds so (`ModelFieldStorage`).
/// `TypeShapeTests` holds the answers for every stored value type and types that look alike.
enum TypeShape {
    private static let optionalKind = 0x202
    private static let structKind = 0x200

    /// `Wrapped` if `type` is `Optional<Wrapped>`.
    static func optionalWrapped(_ type: Any.Type) -> Any.Type? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        guard metadata.load(as: Int.self) == optionalKind else { return nil }
        return metadata.load(fromByteOffset: 2 * MemoryLayout<Int>.stride, as: Any.Type.self)
    }

    /// `Element` if `type` is `Array<Element>`.
    static func arrayElement(_ type: Any.Type) -> Any.Type? { argument(of: type, ifA: arrayDescriptor) }

    /// `T` if `type` is `Attribute<T>`.
    static func attributeValue(_ type: Any.Type) -> Any.Type? { argument(of: type, ifA: attributeDescriptor) }

    /// `T` if `type` is `Transient<T>`.
    static func transientValue(_ type: Any.Type) -> Any.Type? { argument(of: type, ifA: transientDescriptor) }

    /// The first generic argument of `type` if it is a struct of the generic type whose nominal
    /// type descriptor is at `descriptor`.
    private static func argument(of type: Any.Type, ifA descriptor: Int) -> Any.Type? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        guard metadata.load(as: Int.self) == structKind,
              metadata.load(fromByteOffset: MemoryLayout<Int>.stride, as: Int.self) == descriptor else { return nil }
        return metadata.load(fromByteOffset: 2 * MemoryLayout<Int>.stride, as: Any.Type.self)
    }

    /// The address of a generic struct's nominal type descriptor (the same for every argument),
    /// read from one of its types.
    private static func descriptor(of type: Any.Type) -> Int {
        unsafeBitCast(type, to: UnsafeRawPointer.self).load(fromByteOffset: MemoryLayout<Int>.stride, as: Int.self)
    }

    private static let arrayDescriptor = descriptor(of: [UInt8].self)
    private static let attributeDescriptor = descriptor(of: Attribute<UInt8>.self)
    private static let transientDescriptor = descriptor(of: Transient<UInt8>.self)
}
