import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata dump PATH`: the stored objects as JSON lines, decoded with the schema in the store.
struct DumpCommand: Command {
    static let name = "dump"
    static let summary = "print the stored objects as JSON lines, optionally of one entity and matching fields"
    static let help = """
        usage: strata dump PATH [--entity NAME] [--where FIELD=VALUE]... [--limit N] [--blobs] [--json]

        Prints the objects of the store at PATH, one JSON object per line, entity by entity
        in row id order. Each line has "_entity" and "_row" (the object's row id), then its
        attributes in declaration order, decoded with the schema stored in the file: dates as
        ISO 8601 strings (UTC), UUIDs and URLs as strings, Data as base64, Codable structs and
        enums as their JSON, relationships as related row ids, and an .externalStorage value
        kept in a blob file as {"_blob": ID} (its value with --blobs). A store without a schema
        (written with StrataEngine alone) prints "_collection", "_row" and the record's bytes
        in base64. Opens the store read-only.

        options:
          --entity NAME         only this entity (or collection)
          --where FIELD=VALUE   only objects whose FIELD is VALUE: a string equal to it, a
                                number equal to it, true/false, null, or an array with an
                                element equal to it; repeat for several (all must match)
          --limit N             stop after N objects
          --blobs               print .externalStorage values kept in blob files, not their ids
          --json                accepted, as by the other commands: the output is JSON already
                                (and a failure is printed as a JSON object too)
        """

    let path: String
    let entity: String?
    let conditions: [(field: String, value: String)]
    let limit: Int?
    let blobs: Bool

    init(arguments: inout Arguments) throws {
        entity = try arguments.value("--entity")
        conditions = try arguments.values("--where").map { condition in
            guard let equals = condition.firstIndex(of: "="), equals != condition.startIndex else {
                throw UsageError("--where needs FIELD=VALUE, not '\(condition)'")
            }
            return (String(condition[..<equals]), String(condition[condition.index(after: equals)...]))
        }
        limit = try arguments.integer("--limit", in: 0...Int.max)
        blobs = arguments.flag("--blobs")
        _ = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let store = try openStore(path, readOnly: true)
        defer { store.close() }
        let out = Output.standard
        var printed = 0
        var failures = 0
        try store.read { tx in
            let schema = try StoredModelSchema(tx)
            let names = tx.collectionNames
            if let entity, !names.contains(entity) {
                let listed = names.filter { $0 != HistoryRecord.collection }.joined(separator: ", ")
                throw ToolError("\(path) has no entity or collection named '\(entity)' (it has: \(listed))", path: path)
            }
            // The history is not objects: `strata history` lists it (`--entity strata.history` dumps its records).
            let selected = entity.map { [$0] } ?? names.filter { $0 != HistoryRecord.collection }
            try checkFields(selected, schema)
            for name in selected {
                guard let collection = tx.collection(named: name) else { continue }
                let model = schema?.entity(named: name)
                let loadBlob: ((UInt64) throws -> [UInt8])? = blobs ? { try tx.blob(BlobID(rawValue: $0)) } : nil
                try tx.forEachRecord(in: collection) { row, record in
                    if let limit, printed >= limit { return false }
                    var members: [(String, JSONValue)]
                    if let model {
                        members = [("_entity", .string(name)), ("_row", .unsigned(row))]
                        do { members += try model.decode(record, loadBlob: loadBlob) } catch {
                            printError("strata dump: row \(row) of \(name): \(error)")
                            failures += 1
                            return true
                        }
                    } else {
                        members = [("_collection", .string(name)), ("_row", .unsigned(row)), ("_bytes", .string(Data(record).base64EncodedString()))]
                    }
                    if matches(members) {
                        out.json(.object(members))
                        printed += 1
                    }
                    return true
                }
            }
        }
        if failures > 0 {
            printError("strata dump: \(failures) object\(failures == 1 ? "" : "s") could not be decoded; `strata verify \(path)` checks the whole store")
            return .failure
        }
        return .success
    }

    /// A `--where` field that no selected entity has is a mistake worth saying, not an empty result.
    private func checkFields(_ selected: [String], _ schema: StoredModelSchema?) throws {
        for (field, _) in conditions where !field.hasPrefix("_") {
            let known = selected.contains { schema?.entity(named: $0)?.attributes.contains { $0.name == field } ?? false }
            if !known {
                let attributes = selected.compactMap { schema?.entity(named: $0) }.flatMap { $0.attributes.map(\.name) }
                throw ToolError("no selected entity has an attribute '\(field)'"
                                + (attributes.isEmpty ? "" : " (attributes: \(attributes.joined(separator: ", ")))"))
            }
        }
    }

    private func matches(_ members: [(String, JSONValue)]) -> Bool {
        conditions.allSatisfy { condition in
            guard let value = members.first(where: { $0.0 == condition.field })?.1 else { return false }
            return DumpCommand.value(value, matches: condition.value)
        }
    }

    /// True when `value` is what a person means by `text` on the command line.
    static func value(_ value: JSONValue, matches text: String) -> Bool {
        switch value {
        case .null: return text == "null" || text == "nil"
        case .bool(let b): return text == (b ? "true" : "false")
        case .integer(let i): return Int64(text) == i || Double(text) == Double(i)
        case .unsigned(let u): return UInt64(text) == u || Double(text) == Double(u)
        case .double(let d): return Double(text) == d
        case .number(let digits): return digits == text || (Decimal(string: text) != nil && Decimal(string: text) == Decimal(string: digits))
        case .string(let s): return s == text || (UUID(uuidString: s) != nil && s.caseInsensitiveCompare(text) == .orderedSame)
        case .array(let items): return items.contains { DumpCommand.value($0, matches: text) } || value.serialized == text
        case .object: return value.serialized == text
        }
    }
}
