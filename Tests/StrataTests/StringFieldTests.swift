import Foundation
import Testing
import Strata
@_spi(StorageBackend) import StrataRecords

// A string field decodes to what `String(decoding:as:)` makes of its bytes, on both of its
// paths: a field that fits in a small string (up to 15 bytes) and a longer one. Checked on
// every length around that edge, in ASCII, in other scripts, and on bytes that are not UTF-8
// (a damaged field reads as replacement characters, never as a trap).

@Suite struct StringFieldTests {
    private func decoded(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { String.decode($0) } }
    private func expected(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    @Test func everyLengthDecodesAsStringDecodingDoes() {
        let sources = ["abcdefghijklmnopqrstuvwxyz0123456789ABCD", "é日本語テキストとαβγδ – ünïcödé 🦆🦆", "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}"]
        for source in sources {
            let utf8 = Array(source.utf8)
            for length in 0...min(utf8.count, 40) {
                let bytes = Array(utf8.prefix(length))
                let string = decoded(bytes)
                #expect(Array(string.utf8) == Array(expected(bytes).utf8), "\(length) bytes of \(source)")
                #expect(string == expected(bytes))
            }
        }
    }

    @Test func bytesThatAreNotUTF8AreRepairedOnBothPaths() {
        let damaged: [[UInt8]] = [[0xFF], [0x41, 0xC3], [0xE2, 0x82], [0xC0, 0x80, 0x41], [0xED, 0xA0, 0x80],
                                  Array(repeating: 0xFE, count: 15), Array(repeating: 0xFE, count: 16),
                                  Array("fourteen bytes".utf8) + [0xF0], Array("fifteen bytes!!".utf8) + [0xF0, 0x9F]]
        for bytes in damaged {
            let string = decoded(bytes)
            #expect(Array(string.utf8) == Array(expected(bytes).utf8), "\(bytes)")
            #expect(string.unicodeScalars.contains("\u{FFFD}"))
        }
    }

    @Test func stringsAroundTheSmallSizeRoundTripThroughAStore() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-strings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("store.strata")
        let names = ["", "a", "fourteen bytes", "fifteen bytes!!", "sixteen bytes!!!", "ünïcödé 15 b", "日本語テキスト", "🦆🦆🦆🦆"]
        do {
            let context = ModelContext(try ModelContainer(for: StringHolder.self, configurations: ModelConfiguration(url: url)))
            for (i, name) in names.enumerated() { context.insert(StringHolder(number: i, name: name, parts: [name, name + name])) }
            try context.save()
        }
        let context = ModelContext(try ModelContainer(for: StringHolder.self, configurations: ModelConfiguration(url: url)))
        let read = try context.fetch(FetchDescriptor<StringHolder>(sortBy: [SortDescriptor(\.number)]))
        #expect(read.map(\.name) == names)
        #expect(read.map(\.parts) == names.map { [$0, $0 + $0] })
    }
}

final class StringHolder: PersistentModel {
    @Attribute var number: Int = 0
    @Attribute var name: String = ""
    @Attribute var parts: [String] = []
    init() {}
    init(number: Int, name: String, parts: [String]) {
        self.number = number
        self.name = name
        self.parts = parts
    }
}
