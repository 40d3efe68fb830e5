/// Unsigned LEB128 integers: counts and lengths in container values and relationship fields.
@usableFromInline
package enum Varint {
    @inlinable
    package static func append(_ value: Int, to bytes: inout [UInt8]) {
        var v = UInt64(value)
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inlinable
    package static func read(_ raw: UnsafeRawBufferPointer, _ position: inout Int) throws -> Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while position < raw.count {
            let byte = raw[position]
            position += 1
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                guard result <= UInt64(Int.max) else { break }
                return Int(result)
            }
            shift += 7
            if shift > 63 { break }
        }
        throw decodingFailure("a malformed length")
    }

    /// Encodes an element as `[varint length][bytes]` in place: one length byte is reserved
    /// (elements are short) and widened after the fact if the element is 128 bytes or more.
    @inlinable @inline(__always)
    package static func appendElement(into bytes: inout [UInt8], _ body: (inout [UInt8]) throws -> Void) rethrows {
        let lengthAt = bytes.count
        bytes.append(0)
        try body(&bytes)
        let length = bytes.count - lengthAt - 1
        if length < 0x80 { return bytes[lengthAt] = UInt8(length) }
        var prefix: [UInt8] = []
        append(length, to: &prefix)
        bytes.replaceSubrange(lengthAt..<(lengthAt + 1), with: prefix)
    }

    @inlinable @inline(__always)
    package static func readElement(_ raw: UnsafeRawBufferPointer, _ position: inout Int) throws -> UnsafeRawBufferPointer {
        let length = try read(raw, &position)
        guard length <= raw.count - position else { throw decodingFailure("an element past the end") }
        defer { position += length }
        return UnsafeRawBufferPointer(rebasing: raw[position..<(position + length)])
    }

    /// The count at the start of a container field, checked against the field's size (each
    /// element takes at least one byte).
    @inlinable @inline(__always)
    package static func readCount(_ raw: UnsafeRawBufferPointer, _ position: inout Int, _ what: String) throws -> Int {
        let n = try read(raw, &position)
        guard n <= raw.count else { throw decodingFailure("\(what) count past the end") }
        return n
    }
}
