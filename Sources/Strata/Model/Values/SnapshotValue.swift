import Foundation
@_spi(StorageBackend) import StrataRecords

/// Strata-only: one value of a snapshot, typed as a store with columns needs it.
///
/// Numbers, text, dates, bytes, identifiers and decimals are themselves; any other `Codable`
/// value (arrays, dictionaries, sets, structs, enums) is its JSON (sorted keys), and a
/// relationship is the identifiers of the related objects.
public enum SnapshotValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case int(Int64)
    /// An unsigned integer above `Int64.max`.
    case uint(UInt64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case decimal(Decimal)
    /// Any other `Codable` value, as JSON with sorted keys.
    case json(Data)
    /// A relationship: the related objects, in order (none, or one for a to-one).
    case identifiers([PersistentIdentifier])

    /// The snapshot form of a property's value.
    public init(_ value: Any) throws {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrapped else { self = .null; return }
            self = try SnapshotValue(wrapped)
            return
        }
        switch value {
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .int(Int64(v))
        case let v as Int8: self = .int(Int64(v))
        case let v as Int16: self = .int(Int64(v))
        case let v as Int32: self = .int(Int64(v))
        case let v as Int64: self = .int(v)
        case let v as UInt8: self = .int(Int64(v))
        case let v as UInt16: self = .int(Int64(v))
        case let v as UInt32: self = .int(Int64(v))
        case let v as UInt: self = v <= UInt(Int64.max) ? .int(Int64(v)) : .uint(UInt64(v))
        case let v as UInt64: self = v <= UInt64(Int64.max) ? .int(Int64(v)) : .uint(v)
        case let v as Float: self = .double(Double(v))
        case let v as Double: self = .double(v)
        case let v as String: self = .string(v)
        case let v as Date: self = .date(v)
        case let v as Data: self = .data(v)
        case let v as UUID: self = .uuid(v)
        case let v as URL: self = .url(v)
        case let v as Decimal: self = .decimal(v)
        case let v as PersistentIdentifier: self = .identifiers([v])
        case let v as any Encodable: self = .json(try SnapshotValue.jsonEncoder.encode(v))
        default:
            throw DataStoreError.unsupportedFeature
        }
    }

    private enum Kind: String, CodingKey {
        case null, bool, int, uint, double, string, date, data, uuid, url, decimal, json, identifiers
    }

    /// One key naming the kind, its value the value: `{"string": "Lisbon"}`, `{"null": true}`;
    /// a Codable value's JSON is kept as text (`{"json": "[\"a\"]"}`).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Kind.self)
        switch self {
        case .null: try c.encode(true, forKey: .null)
        case .bool(let v): try c.encode(v, forKey: .bool)
        case .int(let v): try c.encode(v, forKey: .int)
        case .uint(let v): try c.encode(v, forKey: .uint)
        case .double(let v): try c.encode(v, forKey: .double)
        case .string(let v): try c.encode(v, forKey: .string)
        case .date(let v): try c.encode(v, forKey: .date)
        case .data(let v): try c.encode(v, forKey: .data)
        case .uuid(let v): try c.encode(v, forKey: .uuid)
        case .url(let v): try c.encode(v, forKey: .url)
        case .decimal(let v): try c.encode(v, forKey: .decimal)
        case .json(let v): try c.encode(String(decoding: v, as: UTF8.self), forKey: .json)
        case .identifiers(let v): try c.encode(v, forKey: .identifiers)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Kind.self)
        guard let kind = c.allKeys.first, c.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: c.codingPath, debugDescription: "a snapshot value is one key naming its kind"))
        }
        switch kind {
        case .null: self = .null
        case .bool: self = .bool(try c.decode(Bool.self, forKey: kind))
        case .int: self = .int(try c.decode(Int64.self, forKey: kind))
        case .uint: self = .uint(try c.decode(UInt64.self, forKey: kind))
        case .double: self = .double(try c.decode(Double.self, forKey: kind))
        case .string: self = .string(try c.decode(String.self, forKey: kind))
        case .date: self = .date(try c.decode(Date.self, forKey: kind))
        case .data: self = .data(try c.decode(Data.self, forKey: kind))
        case .uuid: self = .uuid(try c.decode(UUID.self, forKey: kind))
        case .url: self = .url(try c.decode(URL.self, forKey: kind))
        case .decimal: self = .decimal(try c.decode(Decimal.self, forKey: kind))
        case .json: self = .json(Data(try c.decode(String.self, forKey: kind).utf8))
        case .identifiers: self = .identifiers(try c.decode([PersistentIdentifier].self, forKey: kind))
        }
    }

    /// An array of strings as `jsonEncoder` writes it, byte for byte (a test holds them equal),
    /// without the encoder: the most common collection attribute, in every saved snapshot.
    static func json(_ strings: [String]) -> Data {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(2 + strings.reduce(0) { $0 + $1.utf8.count + 3 })
        let hex = Array("0123456789abcdef".utf8)
        for (i, string) in strings.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            for byte in string.utf8 {
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out += [UInt8(ascii: "\\"), byte]
                case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
                case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
                case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
                case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
                case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
                case 0..<0x20: out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
                default: out.append(byte)
                }
            }
            out.append(UInt8(ascii: "\""))
        }
        out.append(UInt8(ascii: "]"))
        return Data(out)
    }

    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// The value as a `V`; throws `DecodingError` when it is not one.
    public func decode<V: Decodable>(_ type: V.Type) throws -> V {
        if case .null = self {
            // nil, for an optional `V`: an empty `Any?` casts to any optional type, and to
            // nothing else. (A cast to `ExpressibleByNilLiteral.Type` crashed the 6.3 compiler
            // when specialized.)
            guard let none = Optional<Any>.none as Any as? V else { throw mismatch(V.self) }
            return none
        }
        if let direct = directValue(as: V.self) { return direct }
        // Through JSON: a Codable value, or a plain value a store kept in another form.
        let json: Data
        switch self {
        case .json(let data):
            if let array = JSONArrayReader.array(data, as: V.self) { return array }
            json = data
        default: json = try SnapshotValue.jsonEncoder.encode(JSONForm(value: self))
        }
        do { return try JSONDecoder().decode(JSONWrapped<V>.self, from: wrap(json)).value } catch { throw mismatch(V.self) }
    }

    /// The value cast to `V` where it already is one (or a plain conversion makes one).
    private func directValue<V>(as: V.Type) -> V? {
        switch self {
        case .bool(let v): return v as? V
        case .int(let v): return Self.integer(v, as: V.self)
        case .uint(let v): return (v as? V) ?? (UInt(exactly: v) as? V)
        case .double(let v): return (v as? V) ?? (Float(v) as? V)
        case .string(let v): return (v as? V) ?? (URL(string: v) as? V) ?? (UUID(uuidString: v) as? V) ?? (Decimal(string: v) as? V)
        case .date(let v): return v as? V
        case .data(let v): return v as? V
        case .uuid(let v): return v as? V
        case .url(let v): return v as? V
        case .decimal(let v): return v as? V
        case .identifiers(let ids): return (ids as? V) ?? (ids.first as? V)
        case .null, .json: return nil
        }
    }

    /// An integer as whichever integer type (or number type) `V` is, if it fits.
    private static func integer<V>(_ v: Int64, as: V.Type) -> V? {
        let conversions: [(Int64) -> Any?] = [
            { Int(exactly: $0) }, { $0 }, { Int32(exactly: $0) }, { Int16(exactly: $0) }, { Int8(exactly: $0) },
            { UInt(exactly: $0) }, { UInt64(exactly: $0) }, { UInt32(exactly: $0) }, { UInt16(exactly: $0) }, { UInt8(exactly: $0) },
            { Double(exactly: $0) }, { Decimal($0) },
        ]
        // A conversion that does not fit gives nil, which would cast to an optional `V` as nil.
        for convert in conversions { if let converted = convert(v), let value = converted as? V { return value } }
        return nil
    }

    private func mismatch<V>(_ type: V.Type) -> DecodingError {
        DecodingError.typeMismatch(V.self, DecodingError.Context(codingPath: [], debugDescription: "a snapshot holds \(self), which is not a \(V.self)"))
    }

    private func wrap(_ json: Data) -> Data { Data("{\"value\":".utf8) + json + Data("}".utf8) }
}

extension SnapshotValue {
    /// The value as JSON, as `JSONEncoder` writes it (a `.json` value as it is), for a store
    /// that keeps a value of any kind in a JSON column. Strata-only.
    public func jsonData() throws -> Data {
        if case .json(let data) = self { return data }
        return try JSONEncoder().encode(JSONForm(value: self))
    }
}

/// A value wrapped in an object, so that any JSON value (a bare string too) decodes.
private struct JSONWrapped<V: Decodable>: Decodable { let value: V }

/// A plain snapshot value as JSON, for decoding it as a `Codable` type.
private struct JSONForm: Encodable {
    let value: SnapshotValue
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .uint(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .date(let v): try c.encode(v)
        case .data(let v): try c.encode(v)
        case .uuid(let v): try c.encode(v)
        case .url(let v): try c.encode(v)
        case .decimal(let v): try c.encode(v)
        case .json(let data): try c.encode(String(decoding: data, as: UTF8.self))
        case .identifiers(let ids): try c.encode(ids)
        }
    }
}

/// A JSON array of strings or of integers read by hand (`JSONReader`), for `SnapshotValue.decode`
/// of `[String]` and `[Int]` (the most common collection attributes, read for every object a
/// fetch makes: JSONDecoder took a third of the time of enumerating objects that have one).
///
/// It reads only what it reads exactly as JSONDecoder does, and gives nil for anything else
/// (lone surrogates, invalid UTF-8, unescaped control characters, numbers other than plain
/// integers, any other JSON): JSONDecoder then decides, so the answer (or the error) is its own.
enum JSONArrayReader {
    /// The array as a `V`, when `V` is `[String]` or `[Int]` (or an optional of one) and the
    /// reader takes the JSON; nil otherwise.
    static func array<V>(_ data: Data, as: V.Type) -> V? {
        if V.self == [String].self || V.self == [String]?.self {
            // Unwrapped first: a nil `[String]?` would cast to a `V` of `[String]?` as nil.
            guard let strings = strings(data) else { return nil }
            return strings as? V
        }
        if V.self == [Int].self || V.self == [Int]?.self {
            guard let integers = integers(data) else { return nil }
            return integers as? V
        }
        return nil
    }

    static func strings(_ data: Data) -> [String]? { try? JSONReader.strings(in: data) }
    static func integers(_ data: Data) -> [Int]? { try? JSONReader.integers(in: data) }
}

/// What a store tells the context instead of an answer. Same as SwiftData's `DataStoreError`.
/// (Declared beside `SnapshotValue`, which throws it, so that the model layer's values do not
/// reach up into CustomStores.)
public enum DataStoreError: Error, Hashable, Sendable {
    /// The store cannot do what was asked.
    case unsupportedFeature
    /// The store does not evaluate the predicate: the context filters in memory.
    case preferInMemoryFilter
    /// The store does not sort: the context sorts in memory.
    case preferInMemorySort
    /// The predicate cannot be evaluated.
    case invalidPredicate
}
