// The decoder behind `strata dump`, on hand-made records: layouts, types, JSON text.
import Foundation
import Strata
import Testing

@Suite struct RecordDumpTests {
    /// A record as Docs/FileFormat.md ("Object records") describes it: narrow offsets.
    static func record(layout: UInt16, _ fields: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [1, UInt8(layout & 0xFF), UInt8(layout >> 8), UInt8(fields.count), 0]
        var end = 0
        bytes += [0, 0]
        for f in fields {
            end += f.count
            bytes += [UInt8(end & 0xFF), UInt8(end >> 8)]
        }
        for f in fields { bytes += f }
        return bytes
    }

    static func schema(layouts: String = "") throws -> StoredModelSchema {
        let json = """
            {"formatVersion":1,"entities":[{"name":"Note","unique":[],"indexes":[],\(layouts)
             "properties":[{"name":"title","type":"Swift.String","options":0},
                           {"name":"stars","type":"Swift.Optional<Swift.Int16>","options":0},
                           {"name":"when","type":"FoundationEssentials.Date","options":0},
                           {"name":"mood","type":"App.Mood","options":0},
                           {"name":"marks","type":"Swift.Dictionary<Swift.Int, Swift.Array<Swift.Bool>>","options":0}]}]}
            """
        return try StoredModelSchema(json: Array(json.utf8))
    }

    static let fields: [[UInt8]] = [
        Array("Tab\t\"quoted\"\u{1}".utf8),
        [1, 0xFE, 0xFF],                                                  // Optional(Int16(-2))
        withUnsafeBytes(of: (0.5 as Double).bitPattern.littleEndian, Array.init),
        Array(#""calm""#.utf8),                                           // a Codable enum, as JSON
        [1, 8, 7, 0, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1],                         // [7: [true]]
    ]

    @Test func decodesACurrentRecord() throws {
        let note = try #require(try Self.schema().entity(named: "Note"))
        #expect(note.attributes.map(\.displayType) == ["String", "Int16?", "Date", "Mood", "[Int: [Bool]]"])
        let values = try Self.record(layout: 0, Self.fields).withUnsafeBytes { try note.decode($0) }
        #expect(JSONValue.object(values).serialized
                == #"{"title":"Tab\t\"quoted\"\u0001","stars":-2,"when":"2001-01-01T00:00:00.500Z","mood":"calm","marks":{"7":[true]}}"#)
    }

    @Test func aRecordOfAnOlderLayoutLeavesOutWhatItLacks() throws {
        // Layout 0 had only title and when; a later lightweight change added the rest, in a
        // store written before Strata kept defaults (so there are none to show).
        let note = try #require(try Self.schema(layouts: #""layouts":[["when","title"],["title","stars","when","mood","marks"]],"#).entity(named: "Note"))
        let old = Self.record(layout: 0, [Self.fields[2], Self.fields[0]])
        let values = try old.withUnsafeBytes { try note.decode($0) }
        #expect(values.map(\.0) == ["_layout", "title", "when"])
        #expect(JSONValue.object(values).serialized == #"{"_layout":0,"title":"Tab\t\"quoted\"\u0001","when":"2001-01-01T00:00:00.500Z"}"#)
        let current = try Self.record(layout: 1, Self.fields).withUnsafeBytes { try note.decode($0) }
        #expect(current.count == 5)
        #expect(throws: RecordDecodingError.self) { try Self.record(layout: 7, Self.fields).withUnsafeBytes { try note.decode($0) } }
    }

    @Test func aRecordOfAnOlderLayoutShowsRenamedValuesAndStoredDefaults() throws {
        // `title` was `heading` in layout 0 and `caption` in layout 1; `stars`, `mood` and
        // `marks` were added in layout 2 with the defaults stored then (`when` is in all three).
        let defaults: [String: [UInt8]] = ["stars": [1, 5, 0], "mood": Array(#""sad""#.utf8), "marks": [0]]
        let stored = defaults.map { #""\#($0.key)":"\#(Data($0.value).base64EncodedString())""# }.joined(separator: ",")
        let note = try #require(try Self.schema(layouts: #""layouts":[["when","heading"],["caption","when"],["title","stars","when","mood","marks"]],"#
                                                + #""formerNames":{"title":["heading","caption"]},"defaults":{\#(stored)},"#).entity(named: "Note"))
        #expect(note.attributes.first?.formerNames == ["heading", "caption"])
        let expected = #""title":"Tab\t\"quoted\"\u0001","stars":5,"when":"2001-01-01T00:00:00.500Z","mood":"sad","marks":{}}"#
        let layout0 = try Self.record(layout: 0, [Self.fields[2], Self.fields[0]]).withUnsafeBytes { try note.decode($0) }
        #expect(JSONValue.object(layout0).serialized == #"{"_layout":0,"# + expected)
        let layout1 = try Self.record(layout: 1, [Self.fields[0], Self.fields[2]]).withUnsafeBytes { try note.decode($0) }
        #expect(JSONValue.object(layout1).serialized == #"{"_layout":1,"# + expected)
        // The current layout is read as it is, whatever the defaults.
        let current = try Self.record(layout: 2, Self.fields).withUnsafeBytes { try note.decode($0) }
        #expect(current.map(\.0) == ["title", "stars", "when", "mood", "marks"])
        #expect(JSONValue.object(current).serialized.contains(#""stars":-2"#))
    }

    @Test func damagedRecordsAreErrorsThatNameTheProperty() throws {
        let note = try #require(try Self.schema().entity(named: "Note"))
        var fields = Self.fields
        fields[2] = [1, 2, 3]   // a Date of 3 bytes
        let error = #expect(throws: RecordDecodingError.self) { try Self.record(layout: 0, fields).withUnsafeBytes { try note.decode($0) } }
        #expect(error?.description == "Note.when (Date): a Date of 3 bytes")
        let short = #expect(throws: RecordDecodingError.self) { try Self.record(layout: 0, Array(fields.prefix(2))).withUnsafeBytes { try note.decode($0) } }
        #expect(short?.description.contains("2 fields") == true)
        #expect(throws: RecordDecodingError.self) { try [UInt8]([9, 9]).withUnsafeBytes { try note.decode($0) } }
    }

    @Test func jsonText() {
        #expect(JSONValue.array([.double(.nan), .double(-.infinity), .double(2), .double(0.25), .null, .unsigned(.max), .integer(.min)]).serialized
                == #"["NaN","-Infinity",2,0.25,null,18446744073709551615,-9223372036854775808]"#)
        #expect(JSONValue.string("é\n\u{7F}").serialized == "\"é\\n\u{7F}\"")
    }
}
