import Foundation
import Strata

// The query planner against Foundation: random `#Predicate`s, sort orders and pages, each
// answered by a store (index lookups, ranges, compiled record filters, the slow path, pending
// changes, SQL on PostgreSQL) and by Foundation on a plain array of the same objects
// (`filter { try predicate.evaluate($0) }`, `sorted(using:)`, offset, limit). The answers
// must be identical: same objects, same order.
//
// The root's PlannerDifferentialTests runs it on the engine with thousands of cases; the
// conformance scenario `randomPredicatesSortsAndPagesMatchFoundation` on every kind of store.
// Replay a failure with the printed seed: `STRATA_SEED=<seed>` in the environment.

public enum DiffFlavor: String, Codable, CaseIterable, Sendable { case sweet, sour, salty, bitter, umami }

/// The differential test's model: a value of every kind that predicates compare.
public final class DiffItem: PersistentModel {
    @Attribute(.unique) public var uid: UUID
    /// Creation order (the row order of the reference arrays). Never changed.
    @Attribute public var serial: Int = 0
    @Attribute public var rank: Int = 0                 // indexed
    @Attribute public var level: Int = 0                // not indexed
    @Attribute public var score: Double = 0             // indexed
    @Attribute public var bonus: Double? = nil
    @Attribute public var name: String = ""             // indexed
    @Attribute public var title: String = ""            // not indexed
    @Attribute public var nickname: String? = nil       // indexed optional
    @Attribute public var flag: Bool = false
    @Attribute public var created: Date = Date(timeIntervalSinceReferenceDate: 0)   // indexed
    @Attribute public var tags: [String] = []
    @Attribute public var flavor: DiffFlavor = .sweet   // indexed Codable enum

    public init() {}

    public static var indexes: [[PartialKeyPath<DiffItem>]] {
        [[\.rank], [\.score], [\.name], [\.nickname], [\.created], [\.flavor], [\.level, \.flag]]
    }

    public func copy() -> DiffItem {
        let c = DiffItem()
        c.uid = uid; c.serial = serial; c.rank = rank; c.level = level; c.score = score; c.bonus = bonus
        c.name = name; c.title = title; c.nickname = nickname; c.flag = flag; c.created = created
        c.tags = tags; c.flavor = flavor
        return c
    }
}


public enum DiffPools {
    static let names = [
        "Café", "Cafe\u{301}", "café", "CAFÉ", "Cafeteria", "cafe", "naïve", "naive", "Zoë", "zoe",
        "Ærø", "Москва", "москва", "Мир", "Αθήνα", "αθηνα", "Ωμέγα", "東京", "item 2", "item 10",
        "Item 1", "", "\u{212A}elvin", "Kelvin", "straße", "STRASSE", "a\u{0}b", "😀 smile", "e\u{301}",
        "é", "ñandú", "Ñandu", "Zürich", "zurich",
    ]
    static let namesWithoutNUL = names.filter { !$0.unicodeScalars.contains("\u{0}") }
    static let titles = [
        "Le Café de Flore", "Crème brûlée", "Москва — столица России", "Ελληνικά γράμματα",
        "Résumé writing", "naive approach", "Über alles", "ZÜRICH HAUPTBAHNHOF", "plain ascii text",
        "Cafe\u{301} au lait", "Αθήνα και Θεσσαλονίκη", "東京タワー", "", "ÉCOLE normale",
    ]
    static let searches = [
        "cafe", "CAFÉ", "café", "creme", "brulee", "москва", "МОСКВА", "ελληνικα", "ΑΘΗΝΑ", "resume",
        "uber", "zurich", "ascii", "", "xyz", "é", "e", "ecole", "タワー", "a", "θεσσαλονικη",
    ]
    static let prefixes = ["C", "Ca", "ca", "Caf", "М", "Мо", "item", "item 1", "", "\u{212A}", "K", "é", "e\u{301}", "e", "😀", "Z", "Ñ", "a\u{0}", "Α"]
    static let tags = ["red", "green", "blue", "Ünïcode", "日本", "Red"]
    static let scores: [Double] = [-1.5, -0.0, 0.0, 0.5, 1, 2.25, 3, 1e300, -1e300, .infinity, -.infinity, 42, 7.125, -3]
    /// Serials of the objects a test makes are below this (some ids in predicates match none).
    static let maxSerial = 150
    /// The unique id of the object with a serial: random-looking, the same in every run.
    public static func uid(_ serial: Int) -> UUID {
        var r = SeededGenerator(seed: UInt64(serial) &* 0x2545_F491_4F6C_DD1D &+ 17)
        return r.uuid()
    }
    static let base = Date(timeIntervalSinceReferenceDate: 700_000_000.25)
    static let dates: [Date] = [0, 0.001, 0.5, 1.25, 3600, 86_400, -86_400, 1_000_000.75, -0.125, 59.999]
        .map { base.addingTimeInterval($0) }
    static func nearDate(_ r: inout SeededGenerator) -> Date {
        let d = r.pick(dates)
        return r.chance(0.7) ? d : d.addingTimeInterval(r.pick([-0.0001, 0.0001, -1, 1]))
    }
    static func nearScore(_ r: inout SeededGenerator) -> Double {
        r.chance(0.8) ? r.pick(scores) : Double(r.int(-40...40)) / 8
    }
}

extension String {
    /// The string in quotes for failure messages, with the scalars that look like others
    /// escaped (combining marks, controls, compatibility characters such as the Kelvin sign).
    public var diffShown: String {
        let body = unicodeScalars.map { scalar -> String in
            let category = scalar.properties.generalCategory
            let plain = scalar.value >= 0x20 && scalar != "\\" && scalar != "\""
                && ![.nonspacingMark, .spacingMark, .enclosingMark, .control, .format].contains(category)
                && String(scalar).precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual([scalar])
            return plain ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }.joined()
        return "\"" + body + "\""
    }
}

extension Array where Element == String {
    public var diffShown: String { "[" + map(\.diffShown).joined(separator: ", ") + "]" }
}

extension Array where Element == String? {
    public var diffShown: String { "[" + map { $0?.diffShown ?? "nil" }.joined(separator: ", ") + "]" }
}

struct DiffCase {
    let text: String
    let predicate: Predicate<DiffItem>
}

/// Predicate templates: each draws random captured values and returns a `#Predicate`.
enum DiffTemplates {
    typealias Template = @Sendable (inout SeededGenerator) -> DiffCase

    static let all: [Template] = intTemplates + doubleTemplates + optionalTemplates + stringTemplates
        + boolDateUUIDTemplates + collectionTemplates + mixedTemplates

    static let intTemplates: [Template] = [
        { r in let v = r.int(-6...21); return DiffCase(text: "rank == \(v)", predicate: #Predicate<DiffItem> { $0.rank == v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "rank != \(v)", predicate: #Predicate<DiffItem> { $0.rank != v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "rank < \(v)", predicate: #Predicate<DiffItem> { $0.rank < v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "rank <= \(v)", predicate: #Predicate<DiffItem> { $0.rank <= v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "rank > \(v)", predicate: #Predicate<DiffItem> { $0.rank > v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "rank >= \(v)", predicate: #Predicate<DiffItem> { $0.rank >= v }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "\(v) < rank", predicate: #Predicate<DiffItem> { v < $0.rank }) },
        { r in let v = r.int(-6...21); return DiffCase(text: "\(v) >= rank", predicate: #Predicate<DiffItem> { v >= $0.rank }) },
        { r in
            let a = r.int(-6...21), b = r.int(-6...21)
            return DiffCase(text: "rank >= \(a) && rank <= \(b)", predicate: #Predicate<DiffItem> { $0.rank >= a && $0.rank <= b })
        },
        { r in
            let a = r.int(-6...21), b = r.int(-6...21)
            return DiffCase(text: "rank > \(a) && rank < \(b)", predicate: #Predicate<DiffItem> { $0.rank > a && $0.rank < b })
        },
        { r in
            let list = r.some(Array(-6...21), max: 5)
            return DiffCase(text: "\(list).contains(rank)", predicate: #Predicate<DiffItem> { list.contains($0.rank) })
        },
        { r in
            let list = r.some(Array(-2...11), max: 4)
            return DiffCase(text: "\(list).contains(level)", predicate: #Predicate<DiffItem> { list.contains($0.level) })
        },
        { r in let v = r.int(0...9); return DiffCase(text: "level == \(v)", predicate: #Predicate<DiffItem> { $0.level == v }) },
        { r in let v = r.int(0...9); return DiffCase(text: "level > \(v)", predicate: #Predicate<DiffItem> { $0.level > v }) },
        { r in
            let k = r.int(-3...3), v = r.int(-6...25)
            return DiffCase(text: "rank + \(k) > \(v)", predicate: #Predicate<DiffItem> { $0.rank + k > v })
        },
        { r in
            let v = r.int(-12...42)
            return DiffCase(text: "rank * 2 == \(v)", predicate: #Predicate<DiffItem> { $0.rank * 2 == v })
        },
        { r in
            let v = r.int(-20...20)
            return DiffCase(text: "rank - level <= \(v)", predicate: #Predicate<DiffItem> { $0.rank - $0.level <= v })
        },
        { r in
            let v = r.int(-21...6)
            return DiffCase(text: "-rank > \(v)", predicate: #Predicate<DiffItem> { -$0.rank > v })
        },
        { r in
            let m = r.int(2...4), v = r.int(-1...3)
            return DiffCase(text: "rank % \(m) == \(v)", predicate: #Predicate<DiffItem> { $0.rank % m == v })
        },
        { r in
            let v = r.int(-3...10)
            return DiffCase(text: "rank / 2 == \(v)", predicate: #Predicate<DiffItem> { $0.rank / 2 == v })
        },
    ]

    static let doubleTemplates: [Template] = [
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score == \(v)", predicate: #Predicate<DiffItem> { $0.score == v }) },
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score != \(v)", predicate: #Predicate<DiffItem> { $0.score != v }) },
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score < \(v)", predicate: #Predicate<DiffItem> { $0.score < v }) },
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score <= \(v)", predicate: #Predicate<DiffItem> { $0.score <= v }) },
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score > \(v)", predicate: #Predicate<DiffItem> { $0.score > v }) },
        { r in let v = DiffPools.nearScore(&r); return DiffCase(text: "score >= \(v)", predicate: #Predicate<DiffItem> { $0.score >= v }) },
        { r in
            let a = DiffPools.nearScore(&r), b = DiffPools.nearScore(&r)
            return DiffCase(text: "score > \(a) && score <= \(b)", predicate: #Predicate<DiffItem> { $0.score > a && $0.score <= b })
        },
        { r in
            let list = r.some(DiffPools.scores, max: 4)
            return DiffCase(text: "\(list).contains(score)", predicate: #Predicate<DiffItem> { list.contains($0.score) })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "score * 2 > \(v)", predicate: #Predicate<DiffItem> { $0.score * 2 > v })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "score / 4 < \(v)", predicate: #Predicate<DiffItem> { $0.score / 4 < v })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "score - 1.5 >= \(v)", predicate: #Predicate<DiffItem> { $0.score - 1.5 >= v })
        },
    ]

    static let optionalTemplates: [Template] = [
        { _ in DiffCase(text: "bonus == nil", predicate: #Predicate<DiffItem> { $0.bonus == nil }) },
        { _ in DiffCase(text: "bonus != nil", predicate: #Predicate<DiffItem> { $0.bonus != nil }) },
        { r in
            let v: Double? = DiffPools.nearScore(&r)
            return DiffCase(text: "bonus == \(v!)", predicate: #Predicate<DiffItem> { $0.bonus == v })
        },
        { r in
            let d = DiffPools.nearScore(&r), v = DiffPools.nearScore(&r)
            return DiffCase(text: "(bonus ?? \(d)) > \(v)", predicate: #Predicate<DiffItem> { ($0.bonus ?? d) > v })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "bonus.flatMap { $0 < \(v) } ?? false", predicate: #Predicate<DiffItem> { $0.bonus.flatMap { $0 < v } ?? false })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "bonus != nil && bonus! >= \(v)", predicate: #Predicate<DiffItem> { $0.bonus != nil && $0.bonus! >= v })
        },
        { r in
            let v = DiffPools.nearScore(&r)
            return DiffCase(text: "if let b = bonus { b > score + \(v) } else { false }", predicate: #Predicate<DiffItem> { item in
                if let b = item.bonus { b > item.score + v } else { false }
            })
        },
        { _ in DiffCase(text: "nickname == nil", predicate: #Predicate<DiffItem> { $0.nickname == nil }) },
        { _ in DiffCase(text: "nickname != nil", predicate: #Predicate<DiffItem> { $0.nickname != nil }) },
        { r in
            let v: String? = r.pick(DiffPools.names)
            return DiffCase(text: "nickname == \(v!.diffShown)", predicate: #Predicate<DiffItem> { $0.nickname == v })
        },
        { r in
            let list: [String?] = r.some(DiffPools.names.map { Optional($0) } + [nil], max: 4)
            return DiffCase(text: "\(list.diffShown).contains(nickname)", predicate: #Predicate<DiffItem> { list.contains($0.nickname) })
        },
        { r in
            let p = r.pick(DiffPools.prefixes)
            return DiffCase(text: "nickname.flatMap { $0.starts(with: \(p.diffShown)) } == true",
                            predicate: #Predicate<DiffItem> { $0.nickname.flatMap { $0.starts(with: p) } == true })
        },
        { r in
            let s = r.pick(DiffPools.searches)
            return DiffCase(text: "(nickname ?? \"\").localizedStandardContains(\(s.diffShown))",
                            predicate: #Predicate<DiffItem> { ($0.nickname ?? "").localizedStandardContains(s) })
        },
        { r in
            let s = r.pick(DiffPools.names)
            return DiffCase(text: "(nickname ?? name) == \(s.diffShown)", predicate: #Predicate<DiffItem> { ($0.nickname ?? $0.name) == s })
        },
    ]

    static let stringTemplates: [Template] = [
        { r in let s = r.pick(DiffPools.names); return DiffCase(text: "name == \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.name == s }) },
        { r in let s = r.pick(DiffPools.names); return DiffCase(text: "name != \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.name != s }) },
        { r in let s = r.pick(DiffPools.names); return DiffCase(text: "name < \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.name < s }) },
        { r in let s = r.pick(DiffPools.names); return DiffCase(text: "name >= \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.name >= s }) },
        { r in
            let a = r.pick(DiffPools.names), b = r.pick(DiffPools.names)
            return DiffCase(text: "name > \(a.diffShown) && name <= \(b.diffShown)", predicate: #Predicate<DiffItem> { $0.name > a && $0.name <= b })
        },
        { r in
            let p = r.pick(DiffPools.prefixes)
            return DiffCase(text: "name.starts(with: \(p.diffShown))", predicate: #Predicate<DiffItem> { $0.name.starts(with: p) })
        },
        { r in
            let s = r.pick(DiffPools.searches + DiffPools.prefixes)
            return DiffCase(text: "name.contains(\(s.diffShown))", predicate: #Predicate<DiffItem> { $0.name.contains(s) })
        },
        { r in
            let s = r.pick(DiffPools.searches)
            return DiffCase(text: "name.localizedStandardContains(\(s.diffShown))", predicate: #Predicate<DiffItem> { $0.name.localizedStandardContains(s) })
        },
        { r in
            let list = r.some(DiffPools.names, max: 5)
            return DiffCase(text: "\(list.diffShown).contains(name)", predicate: #Predicate<DiffItem> { list.contains($0.name) })
        },
        { r in
            let n = r.int(0...8)
            return DiffCase(text: "name.count > \(n)", predicate: #Predicate<DiffItem> { $0.name.count > n })
        },
        { _ in DiffCase(text: "name.isEmpty", predicate: #Predicate<DiffItem> { $0.name.isEmpty }) },
        { r in let s = r.pick(DiffPools.titles); return DiffCase(text: "title == \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.title == s }) },
        { r in
            let s = r.pick(DiffPools.searches)
            return DiffCase(text: "title.localizedStandardContains(\(s.diffShown))", predicate: #Predicate<DiffItem> { $0.title.localizedStandardContains(s) })
        },
        { r in
            let s = r.pick(DiffPools.searches)
            return DiffCase(text: "title.contains(\(s.diffShown))", predicate: #Predicate<DiffItem> { $0.title.contains(s) })
        },
        { r in
            let p = r.pick(DiffPools.prefixes)
            return DiffCase(text: "title.starts(with: \(p.diffShown))", predicate: #Predicate<DiffItem> { $0.title.starts(with: p) })
        },
        { r in
            let s = r.pick(DiffPools.titles)
            return DiffCase(text: "title < \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.title < s })
        },
    ]

    static let boolDateUUIDTemplates: [Template] = [
        { _ in DiffCase(text: "flag", predicate: #Predicate<DiffItem> { $0.flag }) },
        { _ in DiffCase(text: "!flag", predicate: #Predicate<DiffItem> { !$0.flag }) },
        { r in let b = r.chance(0.5); return DiffCase(text: "flag == \(b)", predicate: #Predicate<DiffItem> { $0.flag == b }) },
        { r in let d = DiffPools.nearDate(&r); return DiffCase(text: "created == \(d.timeIntervalSinceReferenceDate)", predicate: #Predicate<DiffItem> { $0.created == d }) },
        { r in let d = DiffPools.nearDate(&r); return DiffCase(text: "created != \(d.timeIntervalSinceReferenceDate)", predicate: #Predicate<DiffItem> { $0.created != d }) },
        { r in let d = DiffPools.nearDate(&r); return DiffCase(text: "created < \(d.timeIntervalSinceReferenceDate)", predicate: #Predicate<DiffItem> { $0.created < d }) },
        { r in let d = DiffPools.nearDate(&r); return DiffCase(text: "created >= \(d.timeIntervalSinceReferenceDate)", predicate: #Predicate<DiffItem> { $0.created >= d }) },
        { r in let d = DiffPools.nearDate(&r); return DiffCase(text: "\(d.timeIntervalSinceReferenceDate) > created", predicate: #Predicate<DiffItem> { d > $0.created }) },
        { r in
            let a = DiffPools.nearDate(&r), b = DiffPools.nearDate(&r)
            return DiffCase(text: "created > \(a.timeIntervalSinceReferenceDate) && created <= \(b.timeIntervalSinceReferenceDate)",
                            predicate: #Predicate<DiffItem> { $0.created > a && $0.created <= b })
        },
        { r in
            let list = (0..<r.int(0...3)).map { _ in DiffPools.nearDate(&r) }
            return DiffCase(text: "\(list.map(\.timeIntervalSinceReferenceDate)).contains(created)", predicate: #Predicate<DiffItem> { list.contains($0.created) })
        },
        { r in
            let f = r.pick(DiffFlavor.allCases)
            return DiffCase(text: "flavor == .\(f)", predicate: #Predicate<DiffItem> { $0.flavor == f })
        },
        { r in
            let f = r.pick(DiffFlavor.allCases)
            return DiffCase(text: "flavor != .\(f)", predicate: #Predicate<DiffItem> { $0.flavor != f })
        },
        { r in
            let list = r.some(DiffFlavor.allCases, max: 3)
            return DiffCase(text: "\(list).contains(flavor)", predicate: #Predicate<DiffItem> { list.contains($0.flavor) })
        },
        { r in
            let s = r.pick(DiffFlavor.allCases.map(\.rawValue) + ["SWEET", ""])
            return DiffCase(text: "flavor.rawValue == \(s)", predicate: #Predicate<DiffItem> { $0.flavor.rawValue == s })
        },
    ]

    static let collectionTemplates: [Template] = [
        { r in let t = r.pick(DiffPools.tags); return DiffCase(text: "tags.contains(\(t))", predicate: #Predicate<DiffItem> { $0.tags.contains(t) }) },
        { _ in DiffCase(text: "tags.isEmpty", predicate: #Predicate<DiffItem> { $0.tags.isEmpty }) },
        { r in let n = r.int(0...3); return DiffCase(text: "tags.count >= \(n)", predicate: #Predicate<DiffItem> { $0.tags.count >= n }) },
        { r in
            let p = r.pick(["r", "R", "g", "Ü", "日", "x", ""])
            return DiffCase(text: "tags.contains { $0.starts(with: \(p)) }", predicate: #Predicate<DiffItem> { $0.tags.contains { $0.starts(with: p) } })
        },
        { r in
            let t = r.pick(DiffPools.tags)
            return DiffCase(text: "tags.allSatisfy { $0 != \(t) }", predicate: #Predicate<DiffItem> { $0.tags.allSatisfy { $0 != t } })
        },
        { r in
            let t = r.pick(DiffPools.tags)
            return DiffCase(text: "tags.filter { $0 == \(t) }.count > 0 || rank > 18", predicate: #Predicate<DiffItem> { $0.tags.filter { $0 == t }.count > 0 || $0.rank > 18 })
        },
    ]

    static let mixedTemplates: [Template] = [
        { r in
            let a = r.int(-6...21), s = r.pick(DiffPools.names)
            return DiffCase(text: "rank == \(a) || name == \(s.diffShown)", predicate: #Predicate<DiffItem> { $0.rank == a || $0.name == s })
        },
        { r in
            let a = r.int(-6...21), p = r.pick(DiffPools.prefixes)
            return DiffCase(text: "rank >= \(a) && name.starts(with: \(p.diffShown))", predicate: #Predicate<DiffItem> { $0.rank >= a && $0.name.starts(with: p) })
        },
        { r in
            let list = r.some(DiffPools.names, max: 4), d = DiffPools.nearDate(&r)
            return DiffCase(text: "\(list.diffShown).contains(name) && created <= \(d.timeIntervalSinceReferenceDate)",
                            predicate: #Predicate<DiffItem> { list.contains($0.name) && $0.created <= d })
        },
        { r in
            let v = r.int(-6...21)
            return DiffCase(text: "!(rank < \(v)) && !flag", predicate: #Predicate<DiffItem> { !($0.rank < v) && !$0.flag })
        },
        { r in
            let v = r.int(-6...21)
            return DiffCase(text: "(flag ? rank : level) > \(v)", predicate: #Predicate<DiffItem> { ($0.flag ? $0.rank : $0.level) > v })
        },
        { r in
            let f = r.pick(DiffFlavor.allCases), v = DiffPools.nearScore(&r)
            return DiffCase(text: "flavor == .\(f) && (score > \(v) || bonus == nil)", predicate: #Predicate<DiffItem> { $0.flavor == f && ($0.score > v || $0.bonus == nil) })
        },
        { r in
            let s = r.pick(DiffPools.searches), d = DiffPools.nearDate(&r)
            return DiffCase(text: "title.localizedStandardContains(\(s.diffShown)) || created > \(d.timeIntervalSinceReferenceDate)",
                            predicate: #Predicate<DiffItem> { $0.title.localizedStandardContains(s) || $0.created > d })
        },
        { r in
            let a = r.int(-6...21), b = r.int(-6...21), lv = r.int(0...9)
            return DiffCase(text: "rank >= \(a) && rank <= \(b) && level != \(lv)", predicate: #Predicate<DiffItem> { $0.rank >= a && $0.rank <= b && $0.level != lv })
        },
        { r in
            let s = r.pick(DiffPools.names), v = DiffPools.nearScore(&r)
            return DiffCase(text: "name == \(s.diffShown) && score >= \(v)", predicate: #Predicate<DiffItem> { $0.name == s && $0.score >= v })
        },
        { r in
            let list = r.some(Array(-6...21), max: 6), f = r.pick(DiffFlavor.allCases)
            return DiffCase(text: "\(list).contains(rank) && flavor != .\(f)", predicate: #Predicate<DiffItem> { list.contains($0.rank) && $0.flavor != f })
        },
        { r in
            let v = DiffPools.nearScore(&r), d = DiffPools.nearDate(&r)
            return DiffCase(text: "score > \(v) && created < \(d.timeIntervalSinceReferenceDate)", predicate: #Predicate<DiffItem> { $0.score > v && $0.created < d })
        },
        { r in
            let serial = r.int(0...DiffPools.maxSerial)
            let u = DiffPools.uid(serial)
            return DiffCase(text: "uid == uid(\(serial))", predicate: #Predicate<DiffItem> { $0.uid == u })
        },
        { r in
            let serial = r.int(0...DiffPools.maxSerial)
            let u = DiffPools.uid(serial)
            return DiffCase(text: "uid != uid(\(serial))", predicate: #Predicate<DiffItem> { $0.uid != u })
        },
        { r in
            let serials = (0..<r.int(0...6)).map { _ in r.int(0...DiffPools.maxSerial) }
            let list = serials.map(DiffPools.uid)
            return DiffCase(text: "\(serials.map { "uid(\($0))" }).contains(uid)", predicate: #Predicate<DiffItem> { list.contains($0.uid) })
        },
        { r in
            let serials = (0..<r.int(1...4)).map { _ in r.int(0...DiffPools.maxSerial) }
            let list = serials.map(DiffPools.uid)
            let v = r.int(-6...21)
            return DiffCase(text: "\(serials.map { "uid(\($0))" }).contains(uid) && rank > \(v)", predicate: #Predicate<DiffItem> { list.contains($0.uid) && $0.rank > v })
        },
        { r in
            let u = r.uuid()
            return DiffCase(text: "uid == <random \(u)>", predicate: #Predicate<DiffItem> { $0.uid == u })
        },
        { _ in DiffCase(text: "true", predicate: #Predicate<DiffItem> { _ in true }) },
        { _ in DiffCase(text: "false", predicate: #Predicate<DiffItem> { _ in false }) },
    ]
}

/// Random boolean trees of conditions (`&&`, `||`, `!`), built from the same expression nodes
/// that `#Predicate` makes, so that the planner sees index conditions nested in conjunctions.
public enum DiffAtoms {
    typealias E = PredicateExpressions
    typealias V = PredicateExpressions.Variable<DiffItem>
    public typealias Expr = any StandardPredicateExpression<Bool>
    typealias Build = (V) -> Expr

    static let symbols = ["==", "!=", "<", "<=", ">", ">="]

    /// `path op x`, or `x op path` when `flip`.
    static func compare<T: Comparable & Codable & Sendable>(_ name: String, _ path: KeyPath<DiffItem, T> & Sendable, _ x: T, _ r: inout SeededGenerator, shown: String) -> (String, Build) {
        let op = r.int(0...5)
        let flip = r.chance(0.2)
        let text = flip ? "\(shown) \(symbols[op]) \(name)" : "\(name) \(symbols[op]) \(shown)"
        return (text, { v in
            let k = E.build_KeyPath(root: v, keyPath: path)
            let c = E.build_Arg(x)
            switch (op, flip) {
            case (0, false): return E.build_Equal(lhs: k, rhs: c)
            case (0, true): return E.build_Equal(lhs: c, rhs: k)
            case (1, false): return E.build_NotEqual(lhs: k, rhs: c)
            case (1, true): return E.build_NotEqual(lhs: c, rhs: k)
            case (2, false): return E.build_Comparison(lhs: k, rhs: c, op: .lessThan)
            case (2, true): return E.build_Comparison(lhs: c, rhs: k, op: .lessThan)
            case (3, false): return E.build_Comparison(lhs: k, rhs: c, op: .lessThanOrEqual)
            case (3, true): return E.build_Comparison(lhs: c, rhs: k, op: .lessThanOrEqual)
            case (4, false): return E.build_Comparison(lhs: k, rhs: c, op: .greaterThan)
            case (4, true): return E.build_Comparison(lhs: c, rhs: k, op: .greaterThan)
            case (5, false): return E.build_Comparison(lhs: k, rhs: c, op: .greaterThanOrEqual)
            default: return E.build_Comparison(lhs: c, rhs: k, op: .greaterThanOrEqual)
            }
        })
    }

    /// `[x, y].contains(path)`
    static func oneOf<T: Equatable & Codable & Sendable>(_ name: String, _ path: KeyPath<DiffItem, T> & Sendable, _ list: [T], shown: String) -> (String, Build) {
        ("\(shown).contains(\(name))", { v in E.build_contains(E.build_Arg(list), E.build_KeyPath(root: v, keyPath: path)) })
    }

    static func equal<T: Equatable & Codable & Sendable>(_ name: String, _ path: KeyPath<DiffItem, T> & Sendable, _ x: T, shown: String) -> (String, Build) {
        ("\(name) == \(shown)", { v in E.build_Equal(lhs: E.build_KeyPath(root: v, keyPath: path), rhs: E.build_Arg(x)) })
    }

    static func atom(_ r: inout SeededGenerator) -> (String, Build) {
        switch r.int(0...22) {
        case 22:
            if r.chance(0.5) {
                let serial = r.int(0...DiffPools.maxSerial)
                return equal("uid", \.uid, DiffPools.uid(serial), shown: "uid(\(serial))")
            }
            let serials = (0..<r.int(0...4)).map { _ in r.int(0...DiffPools.maxSerial) }
            return oneOf("uid", \.uid, serials.map(DiffPools.uid), shown: "\(serials.map { "uid(\($0))" })")
        case 0, 1: let x = r.int(-6...21); return compare("rank", \.rank, x, &r, shown: "\(x)")
        case 2: let l = r.some(Array(-6...21), max: 5); return oneOf("rank", \.rank, l, shown: "\(l)")
        case 3: let x = r.int(0...9); return compare("level", \.level, x, &r, shown: "\(x)")
        case 4: let l = r.some(Array(0...9), max: 4); return oneOf("level", \.level, l, shown: "\(l)")
        case 5: let x = DiffPools.nearScore(&r); return compare("score", \.score, x, &r, shown: "\(x)")
        case 6: let l = r.some(DiffPools.scores, max: 4); return oneOf("score", \.score, l, shown: "\(l)")
        case 7:
            if r.chance(0.5) {
                let isNil = r.chance(0.5)
                return (isNil ? "bonus == nil" : "bonus != nil", { v in
                    let k = E.build_KeyPath(root: v, keyPath: \.bonus)
                    return isNil ? E.build_Equal(lhs: k, rhs: E.build_NilLiteral()) : E.build_NotEqual(lhs: k, rhs: E.build_NilLiteral())
                })
            }
            let d = DiffPools.nearScore(&r), x = DiffPools.nearScore(&r)
            return ("(bonus ?? \(d)) >= \(x)", { v in
                E.build_Comparison(lhs: E.build_NilCoalesce(lhs: E.build_KeyPath(root: v, keyPath: \.bonus), rhs: E.build_Arg(d)), rhs: E.build_Arg(x), op: .greaterThanOrEqual)
            })
        case 8, 9: let s = r.pick(DiffPools.names); return compare("name", \.name, s, &r, shown: s.diffShown)
        case 10: let l = r.some(DiffPools.names, max: 4); return oneOf("name", \.name, l, shown: l.diffShown)
        case 11:
            let p = r.pick(DiffPools.prefixes)
            return ("name.starts(with: \(p.diffShown))", { v in E.build_starts(E.build_KeyPath(root: v, keyPath: \.name), with: E.build_Arg(p)) })
        case 12:
            let s = r.pick(DiffPools.searches)
            let field = r.chance(0.5)
            return ("\(field ? "name" : "title").localizedStandardContains(\(s.diffShown))", { v in
                E.build_localizedStandardContains(E.build_KeyPath(root: v, keyPath: field ? \DiffItem.name : \DiffItem.title), E.build_Arg(s))
            })
        case 13:
            let s = r.pick(DiffPools.searches)
            return ("title.contains(\(s.diffShown))", { v in E.build_contains(E.build_KeyPath(root: v, keyPath: \.title), E.build_Arg(s)) })
        case 14:
            let s: String? = r.chance(0.25) ? nil : r.pick(DiffPools.names)
            return equal("nickname", \.nickname, s, shown: s?.diffShown ?? "nil")
        case 15:
            let l: [String?] = r.some(DiffPools.names.map { Optional($0) } + [nil], max: 4)
            return oneOf("nickname", \.nickname, l, shown: l.diffShown)
        case 16: return ("flag", { v in E.build_KeyPath(root: v, keyPath: \.flag) })
        case 17, 18: let d = DiffPools.nearDate(&r); return compare("created", \.created, d, &r, shown: "\(d.timeIntervalSinceReferenceDate)")
        case 19:
            let l = (0..<r.int(0...3)).map { _ in DiffPools.nearDate(&r) }
            return oneOf("created", \.created, l, shown: "\(l.map(\.timeIntervalSinceReferenceDate))")
        case 20:
            if r.chance(0.5) { let f = r.pick(DiffFlavor.allCases); return equal("flavor", \.flavor, f, shown: ".\(f)") }
            let l = r.some(DiffFlavor.allCases, max: 3)
            return oneOf("flavor", \.flavor, l, shown: "\(l)")
        default:
            let t = r.pick(DiffPools.tags)
            return ("tags.contains(\(t))", { v in E.build_contains(E.build_KeyPath(root: v, keyPath: \.tags), E.build_Arg(t)) })
        }
    }

    static func tree(_ r: inout SeededGenerator, depth: Int) -> (String, Build) {
        let roll = r.int(0...9)
        if depth >= 3 || (depth > 0 && roll < 4) { return atom(&r) }
        if roll < 6 || depth == 0 && roll < 7 {
            let (a, fa) = tree(&r, depth: depth + 1), (b, fb) = tree(&r, depth: depth + 1)
            return ("(\(a) && \(b))", { v in and(fa(v), fb(v)) })
        }
        if roll < 9 {
            let (a, fa) = tree(&r, depth: depth + 1), (b, fb) = tree(&r, depth: depth + 1)
            return ("(\(a) || \(b))", { v in or(fa(v), fb(v)) })
        }
        let (a, fa) = tree(&r, depth: depth + 1)
        return ("!\(a)", { v in not(fa(v)) })
    }

    public static func and(_ a: Expr, _ b: Expr) -> Expr {
        func l<A: StandardPredicateExpression<Bool>>(_ a: A) -> Expr {
            func r<B: StandardPredicateExpression<Bool>>(_ b: B) -> Expr { E.build_Conjunction(lhs: a, rhs: b) }
            return r(b)
        }
        return l(a)
    }

    public static func or(_ a: Expr, _ b: Expr) -> Expr {
        func l<A: StandardPredicateExpression<Bool>>(_ a: A) -> Expr {
            func r<B: StandardPredicateExpression<Bool>>(_ b: B) -> Expr { E.build_Disjunction(lhs: a, rhs: b) }
            return r(b)
        }
        return l(a)
    }

    public static func not(_ a: Expr) -> Expr {
        func l<A: StandardPredicateExpression<Bool>>(_ a: A) -> Expr { E.build_Negation(a) }
        return l(a)
    }
}

/// The differential harness: one store, many cases.
public final class DifferentialHarness {
    public var rng: SeededGenerator
    /// The seed of this run (`STRATA_SEED` in the environment, or random): failures name it.
    public let seed: UInt64
    public private(set) var failures: [String] = []
    public private(set) var cases = 0
    /// False for a store that cannot keep U+0000 in a string (PostgreSQL): stored values leave
    /// it out, and predicates' constants keep it.
    let storesNUL: Bool
    /// False for a store that promises no order beyond what a fetch sorts by (SwiftData promises
    /// none; the engine keeps row order, for ties and for fetches without a sort): every fetch
    /// then sorts by `serial` last.
    let keepsRowOrder: Bool

    public init(storesNUL: Bool = true, keepsRowOrder: Bool = true) {
        self.storesNUL = storesNUL
        self.keepsRowOrder = keepsRowOrder
        seed = SeededGenerator.seedOfThisRun()
        rng = SeededGenerator(seed: seed)
    }

    public func makeItem(serial: Int) -> DiffItem {
        let o = DiffItem()
        o.uid = DiffPools.uid(serial)
        o.serial = serial
        randomize(o)
        return o
    }

    /// Random values for every property but `uid` and `serial`.
    public func randomize(_ o: DiffItem) {
        o.rank = rng.int(-5...20)
        o.level = rng.int(0...9)
        o.score = DiffPools.nearScore(&rng)
        o.bonus = rng.chance(0.35) ? nil : DiffPools.nearScore(&rng)
        let names = storesNUL ? DiffPools.names : DiffPools.namesWithoutNUL
        o.name = rng.pick(names)
        o.title = rng.pick(DiffPools.titles)
        o.nickname = rng.chance(0.4) ? nil : rng.pick(names)
        o.flag = rng.chance(0.5)
        o.created = rng.pick(DiffPools.dates)
        o.tags = rng.some(DiffPools.tags, max: 3)
        o.flavor = rng.pick(DiffFlavor.allCases)
    }

    func randomCase() -> DiffCase {
        if rng.chance(0.55) { return rng.pick(DiffTemplates.all)(&rng) }
        let (text, build) = DiffAtoms.tree(&rng, depth: 0)
        return DiffCase(text: text, predicate: Predicate<DiffItem>({ v in build(v) }))
    }

    func randomSort() -> (sort: [SortDescriptor<DiffItem>], text: String) {
        let options: [(SortOrder) -> (SortDescriptor<DiffItem>, String)] = [
            { (SortDescriptor(\DiffItem.rank, order: $0), "rank") },
            { (SortDescriptor(\DiffItem.created, order: $0), "created") },
            { (SortDescriptor(\DiffItem.score, order: $0), "score") },
            { (SortDescriptor(\DiffItem.name, order: $0), "name") },
            { (SortDescriptor(\DiffItem.title, order: $0), "title") },
            { (SortDescriptor(\DiffItem.level, order: $0), "level") },
            { (SortDescriptor(\DiffItem.bonus, order: $0), "bonus") },
            { (SortDescriptor(\DiffItem.nickname, order: $0), "nickname") },
            { (SortDescriptor(\DiffItem.serial, order: $0), "serial") },
        ]
        let count = rng.pick([0, 1, 1, 1, 2, 2])
        var sort: [SortDescriptor<DiffItem>] = []
        var text: [String] = []
        for _ in 0..<count {
            let order: SortOrder = rng.chance(0.5) ? .forward : .reverse
            let (d, name) = rng.pick(options)(order)
            sort.append(d)
            text.append("\(name)\(order == .reverse ? " desc" : "")")
        }
        return (sort, text.joined(separator: ", "))
    }

    /// The whole differential run on one store: `objects` objects saved through a container
    /// from `first` (let go after); then `counts.stored` cases on a container from `reopen` with nothing
    /// pending; `counts.pending` cases on a context holding unsaved inserts, changes and deletes
    /// (a batch delete among them), with and without `includePendingChanges`; and, those changes
    /// saved, `counts.afterSave` cases on another context. Failures are collected in `failures`.
    public func runPhases(first: () throws -> ModelContainer, reopen: () throws -> ModelContainer, objects: Int,
                          counts: (stored: Int, pending: Int, afterSave: Int)) throws {
        // Seed the store, then close it.
        let seeded = (0..<objects).map { makeItem(serial: $0) }
        var saved = seeded.map { $0.copy() }   // what the store holds, as plain objects
        do {
            let context = ModelContext(try first())
            for o in seeded { context.insert(o) }
            try context.save()
        }

        // Phase A: a reopened store, a fresh context, nothing pending.
        let container = try reopen()
        do {
            let context = ModelContext(container)
            let stored = try context.fetchCount(FetchDescriptor<DiffItem>())
            if stored != objects { failures.append("seed \(seed): the reopened store counts \(stored) objects, not the \(objects) saved") }
            try run(context, count: counts.stored, phase: "stored", reference: saved)
        }

        // Phase B: a context with unsaved inserts, changes and deletes.
        let context = ModelContext(container)
        var live = try context.fetch(FetchDescriptor<DiffItem>(sortBy: [SortDescriptor(\.serial)]))
        if live.map(\.uid) != saved.map(\.uid) { failures.append("seed \(seed): the objects fetched by serial are not the objects saved") }
        // A batch delete of the stored rows that match (all registered here), then single deletes.
        try context.delete(model: DiffItem.self, where: #Predicate { $0.level == 9 && $0.flag })
        live.removeAll { $0.level == 9 && $0.flag }
        for _ in 0..<6 {
            let victim = rng.pick(live)
            context.delete(victim)
            live.removeAll { $0 === victim }
        }
        for _ in 0..<12 { randomize(rng.pick(live)) }
        var serial = objects
        for _ in 0..<12 {
            let o = makeItem(serial: serial)
            serial += 1
            context.insert(o)
            live.append(o)
        }
        // An insert deleted again before the save.
        let ghost = makeItem(serial: serial)
        context.insert(ghost)
        context.delete(ghost)
        if !context.hasChanges { failures.append("seed \(seed): the context with unsaved changes says it has none") }
        try run(context, count: counts.pending, phase: "pending", reference: saved, pendingReference: live)

        // Phase C: the same changes saved, and read back by another context.
        try context.save()
        saved = live.map { $0.copy() }
        let other = ModelContext(container)
        try run(other, count: counts.afterSave, phase: "after-save", reference: saved)
    }

    /// Runs `count` random cases against `context`, comparing with Foundation over `reference`
    /// (the objects in row order). `pendingReference`, when given, is the reference for
    /// `includePendingChanges = true` and `reference` the one for `false`.
    public func run(_ context: ModelContext, count: Int, phase: String, reference: [DiffItem], pendingReference: [DiffItem]? = nil) throws {
        for i in 0..<count {
            guard failures.count < 8 else { return }
            let c = randomCase()
            var (sort, sortText) = randomSort()
            if !keepsRowOrder {
                sort.append(SortDescriptor(\DiffItem.serial))
                sortText += sortText.isEmpty ? "serial" : ", serial"
            }
            var descriptor = FetchDescriptor<DiffItem>(predicate: c.predicate, sortBy: sort)
            if rng.chance(0.4) { descriptor.fetchLimit = rng.int(1...30) }
            if rng.chance(0.3) { descriptor.fetchOffset = rng.int(0...40) }
            var array = reference
            if let pendingReference {
                descriptor.includePendingChanges = rng.chance(0.6)
                if descriptor.includePendingChanges { array = pendingReference }
            }
            cases += 1

            // Foundation's answer.
            var expected = try array.filter { try c.predicate.evaluate($0) }
            expected = expected.sorted(using: sort)
            let start = min(descriptor.fetchOffset ?? 0, expected.count)
            let end = descriptor.fetchLimit.map { min(expected.count, start + $0) } ?? expected.count
            let want = expected[start..<end].map(\.uid)

            // Strata's answers.
            let got = try context.fetch(descriptor)
            let gotIDs = got.map(\.uid)
            let count = try context.fetchCount(descriptor)
            // fetchIdentifiers makes the same plan as fetch; checking every third case keeps the test fast.
            let identifiers = i % 3 == 0 ? try context.fetchIdentifiers(descriptor) : got.map(\.persistentModelID)
            let describe = "seed \(seed) \(phase) case \(i): predicate { \(c.text) } sort [\(sortText)] limit \(descriptor.fetchLimit.map(String.init) ?? "-") offset \(descriptor.fetchOffset.map(String.init) ?? "-") pending \(descriptor.includePendingChanges)"
            if gotIDs != want {
                let serial = Dictionary(array.map { ($0.uid, $0.serial) }, uniquingKeysWith: { a, _ in a })
                failures.append("\(describe)\n  expected serials \(want.map { serial[$0] ?? -1 })\n  got serials      \(gotIDs.map { serial[$0] ?? -1 })")
            } else if count != want.count {
                failures.append("\(describe)\n  fetchCount \(count), expected \(want.count)")
            } else if identifiers != got.map(\.persistentModelID) {
                failures.append("\(describe)\n  fetchIdentifiers \(identifiers) differ from the fetched objects' \(got.map(\.persistentModelID))")
            }
        }
    }
}

