import Foundation
import StrataEngine

/// One transaction of a store's history as it is stored: a record of the collection
/// `strata.history`, whose row id is the transaction's token. Written by the save, in the
/// same engine commit as the changes it describes, so a crash keeps both or neither.
///
/// Layout (`Docs/FileFormat.md`, "History records"): a version byte (1), the timestamp (the
/// bits of a `Double`, seconds since 1970, little-endian), the author, bundle identifier and
/// process identifier (each a varint length and UTF-8; the author's length is one more than
/// its byte count, 0 meaning none), a table of names (entities and properties, each a string,
/// counted by a varint), then runs of changes counted by a varint. A run is a kind byte
/// (0 insert, 1 update, 2 delete), the entity's name index, the first row and how many rows
/// follow it one by one (varints); an update run then has the indexes of its changed
/// attributes' names (a count, then the indexes); a delete run has, per row, a tombstone (a
/// count of fields, then each field's name index, its length and its bytes, the property's
/// record encoding). Consecutive rows of one kind, entity and attribute set (no tombstone)
/// share a run, so a bulk insert of 100,000 objects costs a few bytes.
package struct HistoryRecord: Sendable, Equatable {
    package enum Kind: UInt8, Sendable { case insert = 0, update = 1, delete = 2 }

    /// Consecutive rows of one change.
    package struct Run: Sendable, Equatable {
        package var kind: Kind
        package var entity: String
        package var firstRow: RowID
        package var count: Int
        /// The changed attributes (updates).
        package var attributes: [String]
        /// For a delete: the preserved fields of each row (name, record encoding), or empty.
        package var tombstones: [[(name: String, bytes: [UInt8])]]

        package init(kind: Kind, entity: String, firstRow: RowID, count: Int, attributes: [String], tombstones: [[(name: String, bytes: [UInt8])]]) {
            self.kind = kind
            self.entity = entity
            self.firstRow = firstRow
            self.count = count
            self.attributes = attributes
            self.tombstones = tombstones
        }

        package static func == (a: Run, b: Run) -> Bool {
            a.kind == b.kind && a.entity == b.entity && a.firstRow == b.firstRow && a.count == b.count && a.attributes == b.attributes
                && a.tombstones.map { $0.map(\.name) } == b.tombstones.map { $0.map(\.name) }
                && a.tombstones.map { $0.map(\.bytes) } == b.tombstones.map { $0.map(\.bytes) }
        }
    }

    package var timestamp: Date
    package var author: String?
    package var bundleIdentifier: String
    package var processIdentifier: String
    package var runs: [Run]

    package static let collection = "strata.history"
    /// Metadata: the store's identifier (a UUID string), written once when the store is made.
    package static let storeIdentifierMetadata = "strata.storeIdentifier"
    /// Metadata: the largest token pruned so far (8 bytes, little-endian); tokens at or
    /// below it have expired.
    package static let prunedMetadata = "strata.historyPruned"

    /// The largest pruned token that the `prunedMetadata` entry holds (0: none).
    package static func prunedToken(_ metadata: [UInt8]?) -> RowID {
        guard let bytes = metadata, bytes.count == 8 else { return 0 }
        return bytes.withUnsafeBytes { RowID(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    package init(timestamp: Date, author: String?, bundleIdentifier: String, processIdentifier: String, runs: [Run]) {
        self.timestamp = timestamp
        self.author = author
        self.bundleIdentifier = bundleIdentifier
        self.processIdentifier = processIdentifier
        self.runs = runs
    }

    /// How many objects the transaction changed.
    package var changeCount: Int { runs.reduce(0) { $0 + $1.count } }

    // MARK: Encoding

    /// Names (of models and properties) an encoding looks up by comparing; more are hashed.
    static let listedNames = 8

    package func encode() -> [UInt8] {
        var names: [String] = []
        var nameIndex: [String: Int] = [:]
        // Runs of one model follow each other: its name is looked up once, not hashed per run.
        // A few names are found by comparing (a save of one model's objects hashed its name
        // into a dictionary made for it, about 1,600 instructions of a one-object save, W2);
        // the dictionary is made past `listedNames`.
        var last: (name: String, index: Int)?
        func index(_ name: String) -> Int {
            if let last, last.name == name { return last.index }
            let i: Int
            if names.count <= HistoryRecord.listedNames {
                i = names.firstIndex(of: name) ?? names.count
                if i == names.count {
                    names.append(name)
                    if names.count > HistoryRecord.listedNames { for (j, n) in names.enumerated() { nameIndex[n] = j } }
                }
            } else if let known = nameIndex[name] {
                i = known
            } else {
                i = names.count
                nameIndex[name] = i
                names.append(name)
            }
            last = (name, i)
            return i
        }
        var body: [UInt8] = []
        body.reserveCapacity(8 * runs.count + 16)
        Varint.append(runs.count, to: &body)
        for r in runs.indices {
            let kind = runs[r].kind
            body.append(kind.rawValue)
            Varint.append(index(runs[r].entity), to: &body)
            Varint.append(Int(runs[r].firstRow), to: &body)
            Varint.append(runs[r].count, to: &body)
            switch kind {
            case .insert: break
            case .update:
                Varint.append(runs[r].attributes.count, to: &body)
                for name in runs[r].attributes { Varint.append(index(name), to: &body) }
            case .delete:
                Varint.append(runs[r].tombstones.count, to: &body)
                for tombstone in runs[r].tombstones {
                    Varint.append(tombstone.count, to: &body)
                    for field in tombstone {
                        Varint.append(index(field.name), to: &body)
                        Varint.append(field.bytes.count, to: &body)
                        body += field.bytes
                    }
                }
            }
        }
        var bytes: [UInt8] = [1]
        bytes.reserveCapacity(body.count + 64)
        withUnsafeBytes(of: timestamp.timeIntervalSince1970.bitPattern.littleEndian) { bytes += $0 }
        if let author { Self.appendString(author, to: &bytes, shifted: true) } else { bytes.append(0) }
        Self.appendString(bundleIdentifier, to: &bytes)
        Self.appendString(processIdentifier, to: &bytes)
        Varint.append(names.count, to: &bytes)
        for name in names { Self.appendString(name, to: &bytes) }
        // (Appended to the header's array, which has room for it: `bytes + body` made a third.)
        bytes += body
        return bytes
    }

    /// A string's length (plus one when `shifted`, so that 0 can mean none) and its UTF-8
    /// bytes, copied where they lie (an array of them was made for each string of each save).
    private static func appendString(_ string: String, to bytes: inout [UInt8], shifted: Bool = false) {
        var string = string
        string.withUTF8 { utf8 in
            Varint.append(utf8.count + (shifted ? 1 : 0), to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    // MARK: Decoding

    package init(decoding raw: UnsafeRawBufferPointer) throws {
        guard raw.count >= 9, raw[0] == 1 else { throw decodingFailure("a history record of an unknown version") }
        var p = 1
        timestamp = Date(timeIntervalSince1970: Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 1, as: UInt64.self))))
        p = 9
        func string(shifted: Bool = false) throws -> String? {
            var length = try Varint.read(raw, &p)
            if shifted {
                if length == 0 { return nil }
                length -= 1
            }
            guard length <= raw.count - p else { throw decodingFailure("a history string past its record") }
            defer { p += length }
            return String(decoding: UnsafeRawBufferPointer(rebasing: raw[p..<(p + length)]), as: UTF8.self)
        }
        author = try string(shifted: true)
        bundleIdentifier = try string() ?? ""
        processIdentifier = try string() ?? ""
        let nameCount = try Self.count(raw, &p)
        var names: [String] = []
        for _ in 0..<nameCount { names.append(try string() ?? "") }
        func name() throws -> String {
            let i = try Varint.read(raw, &p)
            guard i < names.count else { throw decodingFailure("a history record naming a name it does not have") }
            return names[i]
        }
        let runCount = try Self.count(raw, &p)
        var runs: [Run] = []
        for _ in 0..<runCount {
            guard p < raw.count, let kind = Kind(rawValue: raw[p]) else { throw decodingFailure("a history change of an unknown kind") }
            p += 1
            var run = Run(kind: kind, entity: try name(), firstRow: RowID(try Varint.read(raw, &p)), count: try Varint.read(raw, &p), attributes: [], tombstones: [])
            guard run.count >= 1, run.count <= Int(UInt32.max) else { throw decodingFailure("a history run of \(run.count) rows") }
            switch kind {
            case .insert: break
            case .update:
                for _ in 0..<(try Self.count(raw, &p)) { run.attributes.append(try name()) }
            case .delete:
                for _ in 0..<(try Self.count(raw, &p)) {
                    var fields: [(String, [UInt8])] = []
                    for _ in 0..<(try Self.count(raw, &p)) {
                        let field = try name()
                        let length = try Varint.read(raw, &p)
                        guard length <= raw.count - p else { throw decodingFailure("a tombstone field past its record") }
                        fields.append((field, Array(UnsafeRawBufferPointer(rebasing: raw[p..<(p + length)]))))
                        p += length
                    }
                    run.tombstones.append(fields)
                }
            }
            runs.append(run)
        }
        self.runs = runs
    }

    /// A count that cannot exceed the bytes left (each counted item takes at least one).
    private static func count(_ raw: UnsafeRawBufferPointer, _ p: inout Int) throws -> Int {
        let n = try Varint.read(raw, &p)
        guard n <= raw.count - p else { throw decodingFailure("a history count larger than its record") }
        return n
    }
}
