import Foundation
import PostgresNIO
import Strata

/// A snapshot's values as the text PostgreSQL reads them (bound as text and cast in SQL), and
/// back. Every form is exact: PostgreSQL reads and prints a double with the fewest digits that
/// give the same double, a numeric and a uuid as written, bytes in hex.
enum PostgresValues {
    /// The text of `value` for a column of `kind` (nil: SQL NULL).
    static func text(_ value: SnapshotValue, _ kind: ColumnKind) throws -> String? {
        switch (value, kind) {
        case (.null, _): return nil
        case (.string(let s), .text), (.string(let s), .url), (.string(let s), .numeric):
            guard !hasNul(s) else {
                throw StrataError(.corruptRecord, "PostgreSQL's text cannot hold the character U+0000, and a string to save has one (\(s.debugDescription.prefix(80))). Remove it, or keep the value as Data.")
            }
            return s
        case (.url(let u), .url), (.url(let u), .text): return u.absoluteString
        case (.int(let i), .bigint), (.int(let i), .numeric): return String(i)
        case (.uint(let u), .numeric): return String(u)
        case (.decimal(let d), .numeric): return d.description
        case (.double(let d), .double): return double(d)
        case (.int(let i), .double): return double(Double(i))
        case (.date(let d), .date): return double(d.timeIntervalSinceReferenceDate)
        case (.double(let d), .date): return double(d)
        case (.bool(let b), .boolean): return b ? "true" : "false"
        case (.uuid(let u), .uuid): return u.uuidString
        case (.string(let s), .uuid): return s
        case (.data(let d), .bytea): return hex(d)
        case (_, .jsonb): return String(decoding: try value.jsonData(), as: UTF8.self)
        default:
            throw StrataError(.corruptRecord, "A value \(value) does not fit a PostgreSQL \(kind) column.")
        }
    }

    /// Whether `s` holds U+0000, which PostgreSQL's text cannot: its UTF-8 searched with
    /// `memchr` (`utf8.contains(0)` walked it byte by byte, 3% of a bulk insert's client time).
    static func hasNul(_ s: String) -> Bool {
        if let found = s.utf8.withContiguousStorageIfAvailable({ bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        }) {
            return found
        }
        return s.utf8.contains(0)
    }

    /// A double as PostgreSQL reads it (`Infinity`, `-Infinity`, `NaN` spelled its way).
    static func double(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
        return "\(d)"
    }

    static func hex(_ data: Data) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]("\\x".utf8)
        out.reserveCapacity(2 + data.count * 2)
        for byte in data {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func unhex(_ text: String) -> Data? {
        var bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x") else { return nil }
        bytes.removeFirst(2)
        guard bytes.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var data = Data(capacity: bytes.count / 2)
        var i = 0
        while i < bytes.count {
            guard let high = nibble(bytes[i]), let low = nibble(bytes[i + 1]) else { return nil }
            data.append(high << 4 | low)
            i += 2
        }
        return data
    }

    /// The snapshot value of a column's text.
    static func value(_ text: String?, _ kind: ColumnKind) throws -> SnapshotValue {
        guard let text else { return .null }
        let value: SnapshotValue?
        switch kind {
        case .text: value = .string(text)
        case .url: value = URL(string: text).map { .url($0) } ?? .string(text)
        case .bigint: value = Int64(text).map { .int($0) }
        case .numeric:
            value = text == "NaN" ? .decimal(.nan)
                : Int64(text).map { .int($0) } ?? UInt64(text).map { .uint($0) } ?? Decimal(string: text).map { .decimal($0) }
        case .double: value = Double(text).map { .double($0) }
        case .date: value = Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .boolean: value = .bool(text == "true" || text == "t")
        case .uuid: value = uuid(text).map { .uuid($0) }
        case .bytea: value = unhex(text).map { .data($0) }
        case .jsonb:
            var text = text
            value = .json(text.withUTF8 { Data($0) })
        }
        guard let value else { throw StrataError(.corruptRecord, "A PostgreSQL \(kind) column holds \(text.prefix(100)), which is not one.") }
        return value
    }

    /// The snapshot value of a column's cell, in the binary format postgres-nio asks for, the
    /// column selected as `PostgresColumn.selected` casts it: big-endian integers and doubles,
    /// one byte for a boolean, 16 for a uuid, raw bytes for bytea, and UTF-8 for the kinds read
    /// as text (text, URLs, numerics, JSON). A cell of another length than its type's is an
    /// error naming the column's kind, never a wrong value.
    static func value(_ cell: PostgresCell, _ kind: ColumnKind) throws -> SnapshotValue {
        guard let bytes = cell.bytes else { return .null }
        switch kind {
        case .text: return .string(String(buffer: bytes))
        case .url:
            let text = String(buffer: bytes)
            return URL(string: text).map { .url($0) } ?? .string(text)
        case .numeric: return try value(String(buffer: bytes), .numeric)
        case .jsonb: return .json(Data(bytes.readableBytesView))
        case .bytea: return .data(Data(bytes.readableBytesView))
        case .bigint:
            if bytes.readableBytes == 8 { return .int(Int64(bitPattern: bigEndian64(bytes))) }
        case .double:
            if bytes.readableBytes == 8 { return .double(Double(bitPattern: bigEndian64(bytes))) }
        case .date:
            if bytes.readableBytes == 8 { return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bigEndian64(bytes)))) }
        case .boolean:
            if bytes.readableBytes == 1 { return .bool(bytes.withUnsafeReadableBytes { $0[0] } != 0) }
        case .uuid:
            if bytes.readableBytes == 16 {
                // Copied straight from the cell (reading an array of its bytes cost an allocation).
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { out in bytes.withUnsafeReadableBytes { out.copyMemory(from: $0) } }
                return .uuid(UUID(uuid: uuid))
            }
        }
        throw StrataError(.corruptRecord, "A PostgreSQL \(kind) column's value came as \(cell.bytes?.readableBytes ?? 0) bytes of type \(cell.dataType) in \(cell.format) format, which is not one.")
    }

    /// The 8 bytes of a cell that has them, as a big-endian integer: read in place, where
    /// `readInteger` cost a tracked exclusivity check (SwiftNIO's storage is a class) and a
    /// copy of the buffer for each cell (4% of W7's samples).
    @inline(__always)
    private static func bigEndian64(_ bytes: ByteBuffer) -> UInt64 {
        bytes.withUnsafeReadableBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// A bigint cell's value (nil for NULL), as `value(_:_:)` reads it.
    static func bigint(_ cell: PostgresCell) throws -> Int64? {
        guard cell.bytes != nil else { return nil }
        guard case .int(let v) = try value(cell, .bigint) else { return nil }
        return v
    }

    /// A UUID as PostgreSQL prints it (`a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11`, either case), or as
    /// `UUID(uuidString:)` reads it otherwise. (That reads through `sscanf`: 3% of reading 20k
    /// objects.)
    static func uuid(_ text: String) -> UUID? {
        var text = text
        let bytes: uuid_t? = text.withUTF8 { utf8 in
            guard utf8.count == 36 else { return nil }
            var out = [UInt8](repeating: 0, count: 16)
            var i = 0, n = 0
            func nibble(_ c: UInt8) -> UInt8? {
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): return c &- UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): return c &- UInt8(ascii: "a") &+ 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): return c &- UInt8(ascii: "A") &+ 10
                default: return nil
                }
            }
            while i < 36 {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    guard utf8[i] == UInt8(ascii: "-") else { return nil }
                    i += 1
                    continue
                }
                guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
                out[n] = high << 4 | low
                n += 1
                i += 2
            }
            return (out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
                    out[8], out[9], out[10], out[11], out[12], out[13], out[14], out[15])
        }
        if let bytes { return UUID(uuid: bytes) }
        return UUID(uuidString: text)
    }

    /// A PostgreSQL array literal of texts (`{"a",NULL}`), for `unnest($1::text[])`.
    static func arrayLiteral(_ items: [String?]) -> String {
        // Built as UTF-8 bytes: a quote or a backslash gets a backslash before it; every other
        // byte (of any scalar) is copied as it is. (Appending scalar by scalar to a String was
        // an eighth of a 20k-object save's time.)
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(items.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            guard var item else { out += "NULL".utf8; continue }
            out.append(UInt8(ascii: "\""))
            item.withUTF8 { bytes in
                for byte in bytes {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                    out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
