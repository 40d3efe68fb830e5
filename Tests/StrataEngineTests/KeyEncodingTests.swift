// Order preservation of the key encoding: for values of one kind, comparing the values and
// comparing their encoded bytes (unsigned, lexicographic) must agree, and decoding gives the
// values back. Random values come from a fixed seed, plus every edge value by hand.
import Foundation
import Testing
@testable import StrataEngine
import StrataTestSupport

@Suite struct KeyEncodingTests {
    /// -1, 0 or 1.
    static func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }

    static func byteSign(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
    }

    /// For every pair, the order of the values (by `compare`) and of their keys must agree; and
    /// sorting by value and sorting by key must give the same sequence of keys.
    static func checkOrder<T>(_ values: [T], _ compare: (T, T) -> Int, encode: (T) -> [UInt8],
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let keys = values.map(encode)
        var mismatches = 0
        for i in values.indices {
            for j in values.indices where j > i {
                let expected = compare(values[i], values[j])
                let actual = byteSign(keys[i], keys[j])
                if expected != actual {
                    mismatches += 1
                    if mismatches <= 5 {
                        Issue.record("\(values[i]) vs \(values[j]): values compare \(expected), keys compare \(actual) (\(keys[i]) vs \(keys[j]))",
                                     sourceLocation: sourceLocation)
                    }
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) pairs out of order", sourceLocation: sourceLocation)
        let byValue = values.indices.sorted { compare(values[$0], values[$1]) < 0 }.map { keys[$0] }
        let byKey = keys.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(byValue == byKey, sourceLocation: sourceLocation)
    }

    static func random(_ seed: UInt64) -> SeededGenerator { SeededGenerator(seed: seed) }

    // MARK: Integers

    @Test func integersKeepTheirOrder() {
        var g = Self.random(1)
        var values: [Int] = [.min, .min + 1, -1 << 32, -256, -255, -2, -1, 0, 1, 2, 127, 128, 255, 256, 1 << 32, .max - 1, .max]
        for _ in 0..<150 {
            switch Int.random(in: 0..<3, using: &g) {
            case 0: values.append(Int.random(in: .min ... .max, using: &g))
            case 1: values.append(Int.random(in: -1000...1000, using: &g))
            default: values.append(Int(truncatingIfNeeded: UInt64.random(in: 0...UInt64.max, using: &g) >> UInt64.random(in: 0..<64, using: &g)) * (Bool.random(using: &g) ? 1 : -1))
            }
        }
        Self.checkOrder(values, Self.sign, encode: { KeyEncoding.encode($0) })
        for v in values {
            #expect(KeyComponent.decode(KeyEncoding.encode(v)) == [.integer(Int64(v))])
        }
    }

    /// Unsigned values above Int64.max sort after every signed value, among themselves by value.
    @Test func largeUnsignedSortAfterSignedIntegers() {
        var g = Self.random(2)
        // Every integer as (is above Int64.max, value) so that one comparison covers both kinds.
        enum Integer: Comparable, CustomStringConvertible {
            case signed(Int64), unsigned(UInt64)
            var description: String { switch self { case .signed(let v): "\(v)"; case .unsigned(let v): "\(v)u" } }
            var wide: (Bool, Int64, UInt64) {
                switch self {
                case .signed(let v): v >= 0 ? (true, 0, UInt64(v)) : (false, v, 0)
                case .unsigned(let v): (true, 0, v)
                }
            }
            static func < (a: Self, b: Self) -> Bool {
                let (x, y) = (a.wide, b.wide)
                if x.0 != y.0 { return !x.0 }
                return x.0 ? x.2 < y.2 : x.1 < y.1
            }
            static func == (a: Self, b: Self) -> Bool { !(a < b) && !(b < a) }
        }
        var values: [Integer] = [.signed(.min), .signed(-1), .signed(0), .signed(.max),
                                 .unsigned(0), .unsigned(UInt64(Int64.max)), .unsigned(UInt64(Int64.max) + 1), .unsigned(.max - 1), .unsigned(.max)]
        for _ in 0..<100 {
            values.append(Bool.random(using: &g) ? .signed(Int64.random(in: .min ... .max, using: &g))
                                                 : .unsigned(UInt64.random(in: 0 ... .max, using: &g)))
        }
        func encode(_ v: Integer) -> [UInt8] {
            switch v {
            case .signed(let s): KeyEncoding.encode(s)
            case .unsigned(let u): KeyEncoding.encode(u)
            }
        }
        Self.checkOrder(values, Self.sign, encode: encode)
        // An unsigned value that fits Int64 encodes (and decodes) as that integer.
        #expect(KeyEncoding.encode(UInt64(42)) == KeyEncoding.encode(42))
        #expect(KeyComponent.decode(KeyEncoding.encode(UInt64(Int64.max))) == [.integer(.max)])
        #expect(KeyComponent.decode(KeyEncoding.encode(UInt64(Int64.max) + 1)) == [.unsigned(UInt64(Int64.max) + 1)])
        #expect(KeyComponent.decode(KeyEncoding.encode(UInt64.max)) == [.unsigned(.max)])
    }

    /// Every integer width encodes a value the same way, so keys do not depend on the Swift type.
    @Test func integerWidthsEncodeAlike() {
        for v in [-128, -1, 0, 1, 127] {
            #expect(KeyEncoding.encode(Int8(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(Int16(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(Int32(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(Int64(v)) == KeyEncoding.encode(v))
        }
        for v in [0, 1, 200, 255] {
            #expect(KeyEncoding.encode(UInt8(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(UInt16(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(UInt32(v)) == KeyEncoding.encode(v))
            #expect(KeyEncoding.encode(UInt(v)) == KeyEncoding.encode(v))
        }
        #expect(KeyEncoding.encode(UInt.max) == KeyEncoding.encode(UInt64.max))
    }

    // MARK: Doubles and dates

    /// Doubles in numeric order, -0.0 equal to 0.0, and NaN (any NaN) after +infinity.
    static func compareDoubles(_ a: Double, _ b: Double) -> Int {
        switch (a.isNaN, b.isNaN) {
        case (true, true): return 0
        case (true, false): return 1
        case (false, true): return -1
        default: return sign(a, b)
        }
    }

    @Test func doublesKeepTheirOrder() {
        var g = Self.random(3)
        var values: [Double] = [-.infinity, -.greatestFiniteMagnitude, -1e300, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude,
                                -0.0, 0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 0.5, 1, 1.0000000000000002, 1e300,
                                .greatestFiniteMagnitude, .infinity, .nan, -.nan, .signalingNaN, Double(bitPattern: 0x7FF8_0000_DEAD_BEEF)]
        for _ in 0..<150 {
            switch Int.random(in: 0..<3, using: &g) {
            case 0:
                let d = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &g))
                values.append(d)
            case 1: values.append(Double.random(in: -1000...1000, using: &g))
            default: values.append(Double(Int.random(in: -5...5, using: &g)))   // many equal values
            }
        }
        Self.checkOrder(values, Self.compareDoubles, encode: { KeyEncoding.encode($0) })
        #expect(KeyEncoding.encode(-0.0) == KeyEncoding.encode(0.0))
        #expect(KeyEncoding.encode(Double.nan) == KeyEncoding.encode(-Double.nan))
        for v in values {
            let decoded = KeyComponent.decode(KeyEncoding.encode(v))
            guard case .double(let d)? = decoded?.first, decoded?.count == 1 else {
                Issue.record("\(v) does not decode to a double: \(String(describing: decoded))")
                continue
            }
            if v.isNaN { #expect(d.isNaN) } else { #expect(d == v && d.sign == (v == 0 ? .plus : v.sign)) }
        }
        #expect(KeyEncoding.encode(Float(1.5)) == KeyEncoding.encode(1.5))
    }

    @Test func datesKeepTheirOrder() {
        var g = Self.random(4)
        var values: [Date] = [.distantPast, Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: 0),
                              Date(timeIntervalSinceReferenceDate: -0.001), Date(timeIntervalSinceReferenceDate: 0),
                              Date(timeIntervalSinceReferenceDate: 0.001), Date(timeIntervalSince1970: 1_700_000_000), .distantFuture]
        for _ in 0..<150 {
            values.append(Date(timeIntervalSinceReferenceDate: Double.random(in: -4e9...4e9, using: &g)))
        }
        Self.checkOrder(values, Self.sign, encode: { KeyEncoding.encode($0) })
        for v in values {
            #expect(KeyComponent.decode(KeyEncoding.encode(v)) == [.date(v)])
        }
    }

    // MARK: Strings and bytes

    /// NFC-normalized scalars only: for such strings Swift's `<` is the order of the UTF-8 bytes.
    static let alphabet: [String] = ["\0", "\u{1}", "a", "b", "z", "A", " ", "~", "\u{7F}", "é", "ß", "Ω", "日", "本", "😀", "\u{FFFD}", "\u{10FFFF}"]

    static func randomString(_ g: inout SeededGenerator, maxLength: Int = 6) -> String {
        String((0..<Int.random(in: 0...maxLength, using: &g)).map { _ in Character(alphabet.randomElement(using: &g)!) })
    }

    @Test func stringsKeepTheirOrder() {
        var g = Self.random(5)
        var values = ["", "\0", "\0\0", "a", "a\0", "a\0\0", "a\0b", "a\u{1}", "ab", "abc", "b", "é", "日本", "😀", "\u{10FFFF}"]
        for _ in 0..<200 { values.append(Self.randomString(&g)) }
        Self.checkOrder(values, Self.sign, encode: { KeyEncoding.encode($0) })
        // A string is not confused with one it is a prefix of, whatever follows it.
        let ordered = ["a", "a\0", "a\0\0", "a\0a", "a\u{1}", "ab"]
        for (x, y) in zip(ordered, ordered.dropFirst()) {
            #expect(KeyEncoding.encode(x).lexicographicallyPrecedes(KeyEncoding.encode(y)), "\(x.debugDescription) < \(y.debugDescription)")
        }
        for v in values {
            #expect(KeyComponent.decode(KeyEncoding.encode(v)) == [.string(v)])
        }
        #expect(KeyEncoding.encode(Substring("xyz")) == KeyEncoding.encode("xyz"))
        #expect(KeyEncoding.encode("xyz", asPrefix: false) == KeyEncoding.encode("xyz"))
    }

    /// `encode(_, asPrefix: true)` is a byte prefix of exactly the strings that start with it.
    @Test func stringPrefixesMatchExactlyTheStringsStartingWithThem() {
        var g = Self.random(6)
        var strings = ["", "a", "a\0", "a\0b", "ab", "abc", "ab\0", "abé", "aa", "ac", "b", "\0", "é", "éa"]
        for _ in 0..<150 { strings.append(Self.randomString(&g, maxLength: 4)) }
        var prefixes = ["", "a", "ab", "a\0", "\0", "é", "日"]
        for _ in 0..<30 { prefixes.append(Self.randomString(&g, maxLength: 2)) }
        for p in prefixes {
            let encodedPrefix = KeyEncoding.encode(p, asPrefix: true)
            let range = KeyRange(prefix: encodedPrefix)
            for s in strings {
                let expected = Array(s.utf8).starts(with: Array(p.utf8))
                let key = KeyEncoding.encode(s)
                #expect(key.starts(with: encodedPrefix) == expected, "\(s.debugDescription) starts with \(p.debugDescription)")
                #expect(key.withUnsafeBytes { range.contains($0) } == expected, "\(s.debugDescription) in prefix range \(p.debugDescription)")
                // The same with an earlier component in front.
                let tupleKey = KeyEncoding.encode(7, s)
                let tuplePrefix = KeyEncoding.encode(7) + encodedPrefix
                #expect(tupleKey.starts(with: tuplePrefix) == expected)
                #expect(!KeyEncoding.encode(8, s).starts(with: tuplePrefix))
            }
        }
    }

    /// Data compares as unsigned bytes; a shorter value sorts before its extensions.
    @Test func dataKeepsItsOrder() {
        var g = Self.random(7)
        var values: [Data] = [Data(), Data([0]), Data([0, 0]), Data([0, 0xFF]), Data([0, 1]), Data([1]), Data([1, 0]), Data([1, 0, 0]),
                              Data([1, 0xFF]), Data([1, 1]), Data([0xFF]), Data([0xFF, 0]), Data([0xFF, 0xFF])]
        let interesting: [UInt8] = [0, 1, 0x7F, 0x80, 0xFE, 0xFF]
        for _ in 0..<150 {
            let n = Int.random(in: 0...5, using: &g)
            values.append(Data((0..<n).map { _ in Bool.random(using: &g) ? interesting.randomElement(using: &g)! : UInt8.random(in: 0...255, using: &g) }))
        }
        Self.checkOrder(values, { Self.byteSign(Array($0), Array($1)) }, encode: { KeyEncoding.encode($0) })
        for v in values {
            #expect(KeyComponent.decode(KeyEncoding.encode(v)) == [.bytes(Array(v))])
        }
    }

    @Test func uuidsKeepTheirByteOrder() {
        var g = Self.random(8)
        func bytes(_ u: UUID) -> [UInt8] { withUnsafeBytes(of: u.uuid) { Array($0) } }
        func uuid(_ b: [UInt8]) -> UUID { b.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) } }
        var values: [UUID] = [uuid([UInt8](repeating: 0, count: 16)), uuid([UInt8](repeating: 0xFF, count: 16)),
                              uuid([0] + [UInt8](repeating: 0xFF, count: 15)), uuid([UInt8](repeating: 0, count: 15) + [1])]
        for _ in 0..<100 { values.append(uuid((0..<16).map { _ in UInt8.random(in: 0...255, using: &g) })) }
        Self.checkOrder(values, { Self.byteSign(bytes($0), bytes($1)) }, encode: { KeyEncoding.encode($0) })
        for v in values {
            #expect(KeyComponent.decode(KeyEncoding.encode(v)) == [.uuid(v)])
        }
    }

    @Test func boolsAndOptionals() {
        Self.checkOrder([true, false, false, true], { Self.sign($0 ? 1 : 0, $1 ? 1 : 0) }, encode: { KeyEncoding.encode($0) })
        #expect(KeyComponent.decode(KeyEncoding.encode(true)) == [.bool(true)])
        #expect(KeyComponent.decode(KeyEncoding.encode(false)) == [.bool(false)])

        // nil sorts before every value, of any kind.
        let ints: [Int?] = [nil, .min, -1, 0, 1, .max, nil]
        Self.checkOrder(ints, { a, b in
            switch (a, b) {
            case (nil, nil): 0
            case (nil, _): -1
            case (_, nil): 1
            case let (x?, y?): Self.sign(x, y)
            }
        }, encode: { KeyEncoding.encode($0) })
        let nilKey = KeyEncoding.encode(Optional<String>.none)
        for other in [KeyEncoding.encode(false), KeyEncoding.encode(Int.min), KeyEncoding.encode(-Double.infinity),
                      KeyEncoding.encode(""), KeyEncoding.encode(Data()), KeyEncoding.encode(Date.distantPast)] {
            #expect(nilKey.lexicographicallyPrecedes(other))
        }
        #expect(KeyComponent.decode(nilKey) == [.null])
        #expect(KeyEncoding.encode(Optional(5)) == KeyEncoding.encode(5))
    }

    // MARK: Tuples

    /// Tuples compare element by element, even when an earlier string is a prefix of another.
    @Test func tuplesCompareElementByElement() {
        var g = Self.random(9)
        struct Triple: CustomStringConvertible {
            var s: String; var i: Int; var d: Double?
            var description: String { "(\(s.debugDescription), \(i), \(d.map { "\($0)" } ?? "nil"))" }
        }
        func compare(_ a: Triple, _ b: Triple) -> Int {
            let s = KeyEncodingTests.sign(a.s, b.s)
            if s != 0 { return s }
            let i = KeyEncodingTests.sign(a.i, b.i)
            if i != 0 { return i }
            switch (a.d, b.d) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case let (x?, y?): return KeyEncodingTests.compareDoubles(x, y)
            }
        }
        var values = [Triple(s: "a", i: 2, d: nil), Triple(s: "a\0", i: 1, d: 0), Triple(s: "ab", i: 0, d: -1),
                      Triple(s: "a", i: .max, d: .infinity), Triple(s: "a", i: .min, d: .nan), Triple(s: "", i: 0, d: nil)]
        for _ in 0..<200 {
            values.append(Triple(s: Self.randomString(&g, maxLength: 2), i: Int.random(in: -2...2, using: &g),
                                 d: Bool.random(using: &g) ? nil : Double(Int.random(in: -2...2, using: &g))))
        }
        Self.checkOrder(values, compare, encode: { KeyEncoding.encode($0.s, $0.i, $0.d) })
        for v in values {
            let decoded = KeyComponent.decode(KeyEncoding.encode(v.s, v.i, v.d))
            let last: KeyComponent = v.d.map { .double($0) } ?? .null
            if v.d?.isNaN == true {
                #expect(decoded?.count == 3 && decoded?.prefix(2) == [.string(v.s), .integer(Int64(v.i))])
            } else {
                #expect(decoded == [.string(v.s), .integer(Int64(v.i)), last])
            }
        }
        let mixed = KeyEncoding.encode(true, UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), Data([0, 1]), Date(timeIntervalSinceReferenceDate: 5), UInt64.max)
        #expect(KeyComponent.decode(mixed) == [.bool(true), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
                                               .bytes([0, 1]), .date(Date(timeIntervalSinceReferenceDate: 5)), .unsigned(.max)])
    }

    /// Bytes that are not a key decode to nil, never to a wrong value or a trap.
    @Test func malformedKeysDoNotDecode() {
        #expect(KeyComponent.decode([]) == [])
        #expect(KeyComponent.decode([0x99]) == nil)                           // unknown tag
        #expect(KeyComponent.decode([KeyTag.integer, 1, 2]) == nil)           // cut short
        #expect(KeyComponent.decode([KeyTag.string, 0x61]) == nil)            // no terminator
        #expect(KeyComponent.decode([KeyTag.uuid] + [UInt8](repeating: 0, count: 15)) == nil)
        var g = Self.random(10)
        for _ in 0..<500 {
            let bytes = (0..<Int.random(in: 0...20, using: &g)).map { _ in UInt8.random(in: 0...0x45, using: &g) }
            _ = KeyComponent.decode(bytes)   // must not trap
        }
    }
}
