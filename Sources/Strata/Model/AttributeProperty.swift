import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

/// An `@Attribute` property: its value type's access, and the external-storage field format.
final class AttributeProperty: PersistedProperty, @unchecked Sendable {
    let access: AttributeAccess
    private let external: Bool

    init(name: String, offset: Int, index: Int, declaration: AttributeDeclaration, access: AttributeAccess, link: StorageLink) {
        self.access = access
        self.external = declaration.has(.externalStorage)
        super.init(name: name, offset: offset, index: index, declaration: declaration, link: link,
                   directDecode: external ? nil : access.decode)
    }

    override var isExternal: Bool { external }
    override var valueType: Any.Type { access.valueType }
    override var typeName: String { access.storedTypeName ?? TypeNames.qualified(access.valueType) }
    override var keyOrderIsValueOrder: Bool { access.keyOrderIsValueOrder }

    override func hasValue(_ object: AnyObject) -> Bool { access.hasValue(storage(object)) }
    override func clear(_ object: AnyObject) { access.clear(storage(object)) }

    override func encode(_ object: AnyObject, into bytes: inout [UInt8], _ encoding: RecordEncoding) throws {
        if external {
            // `[0x00]` then the value inline (nil and tiny values), or `[0x01][u64 blob id]`.
            let blob = encoding.blobs[index] ?? (access.hasValue(storage(object)) ? 0 : storedBlob(object))
            if blob != 0 {
                bytes.append(1)
                withUnsafeBytes(of: blob.littleEndian) { bytes.append(contentsOf: $0) }
                return
            }
            bytes.append(0)
        }
        guard try access.encode(storage(object), &bytes) else {
            throw StrataError.unsetProperty(entity: String(describing: type(of: object)), property: name)
        }
    }

    override func decode(_ field: UnsafeRawBufferPointer, into object: AnyObject, backing: ModelBacking?) throws {
        guard external else { return try access.decode(field, storage(object)) }
        guard let tag = field.first else { throw decodingFailure("an empty external-storage field") }
        let backing = backing ?? keeperBacking(object)
        if tag == 1 {
            guard field.count == 9 else { throw decodingFailure("a malformed blob reference") }
            backing?.externalBlobs[index] = UInt64(littleEndian: field.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
            access.clear(storage(object))
            return
        }
        backing?.externalBlobs[index] = nil
        try access.decode(UnsafeRawBufferPointer(rebasing: field[1...]), storage(object))
    }

    /// The blob an external value is stored in, and the value's bytes when it was set since.
    func external(of object: AnyObject) -> (blob: UInt64, pending: [UInt8]?) {
        let blob = storedBlob(object)
        var bytes: [UInt8] = []
        guard (try? access.encode(storage(object), &bytes)) == true else { return (blob, nil) }
        return (blob, bytes)
    }

    /// After a save wrote an external value's blob: remember the blob, keep the value cached.
    func setExternal(_ blob: UInt64, of object: AnyObject, backing: ModelBacking) {
        if blob != 0, let value = access.value(storage(object)) { backing.externalCache[index] = value }
        backing.externalBlobs[index] = blob == 0 ? nil : blob
        if blob != 0 { access.clear(storage(object)) }
    }

    /// The blob of the stored value of an external property, from a record field.
    static func blob(ofField field: UnsafeRawBufferPointer) -> UInt64? {
        guard field.count == 9, field[0] == 1 else { return nil }
        return UInt64(littleEndian: field.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
    }

    private func storedBlob(_ object: AnyObject) -> UInt64 { keeperBacking(object)?.externalBlobs[index] ?? 0 }

    private func keeperBacking(_ object: AnyObject) -> ModelBacking? {
        EntityRegistry.shared.entity(forClassOf: object)?.backing(of: object)
    }

    override func appendKey(of object: AnyObject, to key: inout [UInt8]) { access.appendKey(storage(object), &key) }
    override func appendKey(ofField field: UnsafeRawBufferPointer, to key: inout [UInt8]) throws { try access.appendFieldKey(field, &key) }
    override func appendKeyOfConstant(_ value: ConstantValue, to key: inout [UInt8]) -> Bool { access.appendKeyOfConstant(value, &key) }
    override func value(of object: AnyObject) -> Any? { access.value(storage(object)) }
    override func fieldValue(_ field: UnsafeRawBufferPointer) throws -> Any { try access.fieldValue(field) }
    override func rowReader() -> Any? { external ? nil : access.rowReader(index) }
    override func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator) -> RowTest? { external ? nil : access.scalarTest(constant, op, index) }
    override func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator) -> FieldCheck? { external ? nil : access.fieldCheck?(constant, op, index) }
    override var hasFieldCheck: Bool { !external && access.fieldCheck != nil }
    override func placeholder() -> Any? { access.placeholder?() }
    override func setMarker(_ variant: Int, on object: AnyObject) -> Bool { access.setMarker(variant, storage(object)) }
    override func isMarker(_ variant: Int, _ value: Any) -> Bool { access.isMarker(variant, value) }
}
