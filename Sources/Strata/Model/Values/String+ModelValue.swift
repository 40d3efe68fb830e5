import Foundation
import StrataEngine
@_spi(StorageBackend) import StrataRecords

extension String: ModelValue {
    static var placeholder: String { "" }
    /// The third has spaces around it, both cases and a letter outside ASCII: a computed
    /// property that trims, folds case or normalizes gives it back changed.
    static func marker(_ variant: Int) -> String? { variant < 2 ? "\u{1}strata-marker-\(variant)" : " \u{1}Strata-Marker-Ä " }
    static var markerCount: Int { 3 }
    static func snapshot(_ value: String) -> SnapshotValue { .string(value) }
    static var accesses: AttributeAccesses { AttributeAccesses(String.self) }

    /// Equality is Unicode canonical equivalence ("é" as one scalar or two, the Kelvin sign and
    /// "K"), so bytes decide only when both sides are ASCII; otherwise the field is decoded.
    static func scalarTest(_ constant: ConstantValue, _ op: ComparisonOperator, field i: Int) -> RowTest? {
        guard let c = constant.value(as: String.self), op == .equal || op == .notEqual else { return nil }
        let wanted = op == .equal
        let bytes = Array(c.utf8)
        let asciiConstant = bytes.allSatisfy { $0 < 0x80 }
        return { view in
            let f = try view.field(i)
            if asciiConstant {
                if bytes.withUnsafeBytes({ sameBytes($0, f) }) { return wanted }
                if !f.contains(where: { $0 >= 0x80 }) { return !wanted }
            }
            return (String(decoding: f, as: UTF8.self) == c) == wanted
        }
    }
}
