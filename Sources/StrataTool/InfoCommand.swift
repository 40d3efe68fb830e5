import Foundation
import Strata
import StrataEngine
import StrataRecords

/// `strata info PATH`: what a store holds, read from its last commit record (no scan).
struct InfoCommand: Command {
    static let name = "info"
    static let summary = "format, size, last commit, collections with counts, indexes, attributes, reclaimable bytes"
    static let help = """
        usage: strata info PATH [--json]

        Describes the store at PATH: its file format version, file size, the sequence number
        of its last commit, each collection with its record count and indexes, and about how
        many bytes `strata compact` would free. A store written through Strata's object layer
        has its schema in the file: each collection is then an entity, shown with its
        attributes, their types and options. Opens the store read-only; costs a few reads
        whatever the store's size.

        options:
          --json   one JSON object instead of text
        """

    let path: String
    let json: Bool

    init(arguments: inout Arguments) throws {
        json = arguments.flag("--json")
        path = try arguments.positional("the store's PATH")
    }

    func run() throws -> ExitStatus {
        let store = try openStore(path, readOnly: true)
        defer { store.close() }
        let info = try store.info()
        let schema = try store.read { try StoredModelSchema($0) }
        if json {
            Output.standard.json(jsonReport(info, schema))
        } else {
            printReport(info, schema)
        }
        return .success
    }

    private func printReport(_ info: StoreInfo, _ schema: StoredModelSchema?) {
        let out = Output.standard
        let share = info.fileSize > 0 ? info.reclaimableBytes * 100 / info.fileSize : 0
        out.line("\(info.path): Strata store, file format version \(info.formatVersion)")
        out.line("  file size     \(info.fileSize) bytes (\(humanBytes(info.fileSize)))")
        out.line("  last commit   \(info.sequence)")
        out.line("  live bytes    \(info.liveBytes) (records, pages and metadata the last commit uses)")
        out.line("  reclaimable   \(info.reclaimableBytes) bytes (\(share)%), which `strata compact` would free")
        out.line("  schema        \(schema.map { "\($0.entities.count) \($0.entities.count == 1 ? "entity" : "entities") (written by Strata's object layer)" } ?? "none (a StrataEngine store)")")
        if info.collections.isEmpty { out.line("\nno collections") }
        for collection in info.collections {
            let entity = schema?.entity(named: collection.name)
            out.line()
            if entity != nil {
                out.line("entity \(collection.name): \(collection.count) objects, \(collection.liveBytes) bytes of records")
            } else {
                out.line("collection \(collection.name): \(collection.count) records, \(collection.liveBytes) bytes of records")
            }
            if !collection.indexes.isEmpty {
                out.line("  indexes")
                let width = collection.indexes.map(\.name.count).max() ?? 0
                for index in collection.indexes {
                    out.line("    " + index.name.padding(toLength: width, withPad: " ", startingAt: 0) + (index.isUnique ? "  unique" : ""))
                }
            }
            if let entity {
                out.line("  attributes")
                let nameWidth = entity.attributes.map(\.name.count).max() ?? 0
                let typeWidth = entity.attributes.map(\.displayType.count).max() ?? 0
                for attribute in entity.attributes {
                    let line = "    " + attribute.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                        + attribute.displayType.padding(toLength: typeWidth, withPad: " ", startingAt: 0) + "  "
                        + attribute.options.joined(separator: ", ")
                    out.line(String(line.reversed().drop { $0 == " " }.reversed()))
                }
            }
        }
    }

    private func jsonReport(_ info: StoreInfo, _ schema: StoredModelSchema?) -> JSONValue {
        let collections: [JSONValue] = info.collections.map { c in
            var members: [(String, JSONValue)] = [
                ("name", .string(c.name)),
                ("id", .unsigned(UInt64(c.id.rawValue))),
                ("count", .integer(Int64(c.count))),
                ("live_bytes", .integer(Int64(c.liveBytes))),
                ("indexes", .array(c.indexes.map { .object([("name", .string($0.name)), ("unique", .bool($0.isUnique))]) })),
            ]
            if let entity = schema?.entity(named: c.name) {
                members.append(("attributes", .array(entity.attributes.map { a in
                    .object([("name", .string(a.name)), ("type", .string(a.displayType)), ("swift_type", .string(a.typeName)),
                             ("options", .array(a.options.map(JSONValue.string)))])
                })))
                members.append(("unique_constraints", .array(entity.uniqueConstraints.map { .array($0.map(JSONValue.string)) })))
            }
            return .object(members)
        }
        return .object([
            ("path", .string(info.path)),
            ("format_version", .integer(Int64(info.formatVersion))),
            ("file_size", .integer(Int64(info.fileSize))),
            ("last_commit", .unsigned(info.sequence)),
            ("live_bytes", .integer(Int64(info.liveBytes))),
            ("reclaimable_bytes", .integer(Int64(info.reclaimableBytes))),
            ("schema", .bool(schema != nil)),
            ("collections", .array(collections)),
        ])
    }
}
