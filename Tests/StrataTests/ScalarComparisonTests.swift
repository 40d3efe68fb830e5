// The planner's fast path for "stored property op constant" (ScalarComparison.swift) gives
// exactly Foundation's answers: checked against Predicate.evaluate on the same values, for the
// values where a byte comparison would go wrong (canonically equivalent strings, -0.0, NaN,
// extreme integers and dates), with the constant on either side. None of these properties is
// indexed, so every predicate is evaluated on the records.
import Foundation
import Testing
import Strata

final class Sample: PersistentModel {
    @Attribute var key: Int = 0
    @Attribute var text: String = ""
    @Attribute var score: Double = 0
    @Attribute var count: Int = 0
    @Attribute var flag: Bool = false
    @Attribute var when: Date = .distantPast
    init() {}
}

@Suite struct ScalarComparisonTests {
    static let texts = ["Kelvin", "\u{212A}elvin", "Café", "Cafe\u{301}", "cafe", "", "K", "\u{212A}", "e\u{301}", "é", "a\u{0}b", "Zoë", "😀"]
    static let scores: [Double] = [0, -0.0, 1, -1, .nan, .infinity, -.infinity, 1e-300, 2.5, .greatestFiniteMagnitude]
    static let counts = [0, 1, -1, Int.max, Int.min, 42]
    static let dates = [Date.distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -0.0),
                        Date(timeIntervalSinceReferenceDate: 1.5)]

    /// One object per combination that matters, saved and read back from disk.
    func makeStore(_ dir: TemporaryDirectory) throws -> (ModelContext, [Sample]) {
        try write(dir)
        let fresh = ModelContext(try ModelContainer(for: Sample.self, configurations: ModelConfiguration(url: dir.store())))
        return (fresh, try fresh.fetch(FetchDescriptor<Sample>(sortBy: [SortDescriptor(\.key)])))
    }

    func write(_ dir: TemporaryDirectory) throws {
        let context = ModelContext(try ModelContainer(for: Sample.self, configurations: ModelConfiguration(url: dir.store())))
        let n = max(Self.texts.count, Self.scores.count, Self.counts.count, Self.dates.count) * 2
        for k in 0..<n {
            let s = Sample()
            s.key = k
            s.text = Self.texts[k % Self.texts.count]
            s.score = Self.scores[k % Self.scores.count]
            s.count = Self.counts[k % Self.counts.count]
            s.flag = k % 3 == 0
            s.when = Self.dates[k % Self.dates.count]
            context.insert(s)
        }
        try context.save()
    }

    func expectSame(_ context: ModelContext, _ all: [Sample], _ predicate: Predicate<Sample>, _ text: String,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stored = try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.key)])).map(\.key)
        let expected = try all.filter { try predicate.evaluate($0) }.map(\.key)
        #expect(stored == expected, "\(text)", sourceLocation: sourceLocation)
        #expect(try context.fetchCount(FetchDescriptor(predicate: predicate)) == expected.count, "\(text) (count)", sourceLocation: sourceLocation)
    }

    @Test func stringEqualityIsCanonicalEquivalence() throws {
        let dir = TemporaryDirectory()
        let (context, all) = try makeStore(dir)
        for t in Self.texts {
            try expectSame(context, all, #Predicate<Sample> { $0.text == t }, "text == \(t.debugDescription)")
            try expectSame(context, all, #Predicate<Sample> { $0.text != t }, "text != \(t.debugDescription)")
            try expectSame(context, all, #Predicate<Sample> { t == $0.text }, "\(t.debugDescription) == text")
        }
        // The Kelvin sign is canonically "K": both spellings match either constant.
        let kelvin = try context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { $0.text == "Kelvin" }))
        #expect(Set(kelvin.map(\.text)) == ["Kelvin", "\u{212A}elvin"])
    }

    @Test func numbersAndDatesCompareAsTheirTypes() throws {
        let dir = TemporaryDirectory()
        let (context, all) = try makeStore(dir)
        for v in Self.scores {
            try expectSame(context, all, #Predicate<Sample> { $0.score == v }, "score == \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.score != v }, "score != \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.score < v }, "score < \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.score >= v }, "score >= \(v)")
            try expectSame(context, all, #Predicate<Sample> { v < $0.score }, "\(v) < score")
            try expectSame(context, all, #Predicate<Sample> { v >= $0.score }, "\(v) >= score")
        }
        for v in Self.counts {
            try expectSame(context, all, #Predicate<Sample> { $0.count == v }, "count == \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.count <= v }, "count <= \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.count > v }, "count > \(v)")
            try expectSame(context, all, #Predicate<Sample> { v > $0.count }, "\(v) > count")
        }
        for v in Self.dates {
            try expectSame(context, all, #Predicate<Sample> { $0.when == v }, "when == \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.when < v }, "when < \(v)")
            try expectSame(context, all, #Predicate<Sample> { v <= $0.when }, "\(v) <= when")
        }
        for v in [true, false] {
            try expectSame(context, all, #Predicate<Sample> { $0.flag == v }, "flag == \(v)")
            try expectSame(context, all, #Predicate<Sample> { $0.flag != v }, "flag != \(v)")
        }
        try expectSame(context, all, #Predicate<Sample> { $0.score > 0 && $0.count != 0 || $0.text == "Café" }, "a combination")
    }
}
