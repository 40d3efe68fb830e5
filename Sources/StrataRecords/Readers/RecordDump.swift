import Foundation
import StrataEngine

// Reading a store's objects without their model classes, from the schema stored in the store:
// what `strata info` and `strata dump` show. Docs/FileFormat.md ("Object records") describes
// the bytes this decodes.

/// A JSON value, with object keys in a chosen order (a record's properties in declaration order).
@usableFromInline
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case double(Double)
    /// A number written with exactly these digits (a `Decimal`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    @usableFromInline package static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.integer(let x), .integer(let y)): x == y
        case (.unsigned(let x), .unsigned(let y)): x == y
        case (.double(let x), .double(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.0) == y.map(\.0) && x.map(\.1) == y.map(\.1)
        default: false
        }
    }

    /// Compact JSON text (one line), UTF-8 left as it is. Non-finite doubles, which JSON lacks,
    /// are written as the strings "NaN", "Infinity" and "-Infinity".
    package var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    package func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .integer(let i): out += String(i)
        case .unsigned(let u): out += String(u)
        case .double(let d):
            if d.isNaN { out += "\"NaN\"" }
            else if d.isInfinite { out += d < 0 ? "\"-Infinity\"" : "\"Infinity\"" }
            else if d == d.rounded(), abs(d) < 1e15 { out += String(Int64(d)) }
            else { out += "\(d)" }
        case .number(let text): out += text
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.writeString(key, into: &out)
                out += ":"
                value.write(into: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension JSONValue: Decodable {
    /// Decodes any JSON (used for the values Strata stores as JSON); object keys come sorted,
    /// which is the order Strata writes them in.
    @usableFromInline package init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .integer(i) }
        else if let u = try? c.decode(UInt64.self) { self = .unsigned(u) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else {
            let o = try c.decode([String: JSONValue].self)
            self = .object(o.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
    }
}

/// The schema written in a store by the object layer (metadata `strata.schema`), read without
/// the model classes. Property types are the Swift type names the models had.
package struct StoredModelSchema: Sendable {
    package struct Attribute: Sendable {
        package let name: String
        /// The stored Swift type name, such as `Swift.Optional<Swift.Int>`.
        package let typeName: String
        /// The attribute options set (`unique`, `externalStorage`, ...).
        package let options: [String]
        /// The names the property had before it was renamed, oldest first (records of older
        /// layouts may have its value under one of them).
        package let formerNames: [String]
        /// The type, parsed once.
        package let type: StoredType
        package let isExternal: Bool

        package init(name: String, typeName: String, options: [String], formerNames: [String] = []) {
            self.name = name
            self.typeName = typeName
            self.options = options
            self.formerNames = formerNames
            type = StoredType.parse(typeName)
            isExternal = options.contains(StoredOption.externalStorage.name)
        }

        /// The type as a person writes it: `Int?`, `[String]`, `Date`.
        package var displayType: String { type.display }
    }

    package struct Entity: Sendable {
        package let name: String
        package let attributes: [Attribute]
        package let uniqueConstraints: [[String]]
        package let indexes: [[String]]
        /// The property names of each record layout, oldest first; a record's layout version
        /// is its index here, and the last one is the attributes'.
        package let layouts: [[String]]
        /// By property name: the encoded value that records of an older layout lacking the
        /// property read for it (fixed when it was added). Empty in stores written before
        /// Strata kept defaults.
        package let defaults: [String: [UInt8]]
    }

    /// The metadata entry that holds the schema.
    package static let metadataName = StoredSchema.metadataKey

    package let entities: [Entity]

    /// Reads the schema from the JSON of the `strata.schema` metadata entry.
    package init(json bytes: [UInt8]) throws {
        let stored = try StoredSchema.decode(bytes, path: "this store")
        let options = StoredOption.all
        entities = stored.entities.map { e in
            Entity(name: e.name,
                   attributes: e.properties.map { p in
                       Attribute(name: p.name, typeName: p.type, options: options.filter { p.options & $0.bit != 0 }.map(\.name),
                                 formerNames: e.formerNames?[p.name] ?? [])
                   },
                   uniqueConstraints: e.unique, indexes: e.indexes, layouts: e.allLayouts,
                   defaults: (e.defaults ?? [:]).mapValues { Array($0) })
        }
    }

    /// The schema stored in the store `tx` reads, or nil for a store without one (a store
    /// written with StrataEngine alone).
    package init?(_ tx: ReadTransaction) throws {
        guard let bytes = try tx.metadata(Self.metadataName) else { return nil }
        try self.init(json: bytes)
    }

    package func entity(named name: String) -> Entity? { entities.first { $0.name == name } }
}

/// A record that does not decode as the stored schema says.
package struct RecordDecodingError: Error, CustomStringConvertible {
    package let description: String
}

extension StoredModelSchema.Entity {
    /// Decodes an object's record into its properties' values, in declaration order.
    ///
    /// Values become JSON as a person reads them: numbers, strings, `true`/`false`, `null` for
    /// nil; dates as ISO 8601 strings (UTC, to the millisecond), UUIDs and URLs as strings,
    /// `Data` as base64, `Decimal` as a number, arrays and sets as arrays, dictionaries as
    /// objects, `Codable` structs and enums as their JSON. A relationship is the related
    /// row id (to-one) or a list of them (to-many). An `.externalStorage` value kept in a blob
    /// is `{"_blob": id}`, or its value when `loadBlob` is given (it reads a blob's bytes).
    /// A record of an older layout (written before a lightweight schema change) starts with
    /// `"_layout": version`; a property it holds under a former name shows under today's, and
    /// one added since shows the default stored when it was added (a store written before
    /// Strata kept defaults has none, and such a property is left out).
    package func decode(_ record: UnsafeRawBufferPointer,
                        loadBlob: ((UInt64) throws -> [UInt8])? = nil) throws -> [(String, JSONValue)] {
        let view: RecordView
        do { view = try RecordView(record) } catch let failure as ValueDecodingFailure {
            throw RecordDecodingError(description: "\(name): \(failure.message)")
        }
        // A record of an older layout (written before a lightweight schema change) has the
        // fields of that layout: properties are found by name or former name, and those it
        // lacks take their stored default.
        let version = Int(view.layoutVersion)
        let current = layouts.count <= 1 || version == layouts.count - 1
        let fieldNames = current ? attributes.map(\.name) : version < layouts.count ? layouts[version] : []
        guard current || version < layouts.count else {
            throw RecordDecodingError(description: "\(name): a record of layout \(version), which the stored schema does not list")
        }
        guard view.count == fieldNames.count else {
            throw RecordDecodingError(description: "\(name): a record with \(view.count) fields where its layout has \(fieldNames.count)")
        }
        var values: [(String, JSONValue)] = current ? [] : [("_layout", .integer(Int64(version)))]
        values.reserveCapacity(attributes.count + 1)
        for (i, attribute) in attributes.enumerated() {
            do {
                if current {
                    values.append((attribute.name, try attribute.decode(try view.field(i), loadBlob: loadBlob)))
                } else if let position = ([attribute.name] + attribute.formerNames.reversed()).lazy.compactMap({ fieldNames.firstIndex(of: $0) }).first {
                    values.append((attribute.name, try attribute.decode(try view.field(position), loadBlob: loadBlob)))
                } else if let fallback = defaults[attribute.name] {
                    values.append((attribute.name, try fallback.withUnsafeBytes { try attribute.decode($0, loadBlob: loadBlob) }))
                }
            } catch let failure as ValueDecodingFailure {
                throw RecordDecodingError(description: "\(name).\(attribute.name) (\(attribute.displayType)): \(failure.message)")
            }
        }
        return values
    }
}

extension StoredModelSchema.Attribute {
    /// Decodes one field of this attribute. An `.externalStorage` field is `[0x00]` then the
    /// value inline, or `[0x01][u64 blob id]`: `{"_blob": id}`, or the blob's value when
    /// `loadBlob` is given.
    package func decode(_ raw: UnsafeRawBufferPointer, loadBlob: ((UInt64) throws -> [UInt8])?) throws -> JSONValue {
        guard isExternal else { return try type.decode(raw) }
        guard let tag = raw.first else { throw decodingFailure("an empty external-storage field") }
        guard tag == 1 else { return try type.decode(UnsafeRawBufferPointer(rebasing: raw[1...])) }
        guard raw.count == 9 else { throw decodingFailure("a malformed blob reference") }
        let blob = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
        guard let loadBlob else { return .object([("_blob", .unsigned(blob))]) }
        let bytes = try loadBlob(blob)
        return try bytes.withUnsafeBytes { try type.decode($0) }
    }
}

/// A stored Swift type name, parsed: `Swift.Dictionary<Swift.String, Swift.Int>`.
package indirect enum StoredType: Sendable {
    case primitive(String)
    case optional(StoredType)
    case array(StoredType)
    case set(StoredType)
    case dictionary(StoredType, StoredType)
    case relationship(target: String, toMany: Bool)
    /// Any other `Codable` type: stored as JSON.
    case codable(String)

    private static let standardModules: Set<String> = ["Swift", "Foundation", "FoundationEssentials"]
    private static let primitives: Set<String> = ["String", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16",
                                                  "UInt32", "UInt64", "Double", "Float", "Date", "Data", "UUID", "URL", "Decimal"]

    package static func parse(_ name: String) -> StoredType {
        if name.hasPrefix("relationship("), name.hasSuffix(")") {
            let parts = name.dropFirst("relationship(".count).dropLast().split(separator: ",")
            return .relationship(target: parts.first.map(String.init) ?? "?", toMany: parts.last == "many")
        }
        var parser = TypeNameParser(text: Array(name.unicodeScalars))
        guard let node = parser.parse(), parser.atEnd else { return .codable(name) }
        return make(node)
    }

    private static func make(_ node: TypeNameParser.Node) -> StoredType {
        let (module, base) = node.qualifiedName
        guard standardModules.contains(module) else { return .codable(node.text) }
        switch (base, node.arguments.count) {
        case ("Optional", 1): return .optional(make(node.arguments[0]))
        case ("Array", 1): return .array(make(node.arguments[0]))
        case ("Set", 1): return .set(make(node.arguments[0]))
        case ("Dictionary", 2): return .dictionary(make(node.arguments[0]), make(node.arguments[1]))
        case (_, 0) where primitives.contains(base): return .primitive(base)
        default: return .codable(node.text)
        }
    }

    package var display: String {
        switch self {
        case .primitive(let name): name
        case .optional(let w): "\(w.display)?"
        case .array(let e): "[\(e.display)]"
        case .set(let e): "Set<\(e.display)>"
        case .dictionary(let k, let v): "[\(k.display): \(v.display)]"
        case .relationship(let target, let toMany): toMany ? "[\(target)] (relationship)" : "\(target)? (relationship)"
        case .codable(let name): TypeNameParser.unqualified(name)
        }
    }

    package func decode(_ raw: UnsafeRawBufferPointer) throws -> JSONValue {
        switch self {
        case .primitive(let name): return try StoredType.decodePrimitive(name, raw)
        case .optional(let wrapped):
            guard let tag = raw.first else { throw decodingFailure("an empty optional") }
            return tag == 0 ? .null : try wrapped.decode(UnsafeRawBufferPointer(rebasing: raw[1...]))
        case .array(let element), .set(let element):
            var p = 0
            let n = try Varint.read(raw, &p)
            guard n <= raw.count else { throw decodingFailure("an array count past the end") }
            var items: [JSONValue] = []
            for _ in 0..<n { items.append(try element.decode(try Varint.readElement(raw, &p))) }
            return .array(items)
        case .dictionary(let key, let value):
            var p = 0
            let n = try Varint.read(raw, &p)
            guard n <= raw.count else { throw decodingFailure("a dictionary count past the end") }
            var members: [(String, JSONValue)] = []
            for _ in 0..<n {
                let k = try key.decode(try Varint.readElement(raw, &p))
                let v = try value.decode(try Varint.readElement(raw, &p))
                if case .string(let s) = k { members.append((s, v)) } else { members.append((k.serialized, v)) }
            }
            return .object(members.sorted { $0.0 < $1.0 })
        case .relationship(_, let toMany):
            var p = 0
            let n = try Varint.read(raw, &p)
            guard n <= raw.count else { throw decodingFailure("a relationship count past the end") }
            var rows: [JSONValue] = []
            for _ in 0..<n { rows.append(.unsigned(UInt64(try Varint.read(raw, &p)))) }
            return toMany ? .array(rows) : rows.first ?? .null
        case .codable:
            do { return try JSONDecoder().decode(JSONValue.self, from: Data(raw)) } catch {
                throw decodingFailure("a value that is not the JSON its Codable type is stored as")
            }
        }
    }

    private static func decodePrimitive(_ name: String, _ raw: UnsafeRawBufferPointer) throws -> JSONValue {
        guard let decode = StoredValues.dumpDecoder(named: name) else { throw decodingFailure("an unknown type \(name)") }
        return try decode(raw)
    }
}

/// Parses `Module.Name<Argument, ...>` (nested generics, dotted names).
package struct TypeNameParser {
    package struct Node {
        package var name: String
        package var arguments: [Node]
        package var text: String { arguments.isEmpty ? name : "\(name)<\(arguments.map(\.text).joined(separator: ", "))>" }
        /// The first component (the module) and the last one.
        package var qualifiedName: (module: String, base: String) {
            let parts = name.split(separator: ".")
            return (parts.count > 1 ? String(parts[0]) : "", String(parts.last ?? ""))
        }
    }

    package let text: [Unicode.Scalar]
    package var position = 0
    package var atEnd: Bool { position == text.count }

    package init(text: [Unicode.Scalar]) { self.text = text }

    package mutating func parse() -> Node? {
        skipSpaces()
        var name = ""
        while position < text.count, !"<>,".unicodeScalars.contains(text[position]) {
            name.unicodeScalars.append(text[position])
            position += 1
        }
        name = name.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        var arguments: [Node] = []
        if position < text.count, text[position] == "<" {
            position += 1
            while true {
                guard let argument = parse() else { return nil }
                arguments.append(argument)
                skipSpaces()
                guard position < text.count else { return nil }
                let c = text[position]
                position += 1
                if c == ">" { break }
                if c != "," { return nil }
            }
        }
        return Node(name: name, arguments: arguments)
    }

    private mutating func skipSpaces() {
        while position < text.count, text[position] == " " { position += 1 }
    }

    /// `Module.Outer.Inner<Swift.Int>` → `Outer.Inner<Int>`.
    package static func unqualified(_ name: String) -> String {
        var parser = TypeNameParser(text: Array(name.unicodeScalars))
        guard let node = parser.parse(), parser.atEnd else { return name }
        func strip(_ n: Node) -> String {
            let parts = n.name.split(separator: ".")
            let base = parts.count > 1 ? parts.dropFirst().joined(separator: ".") : n.name
            return n.arguments.isEmpty ? base : "\(base)<\(n.arguments.map(strip).joined(separator: ", "))>"
        }
        return strip(node)
    }
}
