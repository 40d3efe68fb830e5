import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension Bool: ModelValue {
    static var placeholder: Bool { false }
    static func marker(_ variant: Int) -> Bool? { variant == 1 }
    static func snapshot(_ value: Bool) -> SnapshotValue { .bool(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(Bool.self) }

    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: Bool.self), op == .equal || op == .notEqual else { return nil }
        let wanted = op == .equal
        return { view in try (Bool.decode(try view.field(i)) == c) == wanted }
    }
}
