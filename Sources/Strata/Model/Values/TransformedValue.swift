import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// The `ValueTransformer` of an `@Attribute(.transformable(by:))` property: by class, or by
/// the name it was registered under (`ValueTransformer.setValueTransformer(_:forName:)`).
@usableFromInline
struct TransformerReference: @unchecked Sendable, Hashable {
    /// The class (`.transformable(by: MyTransformer.self)`), or nil when given by name.
    let type: ValueTransformer.Type?
    /// The class's name, or the registered name.
    @usableFromInline let name: String

    @usableFromInline init(type: ValueTransformer.Type) { self.type = type; self.name = TypeNames.qualified(type) }
    @usableFromInline init(name: String) { self.type = nil; self.name = name }

    /// No transformer: what a declaration without one keeps (see `AttributeDeclaration`).
    @usableFromInline static var none: TransformerReference { TransformerReference(name: "") }
    @usableFromInline var isNone: Bool { name.isEmpty }

    @usableFromInline static func == (a: Self, b: Self) -> Bool { a.name == b.name }
    @usableFromInline func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The transformer: a new instance of the class, or the one registered under the name.
    func make() throws -> ValueTransformer {
        if let type { return type.init() }
        if let registered = ValueTransformer.registered(forName: NSValueTransformerName(rawValue: name)) { return registered }
        throw SchemaProblem("no ValueTransformer is registered under the name \"\(name)\"; register it with ValueTransformer.setValueTransformer(_:forName:) before the container opens")
    }
}

extension AttributeAccess {
    /// The accesses of a `.transformable(by:)` attribute: its field is the transformer's `Data`
    /// in the framing of a `Data?` (`0x00` when the value, or what the transformer made of it, is
    /// nil; `0x01` then the bytes), so that `strata dump` shows it as base64. Its index keys are
    /// the field's bytes. The value type need not be `Codable`.
    static func transformed<V>(_: V.Type, by reference: TransformerReference) throws -> AttributeAccess {
        typealias Storage = Attribute<V>
        func at(_ p: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Storage> { p.assumingMemoryBound(to: Storage.self) }
        let transformer = try reference.make()
        let nilValue = (V.self as? any PlaceholderMaking.Type).flatMap { $0.makePlaceholder() as? V }
        let isOptional = V.self is any OptionalValue.Type
        func encode(_ value: V, into bytes: inout [UInt8]) throws {
            let unwrapped: Any? = (value as? any OptionalValue).map(\.wrapped) ?? value
            guard let unwrapped else { return bytes.append(0) }
            switch transformer.transformedValue(unwrapped) {
            case let data as Data: bytes.append(1); bytes.append(contentsOf: data)
            case let data as NSData: bytes.append(1); bytes.append(contentsOf: Data(referencing: data))
            case nil where isOptional: bytes.append(0)
            default:
                throw StrataError.schema("\(reference.name).transformedValue(_:) gave no Data for a \(V.self); a transformable attribute stores the Data its transformer makes")
            }
        }
        func decode(_ raw: UnsafeRawBufferPointer) throws -> V {
            guard let tag = raw.first, tag <= 1 else { throw decodingFailure("a transformable field without its tag") }
            if tag == 0 {
                guard let nilValue else { throw decodingFailure("a nil transformable value for the non-optional \(V.self)") }
                return nilValue
            }
            let data = Data(UnsafeRawBufferPointer(rebasing: raw[1...]))
            guard let value = transformer.reverseTransformedValue(data) as? V else {
                throw decodingFailure("bytes that \(reference.name).reverseTransformedValue(_:) does not turn back into a \(V.self)")
            }
            return value
        }
        func fieldKey(_ raw: UnsafeRawBufferPointer, _ key: inout [UInt8]) { Data(raw).encodeKey(into: &key) }
        let access = AttributeAccess(
            valueType: V.self, keyOrderIsValueOrder: false,
            hasValue: { at($0).pointee.value != nil },
            clear: { at($0).pointee.value = nil },
            decode: { raw, p in at(p).pointee.value = try decode(raw) },
            encode: { p, bytes in
                guard let v = at(p).pointee.value else { return false }
                try encode(v, into: &bytes)
                return true
            },
            appendKey: { p, key in
                var bytes: [UInt8] = []
                if let v = at(p).pointee.value, (try? encode(v, into: &bytes)) != nil { bytes.withUnsafeBytes { fieldKey($0, &key) } }
            },
            appendFieldKey: { raw, key in fieldKey(raw, &key) },
            appendKeyOfConstant: { constant, key in
                guard let v = constant.value(as: V.self) else { return false }
                var bytes: [UInt8] = []
                guard (try? encode(v, into: &bytes)) != nil else { return false }
                bytes.withUnsafeBytes { fieldKey($0, &key) }
                return true
            },
            value: { at($0).pointee.value },
            fieldValue: { try decode($0) },
            rowReader: { i in { (view: RecordView) throws -> V in try decode(try view.field(i)) } },
            scalarTest: { _, _, _ in nil },
            setMarker: { _, _ in false },
            isMarker: { _, _ in false },
            // A custom store keeps the bytes the transformer makes (nil: none).
            snapshotOfField: { raw in raw.first == 1 ? .data(Data(UnsafeRawBufferPointer(rebasing: raw[1...]))) : .null },
            fieldOfSnapshot: { value, bytes in
                switch value {
                case .null: bytes.append(0)
                case .data(let data): bytes.append(1); bytes.append(contentsOf: data)
                default:
                    throw DecodingError.typeMismatch(Data.self, DecodingError.Context(codingPath: [], debugDescription: "a transformable attribute's snapshot value is its transformer's Data, not \(value)"))
                }
            })
        access.storedTypeName = TypeNames.qualified(Data?.self)
        return access
    }
}

/// An optional seen through `Any`: whether it holds a value.
protocol OptionalValue { var wrapped: Any? { get } }
extension Optional: OptionalValue { var wrapped: Any? { self.map { $0 as Any } } }
