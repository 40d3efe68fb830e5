import Foundation
import Testing
import Strata
import StrataTestSupport

/// A model with no indexes, so that every predicate is answered by a scan testing each record.
final class Reading: PersistentModel {
    @Attribute var serial: Int = 0
    @Attribute var value: Double = 0
    @Attribute var count: Int = 0
    @Attribute var taken: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var valid: Bool = false
    @Attribute var note: String = ""

    init() {}
}

/// Predicates made of comparisons of fields with constants joined by `&&` run as a list of
/// field checks in the scan's loop (`FieldCheck`, `RowFilter.checks`), not through Foundation:
/// `fetch` and `fetchCount` must answer as Foundation's evaluation of the same predicate on the
/// objects does, for every operator, either side's constant, the values at the edges of each
/// type (NaN, ±0, ±infinity, Int's bounds), and conjunctions of two to four checks, mixed with
/// tests that are not checks.
@Suite struct FieldCheckTests {
    static let values: [Double] = [.nan, -.infinity, -1e300, -2.5, -0.0, 0.0, 0.5, 1, 2.5, 1e300, .infinity, 7]
    static let counts: [Int] = [.min, -3, -1, 0, 1, 2, 3, 42, .max]
    static let dates: [Date] = [-86_400.5, -0.0, 0, 0.001, 59.999, 3_600, 700_000_000.25].map { Date(timeIntervalSinceReferenceDate: $0) }

    /// A predicate from a template number and its constants, with the test Foundation's
    /// evaluation is compared with; `text` names it in a failure.
    static func predicate(_ template: Int, _ r: inout SeededGenerator) -> (text: String, predicate: Predicate<Reading>) {
        let v = r.pick(values), w = r.pick(values), c = r.pick(counts), d = r.pick(dates), e = r.pick(dates)
        let b = r.chance(0.5)
        switch template {
        case 0: return ("value > \(v) && valid", #Predicate { $0.value > v && $0.valid })
        case 1: return ("value >= \(v) && count < \(c)", #Predicate { $0.value >= v && $0.count < c })
        case 2: return ("\(v) < value && count == \(c)", #Predicate { v < $0.value && $0.count == c })
        case 3: return ("value == \(v) && value != \(w)", #Predicate { $0.value == v && $0.value != w })
        case 4: return ("value != \(v) && valid == \(b)", #Predicate { $0.value != v && $0.valid == b })
        case 5: return ("taken >= \(d) && taken < \(e)", #Predicate { $0.taken >= d && $0.taken < e })
        case 6: return ("count != \(c) && taken <= \(d) && valid != \(b)", #Predicate { $0.count != c && $0.taken <= d && $0.valid != b })
        case 7: return ("value <= \(v) && count >= \(c) && \(d) > taken && valid", #Predicate { $0.value <= v && $0.count >= c && d > $0.taken && $0.valid })
        case 8: return ("\(c) >= count && \(v) != value", #Predicate { c >= $0.count && v != $0.value })
        case 9: return ("(value > \(v) && count > \(c)) && (taken != \(d) && valid == \(b))",
                        #Predicate { ($0.value > v && $0.count > c) && ($0.taken != d && $0.valid == b) })
        // Mixed with tests that are not field checks: the whole predicate takes the closures.
        case 10: return ("value < \(v) && note.contains(\"3\")", #Predicate { $0.value < v && $0.note.contains("3") })
        case 11: return ("!valid && count <= \(c)", #Predicate { !$0.valid && $0.count <= c })
        default: return ("value > \(v) || count < \(c)", #Predicate { $0.value > v || $0.count < c })
        }
    }

    @Test func conjunctionsOfFieldChecksAnswerAsFoundation() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: dir.store()))
        var r = SeededGenerator(seed: 0x5EED)
        let writer = ModelContext(container)
        for i in 0..<400 {
            let reading = Reading()
            reading.serial = i
            reading.value = r.pick(Self.values)
            reading.count = r.pick(Self.counts)
            reading.taken = r.pick(Self.dates)
            reading.valid = r.chance(0.75)
            // Records of each offset width the checks read at: 1 byte (short), 2 (a note of
            // hundreds of bytes) and 4 (tens of kilobytes).
            reading.note = i % 7 == 3 ? String(repeating: "x", count: 300) + "\(i)"
                : i % 50 == 11 ? String(repeating: "y", count: 70_000) + "\(i)" : "n\(i)"
            writer.insert(reading)
        }
        try writer.save()

        let context = ModelContext(container)
        let all = try context.fetch(FetchDescriptor<Reading>())
        #expect(all.count == 400)
        var matched = 0
        for round in 0..<300 {
            let (text, predicate) = Self.predicate(round % 13, &r)
            let expected = Set(try all.filter { try predicate.evaluate($0) }.map(\.serial))
            matched += expected.count
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "fetchCount \(text)")
            let fetched = try context.fetch(FetchDescriptor(predicate: predicate)).map(\.serial)
            #expect(Set(fetched) == expected && fetched.count == expected.count, "fetch \(text)")
        }
        // The rounds are not all empty (nor all full): the comparison means something.
        #expect(matched > 0 && matched < 300 * 400)
    }

    /// Each operator on each type, constant on either side, against Foundation's operators.
    @Test func everyOperatorOnEveryTypeAnswersAsFoundation() throws {
        let dir = TemporaryDirectory()
        let container = try ModelContainer(for: Reading.self, configurations: ModelConfiguration(url: dir.store()))
        let writer = ModelContext(container)
        for (i, v) in Self.values.enumerated() {
            let reading = Reading()
            reading.serial = i
            reading.value = v
            reading.count = Self.counts[i % Self.counts.count]
            reading.taken = Self.dates[i % Self.dates.count]
            reading.valid = i % 3 == 0
            writer.insert(reading)
        }
        try writer.save()
        let context = ModelContext(container)
        let all = try context.fetch(FetchDescriptor<Reading>())
        func check(_ text: String, _ predicate: Predicate<Reading>, _ expected: (Reading) -> Bool) throws {
            let want = Set(all.filter(expected).map(\.serial))
            #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == want.count, "\(text)")
            #expect(Set(try context.fetch(FetchDescriptor(predicate: predicate)).map(\.serial)) == want, "\(text)")
        }
        for (i, v) in Self.values.enumerated() {
            for (j, c) in Self.counts.enumerated() {
                do {
                    let d = Self.dates[(i + j) % Self.dates.count]
                    // Two checks each, so that each runs as a list; `valid || !valid` would not.
                    try check("value == \(v) && count <= \(c)", #Predicate { $0.value == v && $0.count <= c }) { $0.value == v && $0.count <= c }
                    try check("value != \(v) && count > \(c)", #Predicate { $0.value != v && $0.count > c }) { $0.value != v && $0.count > c }
                    try check("value < \(v) && taken >= \(d)", #Predicate { $0.value < v && $0.taken >= d }) { $0.value < v && $0.taken >= d }
                    try check("\(v) <= value && \(d) == taken", #Predicate { v <= $0.value && d == $0.taken }) { v <= $0.value && d == $0.taken }
                    try check("count == \(c) && taken != \(d)", #Predicate { $0.count == c && $0.taken != d }) { $0.count == c && $0.taken != d }
                    try check("\(c) < count && valid == false", #Predicate { c < $0.count && $0.valid == false }) { c < $0.count && !$0.valid }
                }
            }
        }
    }
}
