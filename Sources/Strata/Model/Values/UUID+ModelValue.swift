import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension UUID: ModelValue {
    static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    static func marker(_ variant: Int) -> UUID? { UUID(uuid: (0x5E, 0xED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(variant))) }
    static func snapshot(_ value: UUID) -> SnapshotValue { .uuid(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(UUID.self) }

    /// Equality on the 16 bytes.
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: UUID.self), op == .equal || op == .notEqual else { return nil }
        let wanted = op == .equal
        let expected = c.uuid
        return { view in
            let f = try view.field(i)
            guard f.count == 16 else { throw decodingFailure("a UUID of \(f.count) bytes") }
            return withUnsafeBytes(of: expected) { sameBytes($0, f) } == wanted
        }
    }
}
