import Foundation

/// A value that can be part of an index key.
///
/// The encoding preserves order: for two values `a < b` of the same type,
/// `a.keyBytes < b.keyBytes` compared as unsigned bytes, so range scans and sorted reads come
/// straight from the B-tree. Tuples are concatenations (see `KeyEncoding.encode`), compared
/// element by element. `Docs/FileFormat.md` ("Key encoding") gives every tag.
public protocol KeyEncodable {
    /// Appends this value's order-preserving encoding to `key`.
    func encodeKey(into key: inout [UInt8])
}

/// Type tags: the first byte of every encoded component. Their order is the order of the kinds.
public enum KeyTag {
    public static let null: UInt8 = 0x00
    public static let `false`: UInt8 = 0x01
    public static let `true`: UInt8 = 0x02
    public static let integer: UInt8 = 0x10
    public static let largeUnsigned: UInt8 = 0x11
    public static let double: UInt8 = 0x20
    public static let date: UInt8 = 0x28
    public static let string: UInt8 = 0x30
    public static let bytes: UInt8 = 0x38
    public static let uuid: UInt8 = 0x40
}

/// Builds keys from values.
///
/// ```swift
/// let key = KeyEncoding.encode("Lisbon", 2024, UUID())   // a three-part key
/// let range = KeyRange(prefix: KeyEncoding.encode("Lis", asPrefix: true))
/// ```
public enum KeyEncoding {
    /// Encodes a tuple of values as one key.
    public static func encode<each T: KeyEncodable>(_ value: repeat each T) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(16)
        repeat (each value).encodeKey(into: &key)
        return key
    }

    /// Encodes a string as a key prefix: every key whose string component starts with
    /// `prefix` (and whose earlier components equal the ones before) starts with these bytes.
    public static func encode(_ prefix: String, asPrefix: Bool) -> [UInt8] {
        var key: [UInt8] = []
        if asPrefix {
            key.append(KeyTag.string)
            appendEscaped(prefix.utf8, to: &key)
        } else {
            prefix.encodeKey(into: &key)
        }
        return key
    }

    /// Appends the bytes with 0x00 escaped as 0x00 0xFF. The caller appends the terminator, a
    /// single 0x00, which sorts before any escaped continuation.
    @inline(__always)
    static func appendEscaped<S: Sequence>(_ bytes: S, to key: inout [UInt8]) where S.Element == UInt8 {
        for byte in bytes {
            key.append(byte)
            if byte == 0 { key.append(0xFF) }
        }
    }

    @inline(__always)
    static func appendDouble(_ value: Double, to key: inout [UInt8]) {
        var v = value
        if v == 0 { v = 0 }            // -0.0 and 0.0 are equal, so they encode the same
        if v.isNaN { v = .nan }        // one NaN, after +infinity
        let bits = v.bitPattern
        let ordered = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
        key.appendBE(ordered)
    }

    static func decodeDouble(_ ordered: UInt64) -> Double {
        let bits = (ordered & (1 << 63)) != 0 ? ordered & ~(1 << 63) : ~ordered
        return Double(bitPattern: bits)
    }
}

extension Bool: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { key.append(self ? KeyTag.true : KeyTag.false) }
}

extension Int64: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.integer)
        key.appendBE(UInt64(bitPattern: self) ^ (1 << 63))
    }
}

extension UInt64: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        if self <= UInt64(Int64.max) {
            Int64(self).encodeKey(into: &key)
        } else {
            key.append(KeyTag.largeUnsigned)
            key.appendBE(self)
        }
    }
}

extension Int: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension Int8: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension Int16: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension Int32: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension UInt: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { UInt64(self).encodeKey(into: &key) }
}
extension UInt8: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension UInt16: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}
extension UInt32: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Int64(self).encodeKey(into: &key) }
}

extension Double: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.double)
        KeyEncoding.appendDouble(self, to: &key)
    }
}
extension Float: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { Double(self).encodeKey(into: &key) }
}

extension Date: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.date)
        KeyEncoding.appendDouble(timeIntervalSinceReferenceDate, to: &key)
    }
}

extension String: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.string)
        var copy = self
        copy.withUTF8 { KeyEncoding.appendEscaped($0, to: &key) }
        key.append(0)
    }
}

extension Substring: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) { String(self).encodeKey(into: &key) }
}

extension Data: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.bytes)
        KeyEncoding.appendEscaped(self, to: &key)
        key.append(0)
    }
}

extension UUID: KeyEncodable {
    public func encodeKey(into key: inout [UInt8]) {
        key.append(KeyTag.uuid)
        withUnsafeBytes(of: uuid) { key.append(contentsOf: $0.assumingMemoryBound(to: UInt8.self)) }
    }
}

extension Optional: KeyEncodable where Wrapped: KeyEncodable {
    /// `nil` sorts before every value.
    public func encodeKey(into key: inout [UInt8]) {
        switch self {
        case .none: key.append(KeyTag.null)
        case .some(let value): value.encodeKey(into: &key)
        }
    }
}

/// One decoded key component.
public enum KeyComponent: Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    case date(Date)
    case string(String)
    case bytes([UInt8])
    case uuid(UUID)

    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): "\(v)"
        case .integer(let v): "\(v)"
        case .unsigned(let v): "\(v)"
        case .double(let v): "\(v)"
        // Foundation traps describing a NaN date, which a key may hold (a stored Date(nan), or damage).
        case .date(let v): v.timeIntervalSinceReferenceDate.isNaN ? "Date(timeIntervalSinceReferenceDate: nan)" : "\(v)"
        case .string(let v): "\"\(v)\""
        case .bytes(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        }
    }

    /// Decodes every component of `key`; returns nil if the bytes are not a valid key.
    public static func decode(_ key: [UInt8]) -> [KeyComponent]? {
        var parts: [KeyComponent] = []
        var i = 0
        func fixed(_ n: Int) -> UInt64? {
            guard i + n <= key.count else { return nil }
            var v: UInt64 = 0
            for j in 0..<n { v = v << 8 | UInt64(key[i + j]) }
            i += n
            return v
        }
        func escaped() -> [UInt8]? {
            var out: [UInt8] = []
            while i < key.count {
                let b = key[i]
                i += 1
                if b == 0 {
                    if i < key.count && key[i] == 0xFF { out.append(0); i += 1 } else { return out }
                } else {
                    out.append(b)
                }
            }
            return nil
        }
        while i < key.count {
            let tag = key[i]
            i += 1
            switch tag {
            case KeyTag.null: parts.append(.null)
            case KeyTag.false: parts.append(.bool(false))
            case KeyTag.true: parts.append(.bool(true))
            case KeyTag.integer:
                guard let v = fixed(8) else { return nil }
                parts.append(.integer(Int64(bitPattern: v ^ (1 << 63))))
            case KeyTag.largeUnsigned:
                guard let v = fixed(8) else { return nil }
                parts.append(.unsigned(v))
            case KeyTag.double:
                guard let v = fixed(8) else { return nil }
                parts.append(.double(KeyEncoding.decodeDouble(v)))
            case KeyTag.date:
                guard let v = fixed(8) else { return nil }
                parts.append(.date(Date(timeIntervalSinceReferenceDate: KeyEncoding.decodeDouble(v))))
            case KeyTag.string:
                guard let b = escaped() else { return nil }
                parts.append(.string(String(decoding: b, as: UTF8.self)))
            case KeyTag.bytes:
                guard let b = escaped() else { return nil }
                parts.append(.bytes(b))
            case KeyTag.uuid:
                guard i + 16 <= key.count else { return nil }
                let b = Array(key[i..<i + 16])
                i += 16
                let u = b.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
                parts.append(.uuid(UUID(uuid: u)))
            default:
                return nil
            }
        }
        return parts
    }
}

/// A range of keys: bounds inclusive or exclusive, either side open.
public struct KeyRange: Sendable, Hashable {
    public var lower: [UInt8]?
    public var lowerInclusive: Bool
    public var upper: [UInt8]?
    public var upperInclusive: Bool

    public init(lower: [UInt8]? = nil, lowerInclusive: Bool = true, upper: [UInt8]? = nil, upperInclusive: Bool = false) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// Every key.
    public static let all = KeyRange()

    /// Exactly `key` (for a non-unique index: every entry whose value key is `key`).
    public static func exact(_ key: [UInt8]) -> KeyRange {
        KeyRange(lower: key, lowerInclusive: true, upper: key, upperInclusive: true)
    }

    /// Every key that starts with `prefix`.
    public init(prefix: [UInt8]) {
        self.init(lower: prefix, lowerInclusive: true, upper: KeyRange.successor(ofPrefix: prefix), upperInclusive: false)
    }

    /// The smallest byte string greater than every string starting with `prefix` (nil: none).
    static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var bytes = prefix
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return bytes
            }
            bytes.removeLast()
        }
        return nil
    }

    func contains(_ key: UnsafeRawBufferPointer) -> Bool {
        if let lower {
            let c = lower.withUnsafeBytes { compareBytes(key, $0) }
            if c < 0 || (c == 0 && !lowerInclusive) { return false }
        }
        if let upper {
            let c = upper.withUnsafeBytes { compareBytes(key, $0) }
            if c > 0 || (c == 0 && !upperInclusive) { return false }
        }
        return true
    }
}
