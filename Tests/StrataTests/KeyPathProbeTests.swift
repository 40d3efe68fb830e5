// The key-path probe (KeyPathProber) maps a macro-free model's key paths to its properties: a
// predicate or a sort names properties by key path, and a key path the probe cannot confirm is
// evaluated on objects (and a server store never gets it). It confirms a key path by writing two
// marker values into the property and reading them back, so that a computed property that reads
// a stored one is never taken for it. These hold which value types have markers.
import Foundation
import Testing
@testable import Strata

@Suite struct KeyPathProbeTests {
    enum Listed: String, Codable, CaseIterable { case first, second, third }
    enum Unlisted: String, Codable { case first, second }

    final class Probed: PersistentModel {
        @Attribute var count: Int = 0
        @Attribute var name: String = ""
        @Attribute var codes: Set<Int> = []
        @Attribute var names: Set<String> = []
        @Attribute var scores: [String: Int] = [:]
        @Attribute var tags: [String] = []
        @Attribute var listed: Listed = .first
        @Attribute var maybeListed: Listed? = nil
        @Attribute var unlisted: Unlisted = .first
        init() {}

        /// Computed from stored properties, of their types: never theirs.
        var shiftedCodes: Set<Int> { Set(codes.map { $0 + 1 }) }
        var upperNames: Set<String> { Set(names.map { $0.uppercased() }) }
        var nextListed: Listed { listed == .first ? .second : .first }
        var doubledScores: [String: Int] { scores.mapValues { $0 * 2 } }
        /// The stored value for the first two cases, another for the third.
        var folded: Listed {
            let value = listed  // read once
            return value == .third ? .first : value
        }
        /// The stored name, trimmed or lowercased (unchanged for most names).
        var trimmedName: String {
            let value = name
            return value.trimmingCharacters(in: .whitespaces)
        }
        var lowerName: String {
            let value = name
            return value.lowercased()
        }
    }

    private func entity() throws -> Schema.Entity {
        let schema = Schema([Probed.self])
        return try #require(schema.entity(for: Probed.self))
    }

    @Test func setsDictionariesAndCaseIterableEnumsAreFound() throws {
        let entity = try entity()
        #expect(entity.propertyName(for: \Probed.count) == "count")
        #expect(entity.propertyName(for: \Probed.codes) == "codes")
        #expect(entity.propertyName(for: \Probed.names) == "names")
        #expect(entity.propertyName(for: \Probed.scores) == "scores")
        #expect(entity.propertyName(for: \Probed.tags) == "tags")
        #expect(entity.propertyName(for: \Probed.listed) == "listed")
        #expect(entity.propertyName(for: \Probed.maybeListed) == "maybeListed")
    }

    @Test func computedPropertiesOfTheSameTypesAreNotTakenForStoredOnes() throws {
        let entity = try entity()
        #expect(entity.propertyName(for: \Probed.shiftedCodes) == nil)
        #expect(entity.propertyName(for: \Probed.upperNames) == nil)
        #expect(entity.propertyName(for: \Probed.nextListed) == nil)
        #expect(entity.propertyName(for: \Probed.doubledScores) == nil)
        // Each reads its attribute once and gives most values back unchanged: the probe's third
        // string marker and an enum's every case tell them apart (before 2026-12-04 the first
        // two markers did not, and predicates on them were answered as on the attribute).
        #expect(entity.propertyName(for: \Probed.folded) == nil)
        #expect(entity.propertyName(for: \Probed.trimmedName) == nil)
        #expect(entity.propertyName(for: \Probed.lowerName) == nil)
    }

    /// An enum that is not `CaseIterable` has no values the probe can make: its key path is not
    /// found (Docs/PortingFromSwiftData.md, "Without macros"), and predicates on it are evaluated on objects.
    /// `@Model` lists its key paths, so this is a limit of macro-free models only.
    @Test func anEnumWithoutItsCasesIsNotFound() throws {
        #expect(try entity().propertyName(for: \Probed.unlisted) == nil)
    }

    /// The answers are right either way: on the found ones (compiled to record tests) and on
    /// the others (on objects).
    @Test func predicatesOnEachAnswerRight() throws {
        let container = try ModelContainer(for: Probed.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        for i in 0..<6 {
            let p = Probed()
            p.count = i
            p.name = ["abc", "ABC", " abc ", "Abc", "abc", "x"][i]
            p.codes = Set(0..<i)
            p.names = i % 2 == 0 ? ["a"] : ["b"]
            p.scores = i % 3 == 0 ? [:] : ["k": i]
            p.listed = Listed.allCases[i % 3]
            p.maybeListed = i % 2 == 0 ? nil : .third
            p.unlisted = i % 2 == 0 ? .first : .second
            context.insert(p)
        }
        try context.save()
        let reader = ModelContext(container)
        func counts(_ predicate: Predicate<Probed>) throws -> [Int] {
            try reader.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.count)])).map(\.count)
        }
        let two = 2, a = "a", listed = Listed.second, third = Listed.third, unlisted = Unlisted.second
        #expect(try counts(#Predicate { $0.codes.contains(two) }) == [3, 4, 5])
        #expect(try counts(#Predicate { $0.codes.isEmpty }) == [0])
        #expect(try counts(#Predicate { $0.names.contains(a) }) == [0, 2, 4])
        #expect(try counts(#Predicate { $0.scores.isEmpty }) == [0, 3])
        #expect(try counts(#Predicate { $0.listed == listed }) == [1, 4])
        #expect(try counts(#Predicate { $0.maybeListed == third }) == [1, 3, 5])
        #expect(try counts(#Predicate { $0.unlisted == unlisted }) == [1, 3, 5])
        #expect(try counts(#Predicate { $0.shiftedCodes.contains(two) }) == [2, 3, 4, 5])
        #expect(try counts(#Predicate { $0.folded == third }) == [], "folded is never third")
        let abc = "abc"
        #expect(try counts(#Predicate { $0.lowerName == abc }) == [0, 1, 3, 4])
        #expect(try counts(#Predicate { $0.trimmedName == abc }) == [0, 2, 4])
        #expect(try counts(#Predicate { $0.name == abc }) == [0, 4])
        // More shapes on the found ones, against Foundation's own answer on the saved objects.
        let saved = try reader.fetch(FetchDescriptor<Probed>())
        let k = "k", none = Set<Int>(), three = 3
        let shapes: [Predicate<Probed>] = [
            #Predicate { !$0.codes.contains(two) }, #Predicate { $0.codes.count > two }, #Predicate { $0.codes == none },
            #Predicate { $0.codes.contains(two) && !$0.names.contains(a) }, #Predicate { $0.scores[k] == three },
            #Predicate { $0.scores[k] != nil }, #Predicate { $0.scores.count == 1 }, #Predicate { $0.listed != listed },
            #Predicate { $0.maybeListed == nil || $0.listed == third },
        ]
        for (i, shape) in shapes.enumerated() {
            let expected = try saved.filter { try shape.evaluate($0) }.map(\.count).sorted()
            #expect(try counts(shape) == expected, "shape \(i)")
        }
    }
}
