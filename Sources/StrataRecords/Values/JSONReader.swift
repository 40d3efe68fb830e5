import Foundation

/// A strict JSON (RFC 8259) reader into `JSONValue`, for the few documents Strata reads on the
/// way to a first fetch (the stored schema), and for arrays of strings and of integers (a custom
/// store's snapshots). `JSONDecoder` reads the same documents, but its
/// first use in a process instantiates generic decoding containers for each `Codable` type and
/// looks up their conformances, which cost a fresh process's first open about a fifth of its
/// time (Docs/Benchmarks.md, "Costs that shaped the code").
///
/// Numbers: an integer that fits is `.integer` (or `.unsigned`), any other number `.number`
/// with its digits as written. Object keys keep their order; a repeated key keeps both.
package struct JSONReader {
    package struct Malformed: Error {}

    private let bytes: UnsafeRawBufferPointer
    private var at = 0

    private init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The value `bytes` hold, with nothing after it but whitespace.
    package static func value(of bytes: [UInt8]) throws -> JSONValue {
        try read(bytes) { try $0.value(depth: 0) }
    }

    /// A JSON array of strings, read without making `JSONValue`s (a custom store's `[String]`
    /// attribute, read for every object its fetch makes).
    package static func strings(in data: Data) throws -> [String] {
        try data.withUnsafeBytes { raw in
            try whole(raw) { try $0.list { try $0.string() } }
        }
    }

    /// Appends the stored field of a JSON array of strings (`[String]`'s: a varint count, then
    /// each string as a varint length and its UTF-8) straight from the JSON, without making the
    /// strings: a custom store's `[String]` attribute, made into a record for every object its
    /// fetch returns. Only for the plain case, ASCII strings without escapes; false, with
    /// nothing appended, for anything else, which `strings(in:)` then reads (or rejects).
    package static func appendStringsField(of data: Data, into field: inout [UInt8]) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            // First pass: the shape, and the count.
            var i = 0
            func skipWhitespace() {
                while i < raw.count, raw[i] == 0x20 || raw[i] == 0x0A || raw[i] == 0x0D || raw[i] == 0x09 { i += 1 }
            }
            skipWhitespace()
            guard i < raw.count, raw[i] == UInt8(ascii: "[") else { return false }
            i += 1
            skipWhitespace()
            var count = 0
            if i < raw.count, raw[i] == UInt8(ascii: "]") {
                i += 1
            } else {
                while true {
                    guard i < raw.count, raw[i] == UInt8(ascii: "\"") else { return false }
                    i += 1
                    while i < raw.count, raw[i] != UInt8(ascii: "\"") {
                        guard raw[i] >= 0x20, raw[i] < 0x80, raw[i] != UInt8(ascii: "\\") else { return false }
                        i += 1
                    }
                    guard i < raw.count else { return false }
                    i += 1
                    count += 1
                    skipWhitespace()
                    guard i < raw.count else { return false }
                    if raw[i] == UInt8(ascii: "]") { i += 1; break }
                    guard raw[i] == UInt8(ascii: ",") else { return false }
                    i += 1
                    skipWhitespace()
                }
            }
            skipWhitespace()
            guard i == raw.count else { return false }
            // Second pass: each string is the bytes between a pair of quotes.
            Varint.append(count, to: &field)
            var at = 0
            for _ in 0..<count {
                while raw[at] != UInt8(ascii: "\"") { at += 1 }
                let start = at + 1
                at = start
                while raw[at] != UInt8(ascii: "\"") { at += 1 }
                Varint.append(at - start, to: &field)
                field.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[start..<at]))
                at += 1
            }
            return true
        }
    }

    /// A JSON array of plain integers that fit an `Int` (no `-0`, fraction or exponent).
    package static func integers(in data: Data) throws -> [Int] {
        try data.withUnsafeBytes { raw in
            try whole(raw) {
                try $0.list { reader in
                    let start = reader.at
                    guard case .integer(let value) = try reader.number(), let n = Int(exactly: value),
                          !(n == 0 && reader.bytes[start] == UInt8(ascii: "-")) else { throw Malformed() }
                    return n
                }
            }
        }
    }

    // MARK: Reading value by value

    /// Reads the document `bytes` hold with `read`, which takes one value (by the methods
    /// below, which make no `JSONValue`s), with nothing after it but whitespace. (The stored
    /// schema: a tree of `JSONValue`s first cost a fresh process's open an allocation and a
    /// copy per value, and the first use of each container type the tree needs.)
    package static func read<R>(_ bytes: [UInt8], _ read: (inout JSONReader) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { try whole($0, read) }
    }

    /// `read` over `raw`.
    private static func whole<R>(_ raw: UnsafeRawBufferPointer, _ read: (inout JSONReader) throws -> R) throws -> R {
        var reader = JSONReader(raw)
        let value = try read(&reader)
        reader.skipWhitespace()
        guard reader.at == raw.count else { throw Malformed() }
        return value
    }

    /// An object: `member` reads each member's value, given its key (in the document's
    /// order; a repeated key is given again). Anything else is malformed.
    package mutating func members(_ member: (inout JSONReader, Key) throws -> Void) throws {
        skipWhitespace()
        guard try take(UInt8(ascii: "{")) else { throw Malformed() }
        skipWhitespace()
        if try take(UInt8(ascii: "}")) { return }
        repeat {
            skipWhitespace()
            let key = try self.key()
            skipWhitespace()
            guard try take(UInt8(ascii: ":")) else { throw Malformed() }
            skipWhitespace()
            try member(&self, key)
            skipWhitespace()
        } while try take(UInt8(ascii: ","))
        guard try take(UInt8(ascii: "}")) else { throw Malformed() }
    }

    /// A member's key: compared with the keys a reader knows (`case "name":`) as bytes, and
    /// made a `String` only where one is kept (`string`). (A key made a `String` first cost
    /// about 200 instructions, and a stored schema has a few per property.)
    package struct Key {
        /// The key's bytes between its quotes, when it has no escape (valid while the reader's
        /// document is); otherwise the key, its escapes undone.
        private let raw: UnsafeRawBufferPointer
        private let unescaped: String?

        fileprivate init(raw: UnsafeRawBufferPointer) { self.raw = raw; unescaped = nil }
        fileprivate init(unescaped: String) { raw = UnsafeRawBufferPointer(start: nil, count: 0); self.unescaped = unescaped }

        /// The key as a string.
        package var string: String { unescaped ?? String.decode(raw) }

        package static func ~= (pattern: StaticString, key: Key) -> Bool {
            let wanted = UnsafeRawBufferPointer(start: pattern.utf8Start, count: pattern.utf8CodeUnitCount)
            if let unescaped = key.unescaped { return unescaped == pattern.description }
            return key.raw.count == wanted.count && (wanted.isEmpty || memcmp(key.raw.baseAddress!, wanted.baseAddress!, wanted.count) == 0)
        }
    }

    /// A key: its bytes where it has no escape (and is valid UTF-8), otherwise `string()`'s.
    private mutating func key() throws -> Key {
        let (start, highBits) = try plainRun()
        if bytes[at] == UInt8(ascii: "\""), highBits < 0x80 {
            at += 1
            return Key(raw: UnsafeRawBufferPointer(rebasing: bytes[start..<(at - 1)]))
        }
        at = start - 1
        return Key(unescaped: try string())
    }

    /// An array: `element` reads each element. Anything else is malformed.
    package mutating func elements(_ element: (inout JSONReader) throws -> Void) throws {
        skipWhitespace()
        guard try take(UInt8(ascii: "[")) else { throw Malformed() }
        skipWhitespace()
        if try take(UInt8(ascii: "]")) { return }
        repeat {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
        } while try take(UInt8(ascii: ","))
        guard try take(UInt8(ascii: "]")) else { throw Malformed() }
    }

    /// A string value, its escapes undone. Anything else is malformed.
    package mutating func stringValue() throws -> String {
        skipWhitespace()
        return try string()
    }

    /// An integer value that fits an `Int64` (no fraction or exponent). Anything else is malformed.
    package mutating func integerValue() throws -> Int64 {
        skipWhitespace()
        // The common case, a few digits and nothing after them that makes another number, is
        // read here; anything else (a sign, a fraction, an exponent, a leading zero, many
        // digits) as `number()` reads it. (`number()` made a string of the digits first.)
        let start = at
        var value: Int64 = 0
        while at < bytes.count, at - start < 18, isDigit(bytes[at]) {
            value = value * 10 + Int64(bytes[at] - UInt8(ascii: "0"))
            at += 1
        }
        let digits = at - start
        let next = at < bytes.count ? bytes[at] : 0
        if digits > 0, !(digits > 1 && bytes[start] == UInt8(ascii: "0")), !isDigit(next),
           next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E") {
            return value
        }
        at = start
        guard case .integer(let value) = try number() else { throw Malformed() }
        return value
    }

    /// True, and the value read, when the next value is `null`; false, and nothing read, otherwise.
    package mutating func takeNull() throws -> Bool {
        skipWhitespace()
        guard at < bytes.count, bytes[at] == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads past the next value, whatever it is (checked as strictly as `value(of:)` checks it).
    package mutating func skipValue() throws {
        _ = try value(depth: 1)
    }

    /// An array, each element read by `element`.
    package mutating func list<E>(_ element: (inout JSONReader) throws -> E) throws -> [E] {
        var out: [E] = []
        try elements { out.append(try element(&$0)) }
        return out
    }

    /// Deeper than this is not a document Strata wrote.
    private static let maximumDepth = 64

    private mutating func value(depth: Int) throws -> JSONValue {
        guard depth < Self.maximumDepth else { throw Malformed() }
        skipWhitespace()
        guard at < bytes.count else { throw Malformed() }
        switch bytes[at] {
        case UInt8(ascii: "{"):
            at += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if try take(UInt8(ascii: "}")) { return .object(members) }
            repeat {
                skipWhitespace()
                let key = try string()
                skipWhitespace()
                guard try take(UInt8(ascii: ":")) else { throw Malformed() }
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
            } while try take(UInt8(ascii: ","))
            guard try take(UInt8(ascii: "}")) else { throw Malformed() }
            return .object(members)
        case UInt8(ascii: "["):
            at += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if try take(UInt8(ascii: "]")) { return .array(elements) }
            repeat {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
            } while try take(UInt8(ascii: ","))
            guard try take(UInt8(ascii: "]")) else { throw Malformed() }
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return try number()
        }
    }

    private mutating func skipWhitespace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    /// Consumes `byte` if it is next.
    private mutating func take(_ byte: UInt8) throws -> Bool {
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count else { throw Malformed() }
        for i in 0..<count where bytes[at + i] != word.utf8Start[i] { throw Malformed() }
        at += count
    }

    private mutating func number() throws -> JSONValue {
        let start = at
        var isInteger = true
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        // int: 0, or a nonzero digit and digits
        guard at < bytes.count, isDigit(bytes[at]) else { throw Malformed() }
        if bytes[at] == UInt8(ascii: "0") { at += 1 } else { skipDigits() }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            isInteger = false
            at += 1
            guard at < bytes.count, isDigit(bytes[at]) else { throw Malformed() }
            skipDigits()
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            isInteger = false
            at += 1
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, isDigit(bytes[at]) else { throw Malformed() }
            skipDigits()
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        if isInteger {
            if let value = Int64(text) { return .integer(value) }
            if let value = UInt64(text) { return .unsigned(value) }
        }
        return .number(text)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while at < bytes.count, isDigit(bytes[at]) { at += 1 }
    }

    /// Past a string's opening quote and the bytes after it up to its closing quote or its
    /// first escape (where the reader stops): where those bytes start, and their bits or'ed
    /// (below 0x80: ASCII). Malformed without a quote first, with a control character, or at
    /// the document's end.
    private mutating func plainRun() throws -> (start: Int, highBits: UInt8) {
        guard try take(UInt8(ascii: "\"")) else { throw Malformed() }
        let start = at
        var highBits: UInt8 = 0
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") {
            guard bytes[at] >= 0x20 else { throw Malformed() }
            highBits |= bytes[at]
            at += 1
        }
        guard at < bytes.count else { throw Malformed() }
        return (start, highBits)
    }

    /// A string, its escapes undone; the reader is at its opening quote.
    private mutating func string() throws -> String {
        // The common case: no escape, so the string is the bytes between the quotes.
        let (start, highBits) = try plainRun()
        if bytes[at] == UInt8(ascii: "\"") {
            at += 1
            let text = UnsafeRawBufferPointer(rebasing: bytes[start..<(at - 1)])
            // ASCII is valid UTF-8, and `String.decode` makes it without the generic
            // `String(validating:)`, which cost about 1k instructions a string (a stored
            // schema's names, W8). Anything else must be valid UTF-8: malformed, not repaired.
            if highBits < 0x80 { return String.decode(text) }
            guard let validated = String(validating: text, as: UTF8.self) else { throw Malformed() }
            return validated
        }
        var utf8 = Array(bytes[start..<at])
        while bytes[at] == UInt8(ascii: "\\") {
            at += 1
            guard at < bytes.count else { throw Malformed() }
            let escape = bytes[at]
            at += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate: a low one must follow.
                    guard at + 1 < bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else { throw Malformed() }
                    at += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw Malformed() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw Malformed()
                }
                guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else { throw Malformed() }
                utf8.append(contentsOf: encoded)
            default:
                throw Malformed()
            }
            while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\") {
                guard bytes[at] >= 0x20 else { throw Malformed() }
                utf8.append(bytes[at])
                at += 1
            }
            guard at < bytes.count else { throw Malformed() }
        }
        at += 1  // the closing quote
        // Invalid UTF-8 is malformed, not repaired.
        guard let text = String(validating: utf8, as: UTF8.self) else { throw Malformed() }
        return text
    }

    private mutating func hex4() throws -> UInt32 {
        guard at + 4 <= bytes.count else { throw Malformed() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[at]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Malformed()
            }
            value = value << 4 | UInt32(digit)
            at += 1
        }
        return value
    }
}
