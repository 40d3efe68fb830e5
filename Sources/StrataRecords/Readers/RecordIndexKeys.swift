import Foundation
import StrataEngine

// The index keys of a record, computed from the schema stored in the store (without the model
// classes): what `strata verify` gives `Store.verify(indexKeys:)` so that it checks every index
// entry against its row. The engine does not keep a row's keys; this computes them as
// `Table.indexKeys(for:into:)` does from an object (`IndexKeyMaker`).

extension StoredModelSchema {
    /// A `RecordIndexKeys` for the stores `tx` reads: for a record of an entity the schema
    /// describes, the keys of its unique constraints and indexes; nil for a record it cannot
    /// tell (a collection the schema does not describe, or a key of a type whose key it cannot
    /// compute without the model, such as an enum with a raw value).
    package func indexKeys(_ tx: ReadTransaction) -> RecordIndexKeys {
        var plans: [UInt32: KeyPlan] = [:]
        for entity in entities {
            guard let collection = tx.collection(named: entity.name) else { continue }
            var groups: [(IndexID, [Int])] = []
            for (prefix, constraints) in [("unique:", entity.uniqueConstraints), ("index:", entity.indexes)] {
                for names in constraints {
                    guard let index = tx.index(named: prefix + names.joined(separator: ","), in: collection) else { continue }
                    let positions = names.compactMap { name in entity.attributes.firstIndex { $0.name == name } }
                    if positions.count == names.count { groups.append((index.id, positions)) }
                }
            }
            plans[collection.rawValue] = KeyPlan(entity: entity, groups: groups)
        }
        return { collection, _, record in try plans[collection.rawValue]?.keys(of: record) }
    }

    package struct KeyPlan {
        package let entity: Entity
        package let groups: [(IndexID, [Int])]

        package func keys(of record: UnsafeRawBufferPointer) throws -> [IndexKey]? {
            guard !groups.isEmpty else { return [] }
            let view = try RecordView(record)
            var keys: [IndexKey] = []
            for (index, positions) in groups {
                var key: [UInt8] = []
                for p in positions {
                    let attribute = entity.attributes[p]
                    guard !attribute.isExternal,
                          let part = try entity.withField(p, of: view, { field in try field.flatMap { try attribute.type.indexKey($0) } }) else { return nil }
                    key += part
                }
                // As the index holds it: a key longer than 2016 bytes in its long form, whose
                // digest is checked with the rest (Docs/FileFormat.md, "Long index keys").
                KeyEncoding.makeStoredForm(&key)
                keys.append(IndexKey(index, key))
            }
            return keys
        }
    }
}

extension StoredModelSchema.Entity {
    /// Calls `body` with the bytes of attribute `i` in a record: its field, under its name or a
    /// former one in a record of an older layout, or its stored default; nil when it has none.
    package func withField<R>(_ i: Int, of view: RecordView, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        let version = Int(view.layoutVersion)
        if layouts.count <= 1 || version == layouts.count - 1 { return try body(try view.field(i)) }
        guard version < layouts.count else { return try body(nil) }
        let names = layouts[version]
        let attribute = attributes[i]
        if let position = ([attribute.name] + attribute.formerNames.reversed()).lazy.compactMap({ names.firstIndex(of: $0) }).first {
            return try body(try view.field(position))
        }
        guard let fallback = defaults[attribute.name] else { return try body(nil) }
        return try fallback.withUnsafeBytes { try body($0) }
    }
}

extension StoredType {
    /// The index key of a field of this type, as `IndexKeyMaker` makes it from the value; nil
    /// when it depends on the model (an enum's raw value, a type of the app's own).
    package func indexKey(_ raw: UnsafeRawBufferPointer) throws -> [UInt8]? {
        switch self {
        case .primitive(let name):
            return try Self.storedValueType(name).map { try Self.key(of: raw, as: $0) }
        case .optional(.primitive(let name)):
            return try Self.storedValueType(name).map { try Self.optionalKey(of: raw, as: $0) }
        case .relationship:
            return []
        case .codable:
            return nil
        default:
            // Arrays, sets, dictionaries and optionals of other types: the field's bytes.
            return KeyEncoding.encode(Data(raw))
        }
    }

    /// The key of a field of `type`, made exactly as the object layer makes it (`StoredValue.appendKey`).
    private static func key<V: StoredValue>(of raw: UnsafeRawBufferPointer, as type: V.Type) throws -> [UInt8] {
        var key: [UInt8] = []
        V.appendKey(try V.decode(raw), to: &key)
        return key
    }

    private static func optionalKey<V: StoredValue>(of raw: UnsafeRawBufferPointer, as type: V.Type) throws -> [UInt8] {
        try key(of: raw, as: Optional<V>.self)
    }

    private static func storedValueType(_ name: String) -> (any StoredValue.Type)? { StoredValues.named[name] }
}
