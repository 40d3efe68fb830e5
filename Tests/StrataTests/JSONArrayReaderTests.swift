// The hand-written reader of JSON arrays of strings and integers (`JSONArrayReader`, the fast
// path of `SnapshotValue.decode` for `[String]` and `[Int]`): on every input it reads, its answer
// is JSONDecoder's, scalar for scalar; on every other one `decode` answers as JSONDecoder does.
import Foundation
import Testing
@testable import Strata

struct JSONArrayReaderTests {
    /// Arrays of strings the reader must take (and read as JSONDecoder does).
    static let stringArrays: [String] = [
        #"[]"#, #" [ ] "#, "\t[\n]\r\n", #"[""]"#, #"["a"]"#, #"["swift","linux","storage"]"#,
        " [ \"a\" ,\n\t\"b\" ] ", #"["\"quoted\"","back\\slash","\/slash"]"#,
        #"["\b\f\n\r\t"]"#, #"["\u0000","\u001f","\u0041\u00e9"]"#, #"["\u00E9\u00e9","\uFFFF","\uffFd"]"#,
        #"["\ud83d\ude00","\uD83C\uDDF5\uD83C\uDDF9"]"#, #"["a\ud834\udd1eb"]"#,
        "[\"é\",\"日本語\",\"😀\",\"e\u{301}\",\"\u{1F1F5}\u{1F1F9}\"]", "[\"\u{7F}\",\"\u{FEFF}x\"]",
        #"["mixed é \u00e9 and 😀 \ud83d\ude00 \" \\ \/"]"#,
        String(decoding: SnapshotValue.json(["a\"b", "c\\d", "e/f", "\u{8}\u{C}\n\r\t", "\u{1}\u{1F}", "ü😀", ""]), as: UTF8.self),
    ]

    /// JSON the reader must leave to JSONDecoder (some valid, some not).
    static let others: [String] = [
        "", " ", "[", "]", "[,]", #"["a",]"#, #"[,"a"]"#, #"["a""b"]"#, #"["a"] x"#, #"["a"]]"#, #"[["a"]]"#,
        #"["a" "b"]"#, #"{"a":"b"}"#, "null", #""a""#, "[null]", #"["a",null]"#, "[1]", #"["a",1]"#, "[true]",
        #"["unterminated]"#, #"["bad \x escape"]"#, #"["\u12"]"#, #"["\u12G4"]"#, #"["\U0041"]"#,
        #"["\ud83d"]"#, #"["\ud83dx"]"#, #"["\ud83d\u0041"]"#, #"["\ude00"]"#, #"["\ude00\ud83d"]"#, #"["\ud83d\ud83d"]"#,
        "[\"raw\ttab\"]", "[\"raw\nnewline\"]", "[\"nul\u{0}\"]", "\u{FEFF}[\"bom\"]", "[\"a\"]\u{0}",
    ]

    /// Invalid UTF-8 inside a string: left to JSONDecoder.
    static let invalidUTF8: [[UInt8]] = [
        [0x5B, 0x22, 0xFF, 0x22, 0x5D],              // ["\xFF"]
        [0x5B, 0x22, 0xC3, 0x22, 0x5D],              // a truncated 2-byte sequence
        [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D],        // an overlong "/"
        [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D],  // a surrogate encoded in UTF-8
        [0x5B, 0x22, 0x5C, 0x6E, 0xFF, 0x22, 0x5D],  // after an escape
    ]

    static let integerArrays: [String] = [
        "[]", "[0]", "[1,-1,42]", " [ 7 , 8 ]\n", "[9223372036854775807,-9223372036854775808]", "[10,200,3000]",
    ]

    static let otherIntegers: [String] = [
        "[-0]", "[01]", "[1.0]", "[1e2]", "[1E2]", "[+1]", "[-]", "[9223372036854775808]", "[-9223372036854775809]",
        "[1,]", #"["1"]"#, "[0x10]", "[1 2]", "[.5]", "[1.5]", "[null]",
    ]

    /// The scalars of each string: JSONDecoder's answer exactly, not a canonically equivalent one.
    private func scalars(_ strings: [String]) -> [[UInt32]] { strings.map { $0.unicodeScalars.map(\.value) } }

    private func viaDecoder<V: Decodable>(_ data: Data, _: V.Type) -> V? { try? JSONDecoder().decode(V.self, from: data) }

    private struct Wrapped<V: Decodable>: Decodable { let value: V }

    /// What `decode` answers without the reader: JSONDecoder on the value wrapped in an object.
    private func viaWrappedDecoder<V: Decodable>(_ data: Data, _: V.Type) -> V? {
        try? JSONDecoder().decode(Wrapped<V>.self, from: Data("{\"value\":".utf8) + data + Data("}".utf8)).value
    }

    @Test func readsStringArraysAsJSONDecoderDoes() throws {
        for json in Self.stringArrays {
            let data = Data(json.utf8)
            let fast = try #require(JSONArrayReader.strings(data), "the reader should take \(json)")
            let decoded = try #require(viaDecoder(data, [String].self), "JSONDecoder should take \(json)")
            #expect(scalars(fast) == scalars(decoded), "\(json)")
            #expect(viaWrappedDecoder(data, [String].self).map(scalars) == scalars(decoded), "\(json)")
            // Through the snapshot value, as a fetched object reads it, optional too.
            #expect(scalars(try SnapshotValue.json(data).decode([String].self)) == scalars(decoded))
            #expect(try SnapshotValue.json(data).decode([String]?.self).map(scalars) == scalars(decoded))
        }
    }

    @Test func leavesOtherJSONToJSONDecoder() throws {
        let inputs = Self.others.map { Data($0.utf8) } + Self.invalidUTF8.map { Data($0) }
        for data in inputs {
            #expect(JSONArrayReader.strings(data) == nil, "\(String(decoding: data, as: UTF8.self))")
            // `decode` answers as it does without the reader: the same strings, or an error.
            let decoded = viaWrappedDecoder(data, [String].self)
            let viaSnapshot = try? SnapshotValue.json(data).decode([String].self)
            #expect(viaSnapshot.map(scalars) == decoded.map(scalars), "\(String(decoding: data, as: UTF8.self))")
        }
    }

    @Test func readsIntegerArraysAsJSONDecoderDoes() throws {
        for json in Self.integerArrays {
            let data = Data(json.utf8)
            let fast = try #require(JSONArrayReader.integers(data), "the reader should take \(json)")
            #expect(fast == viaDecoder(data, [Int].self), "\(json)")
            #expect(fast == viaWrappedDecoder(data, [Int].self), "\(json)")
            #expect(try SnapshotValue.json(data).decode([Int].self) == fast)
            #expect(try SnapshotValue.json(data).decode([Int]?.self) == fast)
        }
        for json in Self.otherIntegers {
            let data = Data(json.utf8)
            #expect(JSONArrayReader.integers(data) == nil, "\(json)")
            #expect((try? SnapshotValue.json(data).decode([Int].self)) == viaWrappedDecoder(data, [Int].self), "\(json)")
        }
    }

    /// Other types, and JSON null for an optional, still go through JSONDecoder.
    @Test func otherTypesAreUntouched() throws {
        #expect(JSONArrayReader.array(Data(#"["a"]"#.utf8), as: Set<String>.self) == nil)
        #expect(JSONArrayReader.array(Data("[1]".utf8), as: [Int64].self) == nil)
        #expect(try SnapshotValue.json(Data(#"["a","a"]"#.utf8)).decode(Set<String>.self) == ["a"])
        #expect(try SnapshotValue.json(Data("null".utf8)).decode([String]?.self) == nil)
        #expect(throws: DecodingError.self) { try SnapshotValue.json(Data("[1]".utf8)).decode([String].self) }
    }

    /// What the store writes reads back: random strings of every kind of scalar.
    @Test func roundTripsWhatSnapshotsWrite() throws {
        var rng = SystemRandomNumberGenerator()
        let pool: [Unicode.Scalar] = ["a", "\"", "\\", "/", "\u{0}", "\u{1F}", "\u{7F}", "é", "\u{301}", "\u{FFFF}", "😀", "\u{10FFFF}", "\n", " "]
        for _ in 0..<200 {
            let strings = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                var s = String.UnicodeScalarView()
                for _ in 0..<Int.random(in: 0...6, using: &rng) { s.append(pool.randomElement(using: &rng) ?? "a") }
                return String(s)
            }
            let data = SnapshotValue.json(strings)
            let fast = try #require(JSONArrayReader.strings(data))
            #expect(scalars(fast) == scalars(strings))
            #expect(scalars(fast) == scalars(try JSONDecoder().decode([String].self, from: data)))
        }
    }
}
