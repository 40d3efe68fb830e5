import Foundation
import StrataEngine

/// UTF-8 bytes. Index keys are of the canonical composed form, so that index equality is
/// Swift's `==` (canonical equivalence); their order is not Foundation's sort order.
extension String: StoredValue {
    static func encode(_ value: String, into bytes: inout [UInt8]) {
        if let done = value.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) { return done }
        bytes.append(contentsOf: value.utf8)
    }

    static func decode(_ field: UnsafeRawBufferPointer) -> String { String(decoding: field, as: UTF8.self) }

    static var hasValueKey: Bool { true }
    static func appendKey(_ value: String, to key: inout [UInt8]) { normalizedKey(value).encodeKey(into: &key) }
    static var placeholder: String { "" }
    static func marker(_ variant: Int) -> String? { "\u{1}strata-marker-\(variant)" }
    static func json(_ value: String) -> JSONValue { .string(value) }
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

/// A string in its canonical composed form (ASCII strings are their own).
func normalizedKey(_ s: String) -> String {
    var copy = s
    let ascii = copy.withUTF8 { $0.allSatisfy { $0 < 0x80 } }
    return ascii ? s : s.precomposedStringWithCanonicalMapping
}
