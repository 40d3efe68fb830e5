// The stored schema is read by `JSONReader` and `StoredSchema(reading:)` instead of `JSONDecoder`
// (whose first use cost a fresh process's open a fifth of its time). Both must read every
// schema alike, or a store would open with a different schema than it holds; and the reader
// must refuse what is not JSON, so that `JSONDecoder` says what is wrong.
import Foundation
import Testing
import StrataTestSupport
@testable import Strata
@_spi(StorageBackend) import StrataRecords

@Suite struct JSONReaderTests {
    /// A JSON array of strings goes to a `[String]` field straight (`appendStringsField`) only
    /// when the field is the one the strings make, and declines everything else.
    @Test func aStringArrayFieldFromJSONIsTheFieldOfItsStrings() throws {
        func field(_ strings: [String]) throws -> [UInt8] {
            var bytes: [UInt8] = []
            try [String].encode(strings, into: &bytes)
            return bytes
        }
        let long = String(repeating: "x", count: 300)
        let plain = [#"["swift","ios"]"#, #"  [ "spaces" ,"around"  ]  "#, "[]", " [ ] ", "[\"\(long)\",\"\"]", #"["a b/c{}[],:"]"#]
        for document in plain {
            var bytes: [UInt8] = [7]
            #expect(JSONReader.appendStringsField(of: Data(document.utf8), into: &bytes), "\(document)")
            let expected = try JSONDecoder().decode([String].self, from: Data(document.utf8))
            #expect(bytes == [7] + (try field(expected)), "\(document)")
        }
        // Escapes, non-ASCII, control characters, other shapes: declined, nothing appended.
        let declined = [#"["quote \" inside"]"#, #"["\u0041"]"#, "[\"é\"]", "[\"tab\there\"]", "[\"a\" \"b\"]", "[\"a\",]",
                        "[1]", "{}", "", "[", "[\"open", #"["a"] x"#, #"[["a"]]"#]
        for document in declined {
            var bytes: [UInt8] = [7]
            #expect(!JSONReader.appendStringsField(of: Data(document.utf8), into: &bytes), "\(document)")
            #expect(bytes == [7])
        }
        // Random arrays as JSONEncoder writes them: straight or not, the same field.
        var random = SeededGenerator(seed: 11)
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "é", ",", "]", "["]
        for _ in 0..<300 {
            let strings = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                String((0..<Int.random(in: 0...140, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "a" })
            }
            let json = try JSONEncoder().encode(strings)
            var bytes: [UInt8] = []
            if !JSONReader.appendStringsField(of: json, into: &bytes) { try [String].encode(try JSONReader.strings(in: json), into: &bytes) }
            #expect(bytes == (try field(strings)))
        }
    }

    /// Strings with every kind of escape read as `JSONDecoder` reads them.
    @Test func stringsReadAsJSONDecoderReadsThem() throws {
        let documents = [
            #"["plain", "", "quote \" backslash \\ slash \/", "\b\f\n\r\t", "\u00e9\u0041\u20AC", "\ud83d\ude00 emoji", "é raw UTF-8 ✓"]"#,
            #"  [ "spaces" ,"around"  ]  "#,
            #"[]"#,
            "[\"\\u0000 nul\"]",
        ]
        for document in documents {
            let expected = try JSONDecoder().decode([String].self, from: Data(document.utf8))
            let read = try JSONReader.value(of: Array(document.utf8))
            #expect(read == .array(expected.map { .string($0) }), "\(document)")
        }
        // Random strings, written by JSONEncoder (which escapes what it must), read back.
        var random = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "€", "😀", "\u{301}", "\u{FEFF}"]
        for _ in 0..<200 {
            let strings = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "a" })
            }
            let encoded = try JSONEncoder().encode(strings)
            #expect(try JSONReader.value(of: Array(encoded)) == .array(strings.map { .string($0) }))
        }
    }

    @Test func numbersAndLiterals() throws {
        let read = try JSONReader.value(of: Array(#"[0, -12, 9223372036854775807, 18446744073709551615, 1.5, -2e3, true, false, null, {"a": {}}]"#.utf8))
        #expect(read == .array([.integer(0), .integer(-12), .integer(.max), .unsigned(.max), .number("1.5"), .number("-2e3"),
                                .bool(true), .bool(false), .null, .object([("a", .object([]))])]))
    }

    /// What is not JSON is refused, never read as something else.
    @Test func malformedDocumentsAreRefused() {
        let malformed = [
            "", "[", "]", "[1,]", "[,1]", "{\"a\" 1}", "{\"a\":1,}", "{a:1}", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]",
            "\"unterminated", "[\"bad escape \\x\"]", "[\"\\u12\"]", "[\"\\ud83d alone\"]", "[\"\\ude00 low first\"]",
            "[\"raw \n newline\"]", "[tru]", "[nulls]", "[1] 2", "[1] x", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        ]
        for document in malformed {
            #expect(throws: JSONReader.Malformed.self, "\(document)") { try JSONReader.value(of: Array(document.utf8)) }
        }
        // Invalid UTF-8 inside a string.
        #expect(throws: JSONReader.Malformed.self) { try JSONReader.value(of: [0x22, 0xC3, 0x28, 0x22]) }
    }

    /// Every schema reads the same by hand as through `JSONDecoder`: random ones with every
    /// optional part, and those of this suite's models.
    @Test func storedSchemasReadAsJSONDecoderReadsThem() throws {
        var random = SeededGenerator(seed: 11)
        let names = ["id", "name", "naïve", "quote\"d", "back\\slash", "emoji😀", "tab\there", "x"]
        func name() -> String { names.randomElement(using: &random) ?? "x" }
        func lists() -> [[String]] { (0..<Int.random(in: 0...3, using: &random)).map { _ in (0..<Int.random(in: 1...3, using: &random)).map { _ in name() } } }
        var schemas: [StoredSchema] = []
        for _ in 0..<100 {
            var entities: [StoredEntity] = []
            for model in TypeNameTests.models.shuffled(using: &random).prefix(Int.random(in: 0...3, using: &random)) {
                // (A model whose transformer another suite registers is left out.)
                for entity in (try? Schema([model]).entities(includingRelated: false)) ?? [] {
                    var stored = StoredEntity(entity)
                    if Bool.random(using: &random) { stored.layouts = lists() }
                    if Bool.random(using: &random) { stored.formerNames = Dictionary(lists().map { (name(), $0) }, uniquingKeysWith: { a, _ in a }) }
                    if Bool.random(using: &random) {
                        stored.defaults = Dictionary((0..<Int.random(in: 0...3, using: &random)).map { _ in
                            (name(), Data((0..<Int.random(in: 0...9, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
                        }, uniquingKeysWith: { a, _ in a })
                    }
                    stored.unique += lists()
                    entities.append(stored)
                }
            }
            schemas.append(StoredSchema(formatVersion: Int.random(in: 1...3, using: &random), entities: entities))
        }
        var entitiesRead = 0
        for schema in schemas {
            let encoded = Array(try JSONEncoder().encode(schema))
            let byHand = try JSONReader.read(encoded, StoredSchema.init(reading:))
            #expect(byHand == (try JSONDecoder().decode(StoredSchema.self, from: Data(encoded))))
            #expect(byHand == schema)
            #expect(try StoredSchema.decode(encoded, path: "test") == schema)
            entitiesRead += schema.entities.count
        }
        #expect(entitiesRead > 100)
    }

    /// The hand-written reading itself passes over keys it does not know, whatever their
    /// values, and reads `null` for the optional parts, as `JSONDecoder` does.
    @Test func theHandReadingSkipsUnknownKeysAndReadsNulls() throws {
        let document = #"{"future": {"a": [1, {"b": null}], "c": "\u00e9"}, "formatVersion": 2, "entities": [{"name": "A", "x": true, "#
            + #""properties": [{"options": 1, "type": "Swift.Int", "name": "n", "later": -1.5e3}], "unique": [["n"]], "indexes": [], "#
            + #""layouts": null, "formerNames": {"n": ["m", "k"]}, "defaults": null}]}"#
        let byHand = try JSONReader.read(Array(document.utf8), StoredSchema.init(reading:))
        #expect(byHand == (try JSONDecoder().decode(StoredSchema.self, from: Data(document.utf8))))
        #expect(byHand.formatVersion == 2)
        #expect(byHand.entities.first?.formerNames == ["n": ["m", "k"]])
        #expect(byHand.entities.first?.layouts == nil)
        #expect(byHand.entities.first?.properties == [StoredEntity.StoredProperty(name: "n", type: "Swift.Int", options: 1)])
        // Keys with escapes are the keys they spell; numbers of every length read as written.
        let escaped = #"{"formatVersion": 123456789012345678, "entities": [{"na\u006de": "B", "properties": [{"name": "p", "type": "T", "#
            + #""options": 65535}], "unique": [], "indexes": [], "formerNames": {"caf\u00e9": ["x"], "n": []}}]}"#
        let read = try JSONReader.read(Array(escaped.utf8), StoredSchema.init(reading:))
        #expect(read == (try JSONDecoder().decode(StoredSchema.self, from: Data(escaped.utf8))))
        #expect(read.formatVersion == 123456789012345678)
        #expect(read.entities.first?.name == "B")
        #expect(read.entities.first?.formerNames == ["café": ["x"], "n": []])
        #expect(read.entities.first?.properties.first?.options == 65535)
        // A value of another type than the schema's is not taken (JSONDecoder says what is wrong).
        for wrong in [#"{"formatVersion": "1", "entities": []}"#, #"{"formatVersion": 1.5, "entities": []}"#,
                      #"{"formatVersion": 1, "entities": {}}"#, #"{"formatVersion": 1, "entities": [], }"#,
                      #"{"formatVersion": 01, "entities": []}"#, #"{"formatVersion": 1e2, "entities": []}"#,
                      #"{"formatVersion": 12345678901234567890, "entities": []}"#, #"{"formatVersion": -, "entities": []}"#] {
            #expect(throws: JSONReader.Malformed.self, "\(wrong)") { try JSONReader.read(Array(wrong.utf8), StoredSchema.init(reading:)) }
        }
    }

    /// A schema the hand-written reading does not expect goes to `JSONDecoder`: its error for
    /// a damaged one, its answer for one with a different but valid shape.
    @Test func otherShapesGoToJSONDecoder() throws {
        #expect(throws: JSONReader.Malformed.self, "formatVersion is required, as JSONDecoder requires it") {
            try JSONReader.read(Array(#"{"entities": []}"#.utf8), StoredSchema.init(reading:))
        }
        let withUnknownKey = Array(#"{"formatVersion": 1, "entities": [], "future": [1, 2]}"#.utf8)
        #expect(try StoredSchema.decode(withUnknownKey, path: "test") == StoredSchema(formatVersion: 1, entities: []))
        let damaged = Array(#"{"formatVersion": 1, "entities": [{"name": 3}]}"#.utf8)
        #expect(throws: StrataError.self) { try StoredSchema.decode(damaged, path: "test") }
    }
}
