/// Unsigned LEB128 varints (7 bits a byte, low first), as cells use them.
enum Varint {
    @inline(__always)
    static func size(_ value: UInt64) -> Int {
        var v = value
        var n = 1
        while v >= 0x80 { v >>= 7; n += 1 }
        return n
    }

    @inline(__always)
    static func write(_ value: UInt64, to p: UnsafeMutableRawPointer) -> Int {
        var v = value
        var n = 0
        while v >= 0x80 {
            p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: n, as: UInt8.self)
            v >>= 7
            n += 1
        }
        p.storeBytes(of: UInt8(v), toByteOffset: n, as: UInt8.self)
        return n + 1
    }

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 { bytes.append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        bytes.append(UInt8(v))
    }

    /// Reads a varint that is known to be well formed (a checked page).
    @inline(__always)
    static func read(_ p: UnsafeRawPointer, _ position: inout Int) -> Int {
        let first = p.load(fromByteOffset: position, as: UInt8.self)
        position += 1
        if first < 0x80 { return Int(first) }
        var value = Int(first & 0x7F)
        var shift = 7
        while true {
            let byte = p.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// Reads a varint before `end`, of at most `maximumBytes`; nil when it does not fit.
    static func readChecked(_ p: UnsafeRawPointer, _ position: inout Int, end: Int, maximumBytes: Int = 5) -> Int? {
        var value = 0
        var shift = 0
        for _ in 0..<maximumBytes {
            guard position < end else { return nil }
            let byte = p.load(fromByteOffset: position, as: UInt8.self)
            position += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    /// Reads a varint of up to 64 bits from bytes; nil when malformed.
    static func decode(_ raw: UnsafeRawBufferPointer) -> (value: UInt64, size: Int)? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for (i, byte) in raw.enumerated() {
            guard i < 10 else { return nil }
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return (value, i + 1) }
            shift += 7
        }
        return nil
    }
}
