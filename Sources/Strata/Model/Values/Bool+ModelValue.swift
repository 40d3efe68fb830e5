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
        // `(value == c) == wanted` is `value == (c == wanted)`: one comparison of the byte.
        let passesWhenTrue = (c == (op == .equal))
        return { view in
            let f = try view.field(i)
            guard f.count == 1 else { throw decodingFailure("a Bool of \(f.count) bytes") }
            return (f.load(as: UInt8.self) != 0) == passesWhenTrue
        }
    }

    static var hasFieldCheck: Bool { true }
    static func fieldCheck(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> FieldCheck? {
        guard let c = constant.value(as: Bool.self), op == .equal || op == .notEqual else { return nil }
        return FieldCheck(field: i, passesWhen: c == (op == .equal))
    }
}
