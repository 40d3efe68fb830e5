import Foundation
import StrataEngine

/// UTF-8 bytes. Index keys are of the canonical composed form, so that index equality is
/// Swift's `==` (canonical equivalence); their order is not Foundation's sort order.
extension String: StoredValue {
    @inlinable
    package static func encode(_ value: String, into bytes: inout [UInt8]) {
        if let done = value.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) { return done }
        bytes.append(contentsOf: value.utf8)
    }

    /// The field's string (invalid UTF-8, as from a damaged file, is repaired to U+FFFD either
    /// way). A field that fits in a small string (15 bytes) is copied into one: that path skips
    /// `String(decoding:as:)`'s generic decoding steps, about 80 of its 190 instructions on a
    /// short string (tags, names); a longer one is stored on the heap, where `String(decoding:)`
    /// is the cheaper of the two (Docs/Benchmarks.md, "Costs").
    @inlinable
    package static func decode(_ field: UnsafeRawBufferPointer) -> String {
        if field.count <= 15 {
            return String(unsafeUninitializedCapacity: field.count) {
                UnsafeMutableRawBufferPointer($0).copyMemory(from: field)
                return field.count
            }
        }
        return String(decoding: field, as: UTF8.self)
    }

    @inlinable
    package static var hasValueKey: Bool { true }
    @inlinable
    package static func appendKey(_ value: String, to key: inout [UInt8]) { normalizedKey(value).encodeKey(into: &key) }
    @usableFromInline package static func json(_ value: String) -> JSONValue { .string(value) }
}

/// A string in its canonical composed form (ASCII strings are their own).
@inlinable
package func normalizedKey(_ s: String) -> String {
    var copy = s
    let ascii = copy.withUTF8 { $0.allSatisfy { $0 < 0x80 } }
    return ascii ? s : s.precomposedStringWithCanonicalMapping
}
